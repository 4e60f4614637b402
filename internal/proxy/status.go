package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// statusCache keeps the last status answer per protocol version and collapses
// concurrent pings into one backend request. An error is never cached as fresh:
// it falls back to the last good answer while that is younger than max_stale.
type statusCache struct {
	mu       sync.Mutex
	ttl      time.Duration
	maxStale time.Duration
	entries  map[int32]*cacheEntry
}

type cacheEntry struct {
	good   []byte
	goodAt time.Time
	call   *statusCall
}

type statusCall struct {
	done chan struct{}
	body []byte
}

func newStatusCache(c config.StatusCache) *statusCache {
	s := &statusCache{entries: map[int32]*cacheEntry{}}
	s.configure(c)
	return s
}

func (s *statusCache) configure(c config.StatusCache) {
	s.mu.Lock()
	s.ttl, s.maxStale = c.TTL.D(), c.MaxStale.D()
	s.mu.Unlock()
}

// get returns a status body for protocol, calling fetch at most once at a time.
// body is nil when fetch failed and nothing good is recent enough.
func (s *statusCache) get(protocol int32, now func() time.Time, fetch func() ([]byte, error)) (body []byte, hit bool) {
	s.mu.Lock()
	e := s.entries[protocol]
	if e == nil {
		if len(s.entries) > 256 { // one entry per protocol version; bound a client cycling through them
			clear(s.entries)
		}
		e = &cacheEntry{}
		s.entries[protocol] = e
	}
	if e.good != nil && now().Sub(e.goodAt) < s.ttl {
		b := e.good
		s.mu.Unlock()
		return b, true
	}
	if c := e.call; c != nil {
		s.mu.Unlock()
		<-c.done
		return c.body, false
	}
	c := &statusCall{done: make(chan struct{})}
	e.call = c
	s.mu.Unlock()

	b, err := fetch()
	s.mu.Lock()
	if err == nil {
		e.good, e.goodAt = b, now()
		c.body = b
	} else if e.good != nil && now().Sub(e.goodAt) < s.maxStale {
		c.body = e.good
	}
	e.call = nil
	s.mu.Unlock()
	close(c.done)
	return c.body, false
}

// serveStatus answers a modern server-list ping after the handshake.
func (p *Proxy) serveStatus(c net.Conn, br *bufio.Reader, hs mc.Handshake, srv *server, st *state, client netip.AddrPort) {
	if err := mc.ReadStatusRequest(br); err != nil {
		p.log.Debug("status request unreadable", "client", client, "err", err)
		return
	}
	var frame []byte
	switch {
	case srv == nil:
		frame = mc.EncodeStatusResponse(motdJSON(&st.cfg.DefaultMOTD, hs.ProtocolVersion, ""))
	case p.opts.Manager != nil && p.opts.Manager.Managed(srv.id) && p.opts.Manager.State(srv.id) != manager.StateOnline:
		frame = mc.EncodeStatusResponse(p.managedMOTD(srv, hs.ProtocolVersion))
	default:
		frame = p.statusFrame(srv, hs, st, client)
	}
	if _, err := c.Write(frame); err != nil {
		return
	}
	payload, err := mc.ReadPing(br)
	if err != nil {
		return // many clients close after the response
	}
	_, _ = c.Write(mc.EncodePing(payload))
}

// statusFrame relays the status of srv through the cache, or builds the offline MOTD.
// The cache holds encoded frames, so a hit is one write with no copy.
func (p *Proxy) statusFrame(srv *server, hs mc.Handshake, st *state, client netip.AddrPort) []byte {
	frame, hit := srv.cache.get(hs.ProtocolVersion, p.now, func() ([]byte, error) {
		body, err := p.fetchStatus(srv, hs, st, client)
		if err != nil {
			return nil, err
		}
		return mc.EncodeStatusResponse(body), nil
	})
	p.met.StatusCache(hit)
	if frame == nil {
		m := srv.cfg.MOTD.Offline
		if m == nil {
			m = &defaultOfflineMOTD
		}
		return mc.EncodeStatusResponse(motdJSON(m, hs.ProtocolVersion, srv.favicon[m]))
	}
	return frame
}

var defaultOfflineMOTD = config.MOTD{Text: "§cServer is offline", VersionName: "Infrarust"}

