package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
	"github.com/infrarust-go/infrarust/internal/proxy/ratelimit"
)

// defaultProxyHeaderTimeout bounds how long a trusted peer may take to send its PROXY header.
const defaultProxyHeaderTimeout = 5 * time.Second

var errNoAddress = errors.New("server has no address")

// conn is what the pipeline learns about one client connection as it goes.
type conn struct {
	c      net.Conn
	br     *bufio.Reader
	st     *state
	client netip.AddrPort // the real client (after PROXY protocol)
	ip     netip.Addr
	lease  balance.Lease // the login's pick; see connectBackend

	perIPHeld bool // a max_connections_per_ip slot is held
	detached  bool // a session goroutine owns the connection now and will finish it
}

// releaseReader returns the pooled reader once nothing more is read through it.
func (cn *conn) releaseReader() {
	if cn.br != nil {
		putReader(cn.br)
		cn.br = nil
	}
}

// finish releases everything a connection holds, exactly once, whichever goroutine
// ends it: the pipeline's, or the session's it was handed to.
func (p *Proxy) finish(cn *conn) {
	cn.releaseReader()
	if cn.perIPHeld {
		p.perIP.release(cn.ip)
	}
	p.active.Add(-1)
	p.met.ConnActive(-1)
	cn.c.Close()
	p.untrack(cn.c)
	p.releasePermit()
	p.wg.Done()
}

// detach runs a forwarded session on a fresh goroutine and lets the pipeline's
// goroutine end: the deep stack the handshake grew is freed, so an idle player costs
// two small stacks (one per direction) rather than a large one and a small one.
func (p *Proxy) detach(cn *conn, session func()) {
	cn.detached = true
	go func() {
		defer p.finish(cn)
		session()
	}()
}

// handle runs the common pipeline for one accepted connection, in its own goroutine.
func (p *Proxy) handle(c net.Conn) {
	p.active.Add(1)
	p.met.ConnActive(1)
	st := p.state.Load()
	cfg := st.cfg
	br := getReader(c)
	cn := &conn{c: c, br: br, st: st}
	defer func() {
		if !cn.detached {
			p.finish(cn)
		}
	}()
	cn.client = addrPort(c.RemoteAddr())

	// PROXY protocol: a header is required from trusted peers and refused from others.
	if cfg.ReceiveProxyProtocol {
		_ = c.SetReadDeadline(time.Now().Add(p.proxyHeaderTimeout))
		real, err := p.readProxyHeader(cn)
		if err != nil {
			p.reject(cn, "proxy_protocol", err.Error())
			return
		}
		cn.client = real
	}
	cn.ip = cn.client.Addr().Unmap()

	if !st.filter.Allowed(cn.ip) {
		p.reject(cn, "ip_filter", "global ip_filter")
		return
	}
	if n := cfg.MaxConnectionsPerIP; n > 0 {
		if !p.perIP.acquire(cn.ip, n) {
			p.reject(cn, "max_connections_per_ip", "too many connections from this IP")
			return
		}
		cn.perIPHeld = true
	}

	_ = c.SetReadDeadline(time.Now().Add(cfg.HandshakeTimeout.D()))
	first, err := br.Peek(1)
	if err != nil {
		p.debugClose(cn, "no handshake", err)
		return
	}
	if mc.IsLegacyFirstByte(first[0]) {
		p.serveLegacy(cn, first[0])
		return
	}
	if err := precheckHandshake(br); err != nil {
		p.reject(cn, "handshake", err.Error())
		return
	}
	hs, rawHS, err := mc.ReadHandshake(br)
	if err != nil {
		p.reject(cn, "handshake", err.Error())
		return
	}
	host := NormalizeHost(hs.ServerAddress)
	intent := ratelimit.Login
	if hs.NextState == mc.StateStatus {
		intent = ratelimit.Status
	}
	// IP bans: a status ping from a banned IP is closed here (no MOTD); a banned login
	// goes on to the login handler, which kicks it with the reason. Either way it is
	// rejected, so it spends no rate-limit tokens (an IPv6 ban would otherwise drain
	// the bucket its whole /64 shares).
	ipBanned := false
	if p.opts.Bans != nil {
		_, ipBanned = p.opts.Bans.CheckIP(cn.ip, p.now())
	}
	if ipBanned && intent == ratelimit.Status {
		p.reject(cn, "ban", "banned IP asked for status")
		return
	}

	// Routing is a map lookup; the per-server IP filter runs before the limiter so a
	// filtered connection spends no tokens.
	var srv *server
	if id, ok := st.router.lookup(host); ok {
		srv = st.servers[id]
	}
	if srv != nil && !srv.filter.Allowed(cn.ip) {
		p.reject(cn, "ip_filter", "ip_filter of server "+srv.id)
		return
	}

	if cfg.RateLimit.Enabled && !ipBanned && !p.limiter.Allow(cn.ip, intent, p.now()) {
		p.met.ConnRejected("rate_limit")
		p.rejected.Add(1)
		p.log.Debug("rate limited", "client", cn.client, "intent", intentName(hs.NextState))
		if intent == ratelimit.Login {
			_, _ = c.Write(mc.EncodeLoginDisconnect("Rate limit exceeded"))
		}
		return
	}

	if srv == nil && cfg.UnknownDomainBehavior == "drop" {
		p.reject(cn, "unknown_domain", "no server for "+host)
		return
	}

	switch hs.NextState {
	case mc.StateStatus:
		p.serveStatus(c, br, hs, srv, st, cn.client)
	default:
		p.serveLogin(cn, hs, rawHS, host, srv)
	}
}

