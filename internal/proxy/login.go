package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// firstPacketTimeout bounds the wait for a backend's first login packet, which the
// proxy reads to pass a "server is full" kick on to the next replica.
const firstPacketTimeout = 15 * time.Second

// serveLogin runs the login pipeline: login start, ban check, wake, pick and dial,
// then hands the connection to a session goroutine for byte-for-byte forwarding.
func (p *Proxy) serveLogin(cn *conn, hs mc.Handshake, rawHS []byte, host string, srv *server) {
	ls, rawLS, err := mc.ReadLoginStart(cn.br, hs.ProtocolVersion)
	if err != nil {
		p.reject(cn, "handshake", "login start: "+err.Error())
		return
	}
	if p.opts.Bans != nil {
		uuid := ""
		if ls.HasUUID {
			uuid = formatUUID(ls.UUID)
		}
		if ban, banned := p.opts.Bans.CheckPlayer(cn.ip, ls.Name, uuid, p.now()); banned {
			p.reject(cn, "ban", "banned player "+ls.Name)
			p.kick(cn, ban.KickMessage(p.now()))
			return
		}
	}
	if srv == nil {
		p.reject(cn, "unknown_domain", "no server for "+host)
		p.kick(cn, fmt.Sprintf("No server is configured for %q", host))
		return
	}
	if m := p.opts.Manager; m != nil && m.Managed(srv.id) {
		if err := m.EnsureStarted(p.ctx, srv.id); err != nil {
			p.log.Info("server could not be started for a player", "server", srv.id, "player", ls.Name, "err", err)
			p.kick(cn, err.Error())
			return
		}
	}

	// What the backend receives before forwarding: the handshake (rewritten if asked),
	// the login start and whatever the client already sent after it.
	hsOut := rawHS
	if srv.cfg.DomainRewrite.Mode != "none" && srv.cfg.DomainRewrite.Mode != "" {
		h, port := backendHost(srv.cfg, hs)
		rw := hs
		rw.ServerAddress, rw.ServerPort = h, port
		hsOut = rw.Encode()
	}
	pending := make([]byte, 0, len(hsOut)+len(rawLS)+cn.br.Buffered())
	pending = append(pending, hsOut...)
	pending = append(pending, rawLS...)
	buffered, _ := cn.br.Peek(cn.br.Buffered())
	pending = append(pending, buffered...)
	cn.releaseReader() // nothing more is read through the bufio.Reader

	backend, lease, first, kickText, err := p.connectBackend(cn, srv, pending, ls.Name, true)
	if err != nil {
		msg := srv.cfg.DisconnectMessage
		if kickText != "" {
			msg = kickText
		}
		p.kick(cn, msg)
		return
	}
	_ = cn.c.SetReadDeadline(time.Time{})
	if _, err := cn.c.Write(first); err != nil {
		backend.Close()
		lease.Release(p.now())
		return
	}
	up0, down0 := int64(len(pending)), int64(len(first))
	p.detach(cn, func() { p.session(cn, srv, backend, lease, ls.Name, up0, down0) })
}

// connectBackend dials the server's addresses in the balancer's order, at most
// connect_max_attempts real dials, writes the pending bytes and reads the backend's
// first packet. A "server is full" kick moves on to the next address without a
// health failure; kickText is the last such kick when every address was full.
func (p *Proxy) connectBackend(cn *conn, srv *server, pending []byte, player string, peek bool) (net.Conn, *balance.Lease, []byte, string, error) {
	cfg := cn.st.cfg
	maxAttempts := cfg.ConnectMaxAttempts
	if maxAttempts == 0 {
		maxAttempts = len(srv.cfg.Addresses)
	}
	var tried []string
	var outcomes []string
	var kickText string
	if p.log.Enabled(context.Background(), slog.LevelDebug) {
		defer func() {
			p.log.Debug("login routing", "server", srv.id, "player", player, "client", cn.client, "attempts", len(outcomes), "outcomes", strings.Join(outcomes, "; "))
		}()
	}
	lease := &cn.lease // one lease per connection, reused across attempts: no allocation per pick
	for len(tried) < maxAttempts {
		if !srv.pool.AcquireInto(lease, p.now(), tried) {
			break
		}
		addr := lease.Address()
		tried = append(tried, addr)
		start := p.now()
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ConnectTimeout.D())
		backend, err := backendDialer.DialContext(ctx, "tcp", addr)
		cancel()
		dialTime := p.now().Sub(start)
		p.met.BackendConnect(srv.id, addr, dialTime, err)
		if err != nil {
			lease.Failed(p.now(), dialReason(err))
			outcomes = append(outcomes, addr+": "+dialReason(err))
			continue
		}
		if !p.track(backend) {
			backend.Close()
			lease.Skipped(p.now())
			return nil, nil, nil, "", errors.New("shutting down")
		}
		first, kick, err := p.handOver(backend, srv, pending, cn, peek)
		switch {
		case err != nil:
			p.untrack(backend)
			backend.Close()
			lease.Failed(p.now(), "login handover: "+err.Error())
			outcomes = append(outcomes, addr+": "+err.Error())
			continue
		case kick != "":
			p.untrack(backend)
			backend.Close()
			// The backend answered, so the address is alive: Connected proves it (a recovery
			// attempt recovers instead of being handed out again on every login), then the lease
			// ends with no health effect. The kick also marks the address full for FullTTL, as a
			// full status answer does, so the next logins go to a replica with room first.
			lease.Connected(p.now(), dialTime)
			lease.Skipped(p.now())
			srv.pool.ReportStatus(addr, 1, 1, p.now())
			kickText = kick
			outcomes = append(outcomes, addr+": full")
			continue
		}
		lease.Connected(p.now(), dialTime)
		outcomes = append(outcomes, addr+": ok")
		return backend, lease, first, "", nil
	}
	if len(outcomes) == 0 {
		outcomes = append(outcomes, "no address to try")
	}
	return nil, nil, nil, kickText, errors.New("no backend answered")
}

