package proxy

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/metrics"
)

// passthrough is the handler of passthrough, zero_copy and server_only servers:
// it relays the client's own handshake and login to a backend it picks, then
// forwards bytes untouched (splice on Linux).
type passthrough struct{}

func (passthrough) serveLogin(p *moves, cn *conn) {
	target, text, ok := p.players.acceptLogin(cn, passthroughFamily)
	if !ok {
		p.door.loginFailed(cn, "hook", "Login denied")
		p.door.kick(cn, text)
		return
	}
	// The buffered bytes belong to whichever backend is chosen; the reader is given
	// back once they have been copied out.
	buffered := append([]byte(nil), cn.buffered()...)
	cn.releaseReader()
	end := func(o metrics.LoginOutcome, reason, detail, text string) {
		p.door.loginOutcome(cn, o)
		p.door.loginFailed(cn, reason, detail)
		p.door.kick(cn, text)
	}
	var backend net.Conn
	var pending, first []byte
	_, ok = p.loginRounds(cn, target, loginMode{fam: passthroughFamily, end: end,
		try: func(t *server) error {
			t, text, ok := p.players.preConnect(cn, t, "", passthroughFamily)
			if !ok {
				return &handlerRefusal{text: text}
			}
			cn.srv = t
			if r := p.admitTo(cn.entrant(), t, pass{}); r != nil {
				return r
			}
			var err error
			backend, pending, first, err = p.passthroughConnect(cn, buffered)
			return err
		}})
	if !ok {
		return
	}
	p.players.connected(cn, cn.srv, cn.lease.Address(), "")
	p.passthroughSession(cn, backend, pending, first)
}

// passthroughConnect wakes the chosen server and connects the player to one of
// its addresses: the client's handshake (rewritten for this server) and login
// start go out with what the client sent after them, and a modern backend's
// first answer is read so a "server is full" kick passes the player to the next
// replica (a legacy one is only written to).
func (p *moves) passthroughConnect(cn *conn, buffered []byte) (backend net.Conn, pending, first []byte, err error) {
	srv := cn.srv
	if err = p.wake(cn); err != nil {
		return nil, nil, nil, &wakeFailed{server: srv.id, err: err}
	}
	pending = relayBytes(cn, buffered)
	login := func(b net.Conn, deadline time.Time) (string, error) {
		_ = b.SetDeadline(deadline)
		out := pending
		if pre := preamble(srv, cn.client, b); pre != nil {
			out = append(pre, pending...)
		}
		if _, err := b.Write(out); err != nil {
			return "", err
		}
		if cn.legacy == legacyLogin {
			return "", nil
		}
		var full string
		var err error
		first, full, err = readFirstLoginPacket(b, srv)
		return full, err
	}
	backend, err = p.connectBackend(cn, login)
	if err != nil {
		return nil, nil, nil, err
	}
	return backend, pending, first, nil
}

// passthroughSession hands the player's first backend answer over and forwards
// bytes until either side closes.
func (p *moves) passthroughSession(cn *conn, backend net.Conn, pending, first []byte) {
	_ = cn.c.SetReadDeadline(time.Time{})
	if len(first) > 0 {
		if _, err := cn.c.Write(first); err != nil {
			p.untrack(backend)
			backend.Close()
			cn.lease.Release(p.now())
			return
		}
	}
	up0, down0 := int64(len(pending)), int64(len(first))
	setKeepalive(cn.c, cn.st.cfg.Keepalive)
	if !forward.Takes(cn.c) || !forward.Takes(backend) {
		// Not plain TCP (a test's pipe): forward on a goroutine of its own.
		p.door.detach(cn, func() {
			p.session(cn, backend, func() (int64, int64) {
				up, down := copyBoth(cn.c, backend)
				return up + up0, down + down0
			})
		})
		return
	}
	// The forwarder owns the two sockets from here; the admission's goroutine ends
	// and, with the epoll forwarder, an idle player costs no goroutine at all.
	pl := newPlayer(cn, p.now())
	leave := p.players.welcome(cn, pl, cn.lease.Address())
	cn.detached = true
	end := p.fwd.Forward(cn.c, backend, func(r forward.Result) {
		p.door.ending(func() {
			p.untrack(backend)
			cn.lease.Release(p.now())
			leave(r.Up+up0, r.Down+down0)
			p.door.finish(cn)
		})
	})
	pl.setEnd(func(string) { end() })
}