func intentName(next int32) string {
	switch next {
	case mc.StateStatus:
		return "status"
	case mc.StateTransfer:
		return "transfer"
	}
	return "login"
}

// reject closes a connection the pipeline refused: one debug line, one metric.
func (p *Proxy) reject(cn *conn, reason, detail string) {
	p.rejected.Add(1)
	p.met.ConnRejected(reason)
	p.log.Debug("connection rejected", "client", cn.client, "reason", reason, "detail", detail)
}

func (p *Proxy) debugClose(cn *conn, what string, err error) {
	p.log.Debug("connection closed", "client", cn.client, "why", what, "err", err)
}

func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// backendDialer leaves keepalive to setKeepalive. Go already turns TCP_NODELAY on
// for every TCP connection, which Minecraft's many small packets need.
var backendDialer = net.Dialer{KeepAlive: -1}

// setKeepalive applies [keepalive] to a session's connection: dead peers are found
// by TCP keepalive, never by per-read deadlines on the forwarding path.
func setKeepalive(c net.Conn, ka config.Keepalive) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	_ = tc.SetKeepAliveConfig(net.KeepAliveConfig{
		Enable:   ka.Time > 0,
		Idle:     ka.Time.D(),
		Interval: ka.Interval.D(),
		Count:    ka.Retries,
	})
}

// maxHandshakeFrame is the largest a valid handshake frame can be: packet id,
// protocol VarInt, a 255-character address (4 bytes each) with its length, port, state.
const maxHandshakeFrame = 1 + 5 + 3 + 255*4 + 2 + 5

// precheckHandshake looks at the bytes already received and refuses, without waiting
// for the rest, a frame that cannot be a handshake (an HTTP request, a TLS hello, a
// declared length no handshake needs). A short read just defers to ReadHandshake.
func precheckHandshake(br *bufio.Reader) error {
	b, _ := br.Peek(min(br.Buffered(), 6))
	var length, shift int
	for i, c := range b {
		length |= int(c&0x7f) << shift
		shift += 7
		if c&0x80 != 0 {
			if i == 4 {
				return mc.ErrVarIntTooLong
			}
			continue
		}
		if length < 1 || length > maxHandshakeFrame {
			return fmt.Errorf("declared handshake length %d: %w", length, mc.ErrMalformed)
		}
		if i+1 < len(b) && b[i+1] != 0x00 {
			return fmt.Errorf("first packet id 0x%02x is not a handshake: %w", b[i+1], mc.ErrMalformed)
		}
		return nil
	}
	return nil
}