// handOver writes the login bytes and reads the backend's first packet. It returns
// the bytes to pass to the client, or the kick text when the backend is full.
func (p *Proxy) handOver(backend net.Conn, srv *server, pending []byte, cn *conn, peek bool) ([]byte, string, error) {
	out := pending
	if srv.cfg.SendProxyProtocol {
		out = append(proxyHeader(cn.client, backend), pending...)
	}
	_ = backend.SetDeadline(time.Now().Add(firstPacketTimeout))
	if _, err := backend.Write(out); err != nil {
		return nil, "", err
	}
	if !peek {
		_ = backend.SetDeadline(time.Time{})
		return nil, "", nil
	}
	bbr := getReader(backend)
	defer putReader(bbr)
	f, err := mc.ReadFrame(bbr, mc.MaxFrameSize)
	if err != nil {
		return nil, "", fmt.Errorf("no first login packet: %w", err)
	}
	if text, ok := mc.ParseLoginDisconnect(f); ok && matchesAny(text, srv.full) {
		return nil, text, nil
	}
	_ = backend.SetDeadline(time.Time{})
	first := make([]byte, 0, len(f.Raw)+bbr.Buffered())
	first = append(first, f.Raw...)
	rest, _ := bbr.Peek(bbr.Buffered())
	first = append(first, rest...)
	return first, "", nil
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

func dialReason(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "connect timeout"
	}
	if strings.Contains(err.Error(), "refused") {
		return "connection refused"
	}
	return err.Error()
}

// session forwards a logged-in player until either side closes.
func (p *Proxy) session(cn *conn, srv *server, backend net.Conn, lease *balance.Lease, player string, up0, down0 int64) {
	defer p.untrack(backend)
	// Keepalive is how a dead peer of a long session is found; set only now, so a
	// status ping or a refused connection pays no setsockopt for it.
	setKeepalive(cn.c, cn.st.cfg.Keepalive)
	setKeepalive(backend, cn.st.cfg.Keepalive)
	start := p.now()
	srv.players.Add(1)
	p.met.PlayerJoined(srv.id)
	if m := p.opts.Manager; m != nil {
		m.PlayerJoined(srv.id)
	}
	info := events.Player{Server: srv.id, Address: lease.Address(), Username: player, ClientIP: cn.ip.String()}
	p.bus.Publish(events.PlayerJoin, info)
	p.log.Debug("player joined", "server", srv.id, "address", lease.Address(), "player", player, "client", cn.client)

	up, down := forward(cn.c, backend)
	up, down = up+up0, down+down0

	lease.Release(p.now())
	srv.players.Add(-1)
	p.met.PlayerLeft(srv.id)
	p.met.BytesForwarded(up, down)
	if m := p.opts.Manager; m != nil {
		m.PlayerLeft(srv.id)
	}
	info.DurationSecs = p.now().Sub(start).Seconds()
	info.BytesIn, info.BytesOut = up, down
	p.bus.Publish(events.PlayerLeave, info)
}

// forward copies both ways on the raw connections so Linux uses splice(2). When one
// side finishes cleanly its peer gets a half-close; an error tears both down.
func forward(client, backend net.Conn) (up, down int64) {
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

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		return
	}
	c.Close()
}

// kick sends a Login Disconnect with text: a player is never closed on silently.
func (p *Proxy) kick(cn *conn, text string) {
	_ = cn.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = cn.c.Write(mc.EncodeLoginDisconnect(text))
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
