package proxy

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/proxy/ratelimit"
)

// maxLegacyReply bounds what the proxy reads of a backend's legacy ping reply.
const maxLegacyReply = 64 << 10

// serveLegacy handles pre-1.7 clients: the legacy ping (0xFE) is relayed to the
// backend in one write, falling back to a built reply; the legacy login (0x02) is
// ban-checked, routed and forwarded byte for byte.
func (p *Proxy) serveLegacy(cn *conn, first byte) {
	cfg := cn.st.cfg
	if first == 0x02 {
		p.serveLegacyLogin(cn)
		return
	}
	ping, raw, err := mc.ReadLegacyPing(cn.br)
	if err != nil {
		p.reject(cn, "handshake", "legacy ping: "+err.Error())
		return
	}
	if p.opts.Bans != nil {
		if _, banned := p.opts.Bans.CheckIP(cn.ip, p.now()); banned {
			p.reject(cn, "ban", "banned IP asked for legacy status")
			return
		}
	}
	if cfg.RateLimit.Enabled && !p.limiter.Allow(cn.ip, ratelimit.Status, p.now()) {
		p.reject(cn, "rate_limit", "legacy status")
		return
	}
	host := NormalizeHost(ping.Host)
	var srv *server
	if id, ok := cn.st.router.lookup(host); ok && host != "" {
		srv = cn.st.servers[id]
	}
	if srv == nil && cfg.UnknownDomainBehavior == "drop" {
		p.reject(cn, "unknown_domain", "legacy ping for "+host)
		return
	}
	if srv != nil && !srv.filter.Allowed(cn.ip) {
		p.reject(cn, "ip_filter", "ip_filter of server "+srv.id)
		return
	}
	var reply []byte
	if srv != nil {
		for _, addr := range srv.pool.StatusOrder(p.now()) {
			if reply, err = p.relayLegacy(srv, addr, raw, cn, cfg.ConnectTimeout.D()); err == nil {
				break
			}
			p.log.Debug("legacy ping relay failed", "server", srv.id, "address", addr, "err", err)
		}
	}
	if reply == nil {
		m := &cfg.DefaultMOTD
		if srv != nil {
			m = &defaultOfflineMOTD
			if srv.cfg.MOTD.Offline != nil {
				m = srv.cfg.MOTD.Offline
			}
		}
		reply = mc.EncodeLegacyPingReply(ping.Form, legacyStatus(m))
	}
	_, _ = cn.c.Write(reply)
}

func legacyStatus(m *config.MOTD) mc.LegacyStatus {
	var text string
	if b, err := json.Marshal(m.Text); err == nil {
		_ = json.Unmarshal(b, &text)
	}
	return mc.LegacyStatus{Protocol: 127, Version: m.VersionName, MOTD: text, Online: m.Online, Max: m.MaxPlayers}
}

// relayLegacy sends the client's raw ping in one write (legacy servers read only the
// first chunk) and returns the backend's whole reply.
func (p *Proxy) relayLegacy(srv *server, addr string, raw []byte, cn *conn, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := backendDialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	out := raw
	if srv.cfg.SendProxyProtocol {
		out = append(proxyHeader(cn.client, c), raw...)
	}
	if _, err := c.Write(out); err != nil {
		return nil, err
	}
	reply, err := io.ReadAll(io.LimitReader(c, maxLegacyReply))
	if len(reply) > 0 && reply[0] == 0xFF {
		if _, perr := mc.ParseLegacyPingReply(reply); perr == nil {
			return reply, nil
		}
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return nil, err
}

// serveLegacyLogin routes a pre-1.7 login by the host it names and forwards it.
func (p *Proxy) serveLegacyLogin(cn *conn) {
	cfg := cn.st.cfg
	ll, raw, err := mc.ReadLegacyLogin(cn.br)
	if err != nil {
		p.reject(cn, "handshake", "legacy login: "+err.Error())
		return
	}
	legacyKick := func(msg string) { _, _ = cn.c.Write(mc.EncodeLegacyKick(msg)) }
	if p.opts.Bans != nil {
		if ban, banned := p.opts.Bans.CheckPlayer(cn.ip, ll.Username, "", p.now()); banned {
			p.reject(cn, "ban", "banned legacy player "+ll.Username)
			legacyKick(ban.KickMessage(p.now()))
			return
		}
	}
	if cfg.RateLimit.Enabled && !p.limiter.Allow(cn.ip, ratelimit.Login, p.now()) {
		p.reject(cn, "rate_limit", "legacy login")
		legacyKick("Rate limit exceeded")
		return
	}
	host := NormalizeHost(ll.Host)
	id, ok := cn.st.router.lookup(host)
	srv := cn.st.servers[id]
	if !ok || srv == nil {
		p.reject(cn, "unknown_domain", "legacy login for "+host)
		if cfg.UnknownDomainBehavior != "drop" {
			legacyKick("No server is configured for " + host)
		}
		return
	}
	if !srv.filter.Allowed(cn.ip) {
		p.reject(cn, "ip_filter", "ip_filter of server "+srv.id)
		return
	}
	pending := append([]byte(nil), raw...)
	buffered, _ := cn.br.Peek(cn.br.Buffered())
	pending = append(pending, buffered...)
	backend, lease, _, _, err := p.connectBackend(cn, srv, pending, ll.Username, false)
	if err != nil {
		legacyKick(mc.StripColorCodes(srv.cfg.DisconnectMessage))
		return
	}
	_ = cn.c.SetReadDeadline(time.Time{})
	cn.releaseReader()
	up0 := int64(len(pending))
	p.detach(cn, func() { p.session(cn, srv, backend, lease, ll.Username, up0, 0) })
}
