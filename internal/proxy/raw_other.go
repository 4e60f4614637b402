//go:build !linux

package proxy

import (
	"bufio"
	"context"
	"log/slog"
	"net"

	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// frameConn frames an intercepted side's connection; lendBuffers lets its Conn
// hold no read buffer while the peer is silent, where the connection can be
// waited on without reading; parks says its reader can park (mc.Parker).
func frameConn(br *bufio.Reader, nc net.Conn, z *mc.Zlib) *mc.Conn { return mc.NewConn(br, nc, z) }

func lendBuffers(c *mc.Conn, nc net.Conn) {
	if w, ok := nc.(mc.Waiter); ok {
		c.LendBuffers(w)
	}
}

func parks(nc net.Conn) bool {
	_, ok := nc.(mc.Parker)
	return ok
}

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
