package proxy

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/rawtcp"
)

// frameConn frames an intercepted side's connection; lendBuffers lets its Conn
// hold no read buffer while the peer is silent, where the connection can be
// waited on without reading; parks says its reader can park (session.Parker). A
// raw socket goes through mc's generic constructors: asked as interfaces,
// every login looked interface tables up at run time several times, each a
// miss on a cold cache.
func frameConn(br *bufio.Reader, nc net.Conn, z *mc.Zlib) *mc.Conn {
	if rc, ok := nc.(*rawtcp.Conn); ok {
		return mc.NewSocketConn(br, rc, z)
	}
	return frameAny(br, nc, z)
}

func lendBuffers(c *mc.Conn, nc net.Conn) {
	if rc, ok := nc.(*rawtcp.Conn); ok {
		mc.LendSocket(c, rc)
		return
	}
	lendAny(c, nc)
}

func parks(nc net.Conn) bool {
	_, raw := nc.(*rawtcp.Conn)
	return raw || parksAny(nc)
}

// sockets is how the proxy holds players' and backends' sockets. With the epoll
// forwarder they are rawtcp Conns: bare non-blocking fds that wait, when a call must,
// in a rawtcp.Poller instead of Go's netpoller, and reach the forwarder as the same
// fd (no dup, no epoll_ctl DEL, no close). docs/architecture.md says why.
type sockets struct {
	poller *rawtcp.Poller // nil: Go's net sockets (the goroutine forwarder splices those)
}

// raw reports whether players' sockets are raw (the epoll forwarder's).
func (s sockets) raw() bool { return s.poller != nil }

func newSockets(fwd forward.Forwarder) (sockets, error) {
	if !forward.TakesFDs(fwd) {
		return sockets{}, nil
	}
	p, err := rawtcp.NewPoller()
	if err != nil {
		return sockets{}, err
	}
	return sockets{poller: p}, nil
}

// listener is what Serve accepts from: with raw sockets on, a TCP listener's socket
// is taken over by a rawtcp.Listener (ln is closed; closing the result stops Serve).
func (s sockets) listener(ln net.Listener, log *slog.Logger) net.Listener {
	tl, ok := ln.(*net.TCPListener)
	if s.poller == nil || !ok {
		return ln
	}
	rl, err := rawtcp.NewListener(tl, s.poller)
	if err != nil {
		log.Warn("raw sockets unavailable; accepting through Go's net", "err", err)
		return ln
	}
	return rl
}

// dialer is the default backend dialer: rawtcp, for host names too (resolved by
// Go's resolver); Go's net for networks other than "tcp".
func (s sockets) dialer() Dialer {
	if s.poller == nil {
		return defaultDialer()
	}
	return rawDialer{poller: s.poller, named: defaultDialer()}
}

// sessionDial connects to the session server with raw sockets, so that its
// reads and writes are raw system calls as a player's are: Go's net enters
// each through entersyscall, which wakes the runtime's sysmon thread, and sysmon
// then polls every 20 µs for a millisecond or more (a client_only login on a
// quiet proxy paid a dozen such wake-ups).
func (s sockets) sessionDial() func(ctx context.Context, network, address string) (net.Conn, error) {
	if s.poller == nil {
		return nil
	}
	return s.dialer().DialContext
}

// shareOfTime is the deadline of one of n addresses still to try: an equal
// share of what is left of ctx's, as Go's own dialer gives each, so one
// address that swallows its packets leaves time for the next.
func shareOfTime(ctx context.Context, n int) time.Time {
	deadline, ok := ctx.Deadline()
	if !ok || n <= 1 {
		return time.Time{} // ctx's own deadline, if any, still ends the dial
	}
	return time.Now().Add(time.Until(deadline) / time.Duration(n))
}

// close stops the Poller once no connection is left to wait in it.
func (s sockets) close() {
	if s.poller != nil {
		_ = s.poller.Close()
	}
}

type rawDialer struct {
	poller *rawtcp.Poller
	named  Dialer
}

func (d rawDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return d.DialDeadline(ctx, network, address, time.Time{})
}

// DialDeadline is DialContext bounded by a time instead of a context's timer: a
// connect that completes at once (loopback, a fast LAN) then arms no timer at all.
func (d rawDialer) DialDeadline(ctx context.Context, network, address string, deadline time.Time) (net.Conn, error) {
	if network != "tcp" {
		if !deadline.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
		}
		return d.named.DialContext(ctx, network, address)
	}
	if ap, err := netip.ParseAddrPort(address); err == nil {
		c, err := rawtcp.Dial(ctx, d.poller, ap, deadline)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return d.dialName(ctx, address, deadline)
}

// dialName resolves address's host name (Go's resolver) and dials its
// addresses in turn, each with a share of the time left (shareOfTime), as Go's
// dialer does but without racing the two address families.
func (d rawDialer) dialName(ctx context.Context, address string, deadline time.Time) (net.Conn, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	pn, err := net.DefaultResolver.LookupPort(ctx, "tcp", port)
	if err != nil {
		return nil, err
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	first := error(&net.DNSError{Err: "no addresses", Name: host, IsNotFound: true})
	for i, ip := range ips {
		c, err := rawtcp.Dial(ctx, d.poller, netip.AddrPortFrom(ip.Unmap(), uint16(pn)), shareOfTime(ctx, len(ips)-i))
		if err == nil {
			return c, nil
		}
		if i == 0 {
			first = err
		}
	}
	return nil, first
}