// fetchStatus asks the server's addresses in balancer order (no rotation advance).
func (p *Proxy) fetchStatus(srv *server, hs mc.Handshake, st *state, client netip.AddrPort) ([]byte, error) {
	var lastErr error = errNoAddress
	timeout := st.cfg.ConnectTimeout.D()
	for _, addr := range srv.pool.StatusOrder(p.now()) {
		body, rtt, err := p.queryBackendStatus(srv, addr, hs, timeout, client)
		if err != nil {
			lastErr = err
			p.log.Debug("status relay failed", "server", srv.id, "address", addr, "err", err)
			continue
		}
		p.met.StatusLatency(srv.id, addr, rtt)
		var parsed mc.StatusResponse
		if json.Unmarshal(body, &parsed) == nil {
			srv.pool.ReportStatus(addr, parsed.Players.Online, parsed.Players.Max, p.now())
		}
		return body, nil
	}
	return nil, lastErr
}

func (p *Proxy) queryBackendStatus(srv *server, addr string, hs mc.Handshake, timeout time.Duration, client netip.AddrPort) ([]byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := backendDialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if srv.cfg.SendProxyProtocol {
		if _, err := conn.Write(proxyHeader(client, conn)); err != nil {
			return nil, 0, err
		}
	}
	host, port := backendHost(srv.cfg, hs)
	return mc.QueryStatus(conn, host, port, hs.ProtocolVersion)
}

// backendHost is the hostname and port the backend sees, per domain_rewrite.
func backendHost(sc *config.Server, hs mc.Handshake) (string, uint16) {
	switch sc.DomainRewrite.Mode {
	case "explicit":
		return sc.DomainRewrite.Value, hs.ServerPort
	case "from_backend":
		if len(sc.Addresses) > 0 {
			h, p, err := net.SplitHostPort(sc.Addresses[0].Address)
			if err == nil {
				n, _ := strconv.Atoi(p)
				return h, uint16(n)
			}
		}
	}
	return hs.ServerAddress, hs.ServerPort
}

// motdJSON builds a status response from a configured MOTD.
func motdJSON(m *config.MOTD, protocol int32, favicon string) []byte {
	var r mc.StatusResponse
	r.Version.Name = m.VersionName
	if r.Version.Name == "" {
		r.Version.Name = "Infrarust"
	}
	r.Version.Protocol = protocol
	r.Players.Max = m.MaxPlayers
	r.Players.Online = m.Online
	desc, _ := json.Marshal(map[string]string{"text": m.Text})
	r.Description = desc
	r.Favicon = favicon
	if r.Favicon == "" && len(m.Favicon) > 11 && m.Favicon[:11] == "data:image/" {
		r.Favicon = m.Favicon
	}
	b, _ := json.Marshal(r)
	return b
}

// Built-in MOTDs for a managed server that is not online.
var managedMOTDs = map[manager.State]config.MOTD{
	manager.StateSleeping: {Text: "§7Sleeping — join to wake it up", VersionName: "Sleeping"},
	manager.StateOffline:  {Text: "§7Sleeping — join to wake it up", VersionName: "Sleeping"},
	manager.StateStarting: {Text: "§eStarting — you will be connected in a moment", VersionName: "Starting"},
	manager.StateStopping: {Text: "§eStopping — join again to wake it up", VersionName: "Stopping"},
	manager.StateCrashed:  {Text: "§cThe server crashed — join to try starting it again", VersionName: "Crashed"},
}

// managedMOTD answers for a sleeping/starting/crashed server without waking it.
func (p *Proxy) managedMOTD(srv *server, protocol int32) []byte {
	state := p.opts.Manager.State(srv.id)
	var m *config.MOTD
	switch state {
	case manager.StateSleeping, manager.StateOffline, manager.StateStopping:
		m = srv.cfg.MOTD.Sleeping
	case manager.StateStarting:
		m = srv.cfg.MOTD.Starting
	case manager.StateCrashed:
		m = srv.cfg.MOTD.Crashed
	}
	if m == nil {
		d, ok := managedMOTDs[state]
		if !ok {
			d = managedMOTDs[manager.StateSleeping]
		}
		m = &d
	}
	return motdJSON(m, protocol, srv.favicon[m])
}
