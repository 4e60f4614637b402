package proxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// statusCache keeps the last status answer per known protocol version (see
// statusKey) and collapses concurrent pings into one backend request, so what
// clients send can never multiply the backend's status queries. An error is never
// cached as fresh: it falls back to the last good answer while that is younger
// than max_stale.
type statusCache struct {
	mu       sync.Mutex
	ttl      time.Duration
	maxStale time.Duration
	entries  map[int32]*cacheEntry
	// failed is when each address last failed a status relay: it is not asked
	// again for one ttl, so a frozen backend costs one status_timeout per ttl,
	// not one per ping.
	failed map[string]time.Time
	// offline is whether the last ping was answered with the offline MOTD, so the
	// change is logged once each way rather than per ping or never.
	offline atomic.Bool
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
	s := &statusCache{entries: map[int32]*cacheEntry{}, failed: map[string]time.Time{}}
	s.configure(c)
	return s
}

// forget drops every cached answer, so that no answer from before a maintenance
// stands in for the server after it (as fresh or as stale). A fetch still
// running fills its own entry, which is no longer in the map.
func (s *statusCache) forget() {
	s.mu.Lock()
	s.entries = map[int32]*cacheEntry{}
	clear(s.failed)
	s.mu.Unlock()
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
		e = &cacheEntry{} // at most one per known protocol: statusKey bounds the keys
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

// skip reports that addr failed a status relay less than one ttl ago.
func (s *statusCache) skip(addr string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.failed[addr]
	if ok && now.Sub(at) >= s.ttl {
		delete(s.failed, addr)
		return false
	}
	return ok
}

// result notes how a status relay to addr went.
func (s *statusCache) result(addr string, err error, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil || s.ttl <= 0 {
		delete(s.failed, addr)
		return
	}
	s.failed[addr] = now
}

// serveStatus answers a server-list ping, modern or legacy: the proxy's own MOTD
// when it has one to give (unknown host, a server in maintenance, a managed server
// that is not online), else the backend's answer relayed, else the server's
// offline MOTD.
func (p *statusHandler) serveStatus(cn *conn) {
	if cn.legacy == notLegacy {
		if err := mc.ReadStatusRequest(cn.br); err != nil {
			p.log.Debug("status request unreadable", "client", cn.client, "err", err)
			return
		}
	}
	var reply []byte
	if m, closed := p.ownMOTD(cn); m != nil {
		reply = encodeMOTD(cn, m, closed)
	} else if reply = p.relayStatus(cn); reply == nil {
		reply = encodeMOTD(cn, offlineMOTD(cn.srv), false)
	}
	if _, err := cn.c.Write(reply); err != nil || cn.legacy != notLegacy {
		return
	}
	payload, err := mc.ReadPing(cn.br)
	if err != nil {
		return // many clients close after the response
	}
	_, _ = cn.c.Write(mc.EncodePing(payload))
}

// ownMOTD is the answer the proxy gives without asking a backend, or nil to relay.
// The bool marks the maintenance answer, which must read as closed (closedProtocol).
func (p *statusHandler) ownMOTD(cn *conn) (*config.MOTD, bool) {
	if cn.srv == nil {
		return &cn.st.cfg.DefaultMOTD, false
	}
	if p.maint.on(cn.srv.id) {
		return maintenanceMOTD(cn.srv), true
	}
	if m := p.opts.Manager; m != nil && m.Managed(cn.srv.id) {
		if state := m.State(cn.srv.id); state != manager.StateOnline {
			return managedMOTD(cn.srv, state), false
		}
	}
	return nil, false
}

// closedProtocol is the protocol number the maintenance answer claims. No client
// has it, so the server list shows the version name, in red, where the ping and
// the player count would be: the server reads as closed, not as open and empty.
const closedProtocol = -1

// maintenanceMOTD is what a ping of srv shows while it is in maintenance: the
// server's [motd.maintenance], its unset text and version name taken from the
// built-in answer.
func maintenanceMOTD(srv *server) *config.MOTD {
	m := config.MOTD{Text: "§c" + srv.id + " is under maintenance — please come back later", VersionName: "Maintenance"}
	if c := srv.cfg.MOTD.Maintenance; c != nil {
		text, version := m.Text, m.VersionName
		m = *c
		if m.Text == "" {
			m.Text = text
		}
		if m.VersionName == "" {
			m.VersionName = version
		}
	}
	return &m
}

var defaultOfflineMOTD = config.MOTD{Text: "§cServer is offline", VersionName: "Infrarust"}

// offlineMOTD is what a ping of srv shows when no address answered.
func offlineMOTD(srv *server) *config.MOTD {
	if srv.cfg.MOTD.Offline != nil {
		return srv.cfg.MOTD.Offline
	}
	return &defaultOfflineMOTD
}

// encodeMOTD writes m in the format the client asked in; closed claims
// closedProtocol instead of a protocol the client would take for its own.
func encodeMOTD(cn *conn, m *config.MOTD, closed bool) []byte {
	if cn.legacy == legacyPing {
		st := legacyStatus(m)
		if closed {
			st.Protocol = closedProtocol
		}
		return mc.EncodeLegacyPingReply(cn.ping.Form, st)
	}
	protocol := cn.protocol
	if closed {
		protocol = closedProtocol
	}
	return mc.EncodeStatusResponse(motdJSON(m, protocol))
}

func legacyStatus(m *config.MOTD) mc.LegacyStatus {
	var text string
	if b, err := json.Marshal(m.Text); err == nil {
		_ = json.Unmarshal(b, &text)
	}
	return mc.LegacyStatus{Protocol: 127, Version: m.VersionName, MOTD: text, Online: m.Online, Max: m.MaxPlayers}
}

// relayStatus asks the server's addresses, in the balancer's order, for the reply
// in the client's format; nil when none answered. Modern answers go through the
// cache, which holds encoded frames, so a hit is one write with no copy.
func (p *statusHandler) relayStatus(cn *conn) []byte {
	srv := cn.srv
	if cn.legacy == legacyPing {
		// Through the cache as modern pings are (one entry per legacy form: the
		// reply's layout differs), stale on error.
		reply, hit := srv.cache.get(legacyKey(cn.ping.Form), p.now, func() ([]byte, error) {
			reply, err := p.firstAnswer(srv, func(addr string) ([]byte, error) { return p.queryLegacy(cn, addr) })
			if err == nil && srv.cfg.MOTD.Online != nil {
				reply = overlayLegacy(reply, cn.ping.Form, srv.cfg.MOTD.Online)
			}
			return reply, err
		})
		p.met.StatusCache(hit)
		return reply
	}
	key := statusKey(cn.protocol)
	frame, hit := srv.cache.get(key, p.now, func() ([]byte, error) {
		body, err := p.firstAnswer(srv, func(addr string) ([]byte, error) { return p.queryStatus(cn, addr, key) })
		if err != nil {
			return nil, err
		}
		if m := srv.cfg.MOTD.Online; m != nil {
			body = overlayStatus(body, m) // cached as shown: no cost per ping
		}
		return mc.EncodeStatusResponse(body), nil
	})
	p.met.StatusCache(hit)
	if offline := frame == nil; srv.cache.offline.Swap(offline) != offline {
		if offline {
			p.log.Info("no address answered a status ping; the server list shows the offline MOTD", "server", srv.id)
		} else {
			p.log.Info("status pings are answered by the backend again", "server", srv.id)
		}
	}
	if frame != nil && key != cn.protocol {
		frame = echoProtocol(frame, key, cn.protocol)
	}
	if frame != nil && srv.cfg.PlayerCountOf() != "backend" {
		frame = withOnline(frame, p.playerCount(srv))
	}
	return frame
}

// playerCount is what [motd] player_count counts for srv's server list.
func (p *statusHandler) playerCount(srv *server) int {
	switch how := srv.cfg.PlayerCountOf(); how {
	case "network", "fleet":
		n := 0
		for _, other := range p.state.Load().servers {
			if how == "fleet" || other.cfg.Network == srv.cfg.Network {
				n += p.fleetOnline(other)
			}
		}
		return n
	}
	return p.fleetOnline(srv)
}

// overlayStatus is a backend's status answer with what [motd.online] sets put
// over it: the text, version name and favicon when set, the player counts when
// above zero. Everything else (the counts it leaves, the protocol, the sample,
// mod lists) stays the backend's, so the server list stays live. An answer that
// does not parse is returned as it came.
func overlayStatus(body []byte, m *config.MOTD) []byte {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil || doc == nil {
		return body
	}
	set := func(obj string, key string, v any) {
		var o map[string]json.RawMessage
		if json.Unmarshal(doc[obj], &o) != nil || o == nil {
			o = map[string]json.RawMessage{}
		}
		o[key], _ = json.Marshal(v)
		doc[obj], _ = json.Marshal(o)
	}
	if m.Text != "" {
		doc["description"], _ = json.Marshal(map[string]string{"text": m.Text})
	}
	if m.VersionName != "" {
		set("version", "name", m.VersionName)
	}
	if m.MaxPlayers > 0 {
		set("players", "max", m.MaxPlayers)
	}
	if m.Online > 0 {
		set("players", "online", m.Online)
	}
	if m.Favicon != "" {
		doc["favicon"], _ = json.Marshal(m.Favicon)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// overlayLegacy is overlayStatus for a legacy ping's reply.
func overlayLegacy(reply []byte, form mc.LegacyForm, m *config.MOTD) []byte {
	st, err := mc.ParseLegacyPingReply(reply)
	if err != nil {
		return reply
	}
	if m.Text != "" {
		st.MOTD = legacyStatus(m).MOTD
	}
	if m.VersionName != "" {
		st.Version = m.VersionName
	}
	if m.MaxPlayers > 0 {
		st.Max = m.MaxPlayers
	}
	if m.Online > 0 {
		st.Online = m.Online
	}
	return mc.EncodeLegacyPingReply(form, st)
}

// fleetOnline is the server's players on this proxy and, in a [fleet], on the
// others, for [motd] player_count.
func (p *statusHandler) fleetOnline(srv *server) int {
	n := int(srv.players.Load())
	if f := p.opts.Fleet; f != nil {
		n += f.RemoteOnline(srv.id)
	}
	return n
}

// withOnline is a status frame with players.online set to n (the cached frame
// is not changed: the count is per answer).
func withOnline(frame []byte, n int) []byte {
	return patchStatus(frame, func(doc map[string]json.RawMessage) bool {
		var players map[string]json.RawMessage
		if json.Unmarshal(doc["players"], &players) != nil || players == nil {
			players = map[string]json.RawMessage{"max": json.RawMessage("0")}
		}
		players["online"] = json.RawMessage(strconv.Itoa(n))
		b, err := json.Marshal(players)
		doc["players"] = b
		return err == nil
	})
}

// patchStatus decodes a status frame's JSON, lets edit change it, and encodes it
// again; the frame is returned unchanged when it does not parse or edit says no.
func patchStatus(frame []byte, edit func(doc map[string]json.RawMessage) bool) []byte {
	body, err := mc.ReadStatusResponse(bufio.NewReader(bytes.NewReader(frame)))
	if err != nil {
		return frame
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil || doc == nil || !edit(doc) {
		return frame
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return frame
	}
	return mc.EncodeStatusResponse(out)
}

// statusKey is the protocol a status query is asked and cached as: the client's
// when it is a release the proxy knows, else the nearest known release below it
// (the oldest for anything older). A client cycling through made-up protocol
// numbers therefore hits the cache instead of the backend.
func statusKey(protocol int32) int32 {
	p := mc.Protocol(protocol)
	if p.Known() {
		return protocol
	}
	known := mc.KnownProtocols()
	key := known[0]
	for _, k := range known {
		if k <= p {
			key = k
		}
	}
	return int32(key)
}

// echoProtocol answers a client whose protocol number the proxy does not know from
// the answer cached for the nearest release: when the backend called that release
// compatible (it echoed its number), the client's own number is echoed instead, as
// the backend would have. An answer that cannot be rewritten is served as it is.
func echoProtocol(frame []byte, key, protocol int32) []byte {
	return patchStatus(frame, func(doc map[string]json.RawMessage) bool {
		var version struct {
			Name     string `json:"name"`
			Protocol int32  `json:"protocol"`
		}
		if json.Unmarshal(doc["version"], &version) != nil || version.Protocol != key {
			return false
		}
		version.Protocol = protocol
		b, err := json.Marshal(version)
		doc["version"] = b
		return err == nil
	})
}

// firstAnswer runs query on the server's addresses in status order (no rotation
// advance) until one answers. An address that failed less than one status-cache
// ttl ago is not asked (the negative cache).
func (p *statusHandler) firstAnswer(srv *server, query func(addr string) ([]byte, error)) ([]byte, error) {
	var lastErr error = errNoAddress
	for _, addr := range srv.pool.StatusOrder(p.now()) {
		if srv.cache.skip(addr, p.now()) {
			lastErr = errRecentlyFailed
			continue
		}
		b, err := query(addr)
		srv.cache.result(addr, err, p.now())
		if err == nil {
			return b, nil
		}
		lastErr = err
		p.log.Debug("status relay failed", "server", srv.id, "address", addr, "err", err)
	}
	return nil, lastErr
}

// errRecentlyFailed: every address failed a status relay within one ttl.
var errRecentlyFailed = errors.New("the address failed a status relay less than one status_cache ttl ago")

// legacyKey is the cache key of a legacy ping's answers in form f: outside the
// range of protocol versions statusKey gives.
func legacyKey(f mc.LegacyForm) int32 { return math.MinInt32 + int32(f) }

var errNoAddress = errors.New("server has no address")

// queryStatus runs a modern status exchange with one address, as protocol, and learns the address's player counts from the answer.
func (p *statusHandler) queryStatus(cn *conn, addr string, protocol int32) ([]byte, error) {
	c, err := p.openStatus(cn, addr, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	host, port := backendHost(cn.srv.cfg, cn.hs)
	body, rtt, err := mc.QueryStatus(c, host, port, protocol)
	if err != nil {
		return nil, err
	}
	p.met.StatusLatency(cn.srv.id, addr, rtt)
	if parsed, err := mc.ParseStatusResponse(body); err == nil {
		cn.srv.pool.ReportStatus(addr, parsed.Players.Online, parsed.Players.Max, p.now())
	}
	return body, nil
}

// queryLegacy relays a legacy ping to one address in one write (legacy servers
// read only the first chunk) and reads exactly one reply: no waiting for the
// backend to close.
func (p *statusHandler) queryLegacy(cn *conn, addr string) ([]byte, error) {
	c, err := p.openStatus(cn, addr, firstPacketForBackend(cn))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return readLegacyReply(c)
}

// openStatus connects to one address for a status relay, bounded by
// status_timeout end to end, and writes the preamble and first in one write.
func (p *statusHandler) openStatus(cn *conn, addr string, first []byte) (net.Conn, error) {
	timeout := cn.st.cfg.StatusTimeout.D()
	c, err := p.dial(addr, timeout)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	out := first
	if pre := preamble(cn.srv, cn.client, c); pre != nil {
		out = append(pre, first...)
	}
	if len(out) > 0 {
		if _, err := c.Write(out); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// readLegacyReply reads one whole 0xFF reply (at most 128 KiB: a length-prefixed
// UTF-16 string) and checks that it parses before it is relayed verbatim.
func readLegacyReply(r io.Reader) ([]byte, error) {
	var hdr [3]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("legacy reply: %w", err)
	}
	if hdr[0] != 0xFF {
		return nil, fmt.Errorf("legacy reply starts with 0x%02x, want 0xff: %w", hdr[0], mc.ErrMalformed)
	}
	b := make([]byte, 3+2*int(binary.BigEndian.Uint16(hdr[1:])))
	copy(b, hdr[:])
	if _, err := io.ReadFull(r, b[3:]); err != nil {
		return nil, fmt.Errorf("legacy reply: %w", err)
	}
	if _, err := mc.ParseLegacyPingReply(b); err != nil {
		return nil, err
	}
	return b, nil
}

// backendHost is the hostname and port the backend sees, per domain_rewrite.
// Whatever follows the first NUL of the player's address (Forge's "\x00FML3\x00"
// marker) is kept after a rewritten host: the backend needs it to accept a modded
// client.
func backendHost(sc *config.Server, hs mc.Handshake) (string, uint16) {
	var marker string
	if i := strings.IndexByte(hs.ServerAddress, 0); i >= 0 {
		marker = hs.ServerAddress[i:]
	}
	switch sc.DomainRewrite.Mode {
	case config.RewriteExplicit:
		return sc.DomainRewrite.Value + marker, hs.ServerPort
	case config.RewriteFromBackend:
		if len(sc.Addresses) > 0 {
			h, p, err := net.SplitHostPort(sc.Addresses[0].Address)
			if err == nil {
				n, _ := strconv.Atoi(p)
				return h + marker, uint16(n)
			}
		}
	}
	return hs.ServerAddress, hs.ServerPort
}

// motdJSON builds a status response from a configured MOTD. The loader has turned
// a favicon file into a data URI already.
func motdJSON(m *config.MOTD, protocol int32) []byte {
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
	r.Favicon = m.Favicon
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

// managedMOTD is the answer for a managed server that is not online: the
// server's own MOTD for the state, else the built-in one.
func managedMOTD(srv *server, state manager.State) *config.MOTD {
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
	return m
}