// relayBytes is what the backend receives before forwarding starts: the client's
// handshake (rewritten if asked), its login start and whatever it already sent
// after them.
func relayBytes(cn *conn, buffered []byte) []byte {
	hs := firstPacketForBackend(cn)
	out := make([]byte, 0, len(hs)+len(cn.rawLogin)+len(buffered))
	out = append(out, hs...)
	out = append(out, cn.rawLogin...)
	return append(out, buffered...)
}

// firstPacketForBackend is the client's first packet as the backend must see it:
// verbatim, or re-encoded with the host domain_rewrite asks for (a modern
// handshake, a 1.6 ping's MC|PingHost, a legacy login's host field).
func firstPacketForBackend(cn *conn) []byte {
	rw := cn.srv.cfg.DomainRewrite
	if !rw.Rewrites() {
		return cn.raw
	}
	switch cn.legacy {
	case legacyPing:
		if cn.ping.Form != mc.Legacy16 {
			return cn.raw // the older forms name no host
		}
		h, port := backendHost(cn.srv.cfg, mc.Handshake{ServerAddress: cn.ping.Host, ServerPort: uint16(cn.ping.Port)})
		ping := cn.ping
		ping.Host, ping.Port = h, int32(port)
		return mc.EncodeLegacyPing(ping)
	case legacyLogin:
		h, port := backendHost(cn.srv.cfg, mc.Handshake{ServerAddress: cn.legacyLogin.Host, ServerPort: uint16(cn.legacyLogin.Port)})
		ll := cn.legacyLogin
		ll.Host, ll.Port = h, int32(port)
		return mc.EncodeLegacyLogin(ll)
	}
	h, port := backendHost(cn.srv.cfg, cn.hs)
	hs := cn.hs
	hs.ServerAddress, hs.ServerPort = h, port
	return hs.Encode()
}

// readFirstLoginPacket reads the backend's first login packet. It returns the
// bytes to pass to the client, or the kick text when the backend is full.
func readFirstLoginPacket(backend net.Conn, srv *server) ([]byte, string, error) {
	bbr := getReader(backend)
	defer putReader(bbr)
	f, err := mc.ReadFrame(bbr, mc.MaxFrameSize)
	if err != nil {
		return nil, "", fmt.Errorf("no first login packet: %w", err)
	}
	if text, ok := mc.ParseLoginDisconnect(f); ok && matchesAny(text, srv.full) {
		return nil, text, nil
	}
	first := make([]byte, 0, len(f.Raw)+bbr.Buffered())
	first = append(first, f.Raw...)
	rest, _ := bbr.Peek(bbr.Buffered())
	return append(first, rest...), "", nil
}

func matchesAny(text string, patterns []string) bool {
	t := strings.ToLower(text)
	for _, p := range patterns {
		if strings.Contains(t, p) {
			return true
		}
	}
	return false
}

// session forwards a logged-in player's bytes until either side closes, with the
// accounting of their visit around it.
func (p *moves) session(cn *conn, backend net.Conn, relay func() (up, down int64)) {
	defer p.untrack(backend)
	setKeepalive(cn.c, cn.st.cfg.Keepalive)
	pl := newPlayer(cn, p.now())
	end := func(string) { cn.c.Close(); backend.Close() }
	pl.setEnd(end)
	p.players.visit(cn, pl, cn.lease.Address(), func() (int64, int64) {
		up, down := relay()
		cn.lease.Release(p.now())
		return up, down
	})
}

// copyBoth copies both ways on the raw connections so Linux uses splice(2). When one
// side finishes cleanly its peer gets a half-close; an error tears both down.
func copyBoth(client, backend net.Conn) (up, down int64) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		up, err = io.Copy(backend, client)
		if err != nil {
			client.Close()
			backend.Close()
			return
		}
		closeWrite(backend)
	}()
	down, err := io.Copy(client, backend)
	if err != nil {
		client.Close()
		backend.Close()
	} else {
		closeWrite(client)
	}
	<-done
	client.Close()
	backend.Close()
	return up, down
}

// setKeepalive applies [keepalive] to a player's connection where the listener's
// settings were not inherited (not Linux): a player who vanishes is found by TCP
// keepalive, never by per-read deadlines on the forwarding path. Backends get
// none: Minecraft's own keep-alives make both ends drop a dead peer within 30 s,
// and the proxy closes the pair as soon as either side does.
func setKeepalive(c net.Conn, ka config.Keepalive) {
	if keepaliveInherited {
		return
	}
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

func closeWrite(c net.Conn) {
	if hc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = hc.CloseWrite()
		return
	}
	c.Close()
}

func formatUUID(u [16]byte) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 36)
	for i, v := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[v>>4], hex[v&15])
	}
	return string(b)
}
