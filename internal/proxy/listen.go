package proxy

import (
	"context"
	"net"

	"github.com/infrarust-go/infrarust/internal/config"
)

// Listen opens the players' listener. Where the kernel lets accepted sockets
// inherit the listener's TCP keepalive settings (Linux), [keepalive] is set once
// here rather than with four setsockopt calls per session; elsewhere sessions set
// it themselves. Go's own per-accept keepalive is off either way. On Linux the
// listener also defers accept until a connection's first bytes arrive
// (listen_linux.go).
func Listen(ctx context.Context, bind string, ka config.Keepalive) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1, Control: listenerControl(ka)}
	return lc.Listen(ctx, "tcp", bind)
}
