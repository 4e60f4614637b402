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

// frameConn, lendBuffers and parks: without raw sockets, the general ones.
func frameConn(br *bufio.Reader, nc net.Conn, z *mc.Zlib) *mc.Conn { return frameAny(br, nc, z) }

func lendBuffers(c *mc.Conn, nc net.Conn) { lendAny(c, nc) }

func parks(nc net.Conn) bool { return parksAny(nc) }

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

// raw reports whether players' sockets are raw (never here).
func (sockets) raw() bool { return false }
