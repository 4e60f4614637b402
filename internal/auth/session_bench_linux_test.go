package auth_test

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/rawtcp"
)

// proxyDial is the proxy's own dial for the session server on Linux: raw
// sockets on a Poller (no entersyscall, so no sysmon wake-ups per call).
func proxyDial(b *testing.B) dialFunc {
	p, err := rawtcp.NewPoller()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return nil, err
		}
		return rawtcp.Dial(ctx, p, ap, time.Time{})
	}
}
