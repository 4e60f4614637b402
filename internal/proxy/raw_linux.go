package proxy

import (
	"context"
	"net"
	"net/netip"

	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/rawtcp"
)

// With the epoll forwarder, players' and backends' sockets are rawtcp Conns: they
// enter Go's netpoller only if a read or write must wait, and reach the forwarder
// as the same fd (no dup, no epoll_ctl DEL, no close). docs/architecture.md says why.
func useRawSockets(fwd forward.Forwarder) bool { return forward.TakesFDs(fwd) }

// listener is what Serve accepts from: with raw sockets on, a TCP listener's socket
// is taken over by a rawtcp.Listener (ln is closed; closing the result stops Serve).
func (p *Proxy) listener(ln net.Listener) net.Listener {
	tl, ok := ln.(*net.TCPListener)
	if !p.raw || !ok {
		return ln
	}
	rl, err := rawtcp.NewListener(tl)
	if err != nil {
		p.log.Warn("raw sockets unavailable; accepting through Go's net", "err", err)
		return ln
	}
	return rl
}

// rawDialer dials backends named by IP address with rawtcp, and the rest (host
// names, which need resolving) with Go's net.
type rawDialer struct{ named *net.Dialer }

func (d rawDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || network != "tcp" {
		return d.named.DialContext(ctx, network, address)
	}
	c, err := rawtcp.Dial(ctx, ap)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func newRawDialer() Dialer { return rawDialer{named: &net.Dialer{KeepAlive: -1}} }
