//go:build !linux

package proxy

import (
	"context"
	"log/slog"
	"net"

	"github.com/infrarust-go/infrarust/internal/forward"
)

// sockets: raw sockets (internal/rawtcp) exist on Linux only; elsewhere the proxy
// uses Go's net.
type sockets struct{}

func newSockets(forward.Forwarder) (sockets, error) { return sockets{}, nil }

func (sockets) listener(ln net.Listener, _ *slog.Logger) net.Listener { return ln }

func (sockets) dialer() Dialer { return defaultDialer() }

func (sockets) close() {}

func (sockets) sessionDial() func(ctx context.Context, network, address string) (net.Conn, error) {
	return nil
}
