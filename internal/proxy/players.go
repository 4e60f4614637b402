package proxy

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/session"
)

// player is one connected player, from the moment a backend took them until they
// leave: what the players list shows, and the handles to move or kick them.
type onlinePlayer struct {
	name, uuid string
	client     netip.AddrPort
	protocol   int32
	mode       config.ProxyMode
	since      time.Time

	mu      sync.Mutex
	srv     *server // where the player is now; changes on a switch
	address string
	proof   proof // what he has proven (proof.go); only grows
	landed  bool  // he has been on a backend: a later arrival is a move from one

	sess   *session.Session  // intercepted sessions only: can be moved and kicked in-game
	cmds   *playerCommands   // their commands and packet filters, when the session has a filter
	origin *conn             // the login: identity, handshake, the client's socket
	reason string            // why the move under way happens, for its event
	move   mover             // one move at a time, and the fallback budget
	end    func(text string) // ends a passthrough player's stream (guarded by mu)
	// accountFailures counts wrong passwords of his account commands.
	accountFailures atomic.Int32
}

func (pl *onlinePlayer) setReason(r string) {
	pl.mu.Lock()
	pl.reason = r
	pl.mu.Unlock()
}

// setEnd records how to end the player's session where the proxy cannot write
// to them (passthrough: the forwarder's end).
func (pl *onlinePlayer) setEnd(end func(text string)) {
	pl.mu.Lock()
	pl.end = end
	pl.mu.Unlock()
}

// disconnect ends the player's session: with text on their screen when the
// proxy speaks to them (intercepted), by closing the stream otherwise.
func (pl *onlinePlayer) disconnect(text string) {
	if pl.sess != nil {
		pl.sess.Kick(text)
		return
	}
	pl.mu.Lock()
	end := pl.end
	pl.mu.Unlock()
	if end != nil {
		end(text)
		return
	}
	_ = pl.origin.c.Close()
}

func (pl *onlinePlayer) takeReason() string {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	r := pl.reason
	pl.reason = ""
	return r
}

func (pl *onlinePlayer) where() (*server, string) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.srv, pl.address
}

// PlayerInfo is one connected player as the proxy sees them.
type PlayerInfo struct {
	Name, UUID string
	Server     string
	Address    string
	Client     netip.AddrPort
	Protocol   int32
	Version    string
	Mode       config.ProxyMode
	Since      time.Time
	Switchable bool
}

func (pl *onlinePlayer) info() PlayerInfo {
	srv, addr := pl.where()
	return PlayerInfo{
		Name: pl.name, UUID: pl.uuid, Server: srv.id, Address: addr, Client: pl.client,
		Protocol: pl.protocol, Version: versionName(pl.protocol), Mode: pl.mode, Since: pl.since,
		Switchable: pl.sess != nil,
	}
}

func versionName(protocol int32) string {
	names := mc.Protocol(protocol).Names()
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1]
}

// roster indexes connected players by lower-case name (offline-mode names that
// differ only by case are different players), and holds the identities logins
// claimed (identity.go): one player, one session.
type roster struct {
	mu     sync.Mutex
	byName map[string][]*onlinePlayer
	claims map[string]*claim // by identity key, from a login's check until it ends
}

func (ps *roster) add(pl *onlinePlayer) {
	key := strings.ToLower(pl.name)
	ps.mu.Lock()
	if ps.byName == nil {
		ps.byName = map[string][]*onlinePlayer{}
	}
	ps.byName[key] = append(ps.byName[key], pl)
	ps.mu.Unlock()
}

func (ps *roster) remove(pl *onlinePlayer) {
	key := strings.ToLower(pl.name)
	ps.mu.Lock()
	list := slices.DeleteFunc(ps.byName[key], func(x *onlinePlayer) bool { return x == pl })
	if len(list) == 0 {
		delete(ps.byName, key)
	} else {
		ps.byName[key] = list
	}
	ps.mu.Unlock()
}

// find is the player called name: the exact-case match, else the only player
// whose name matches in any case; nil when there is none, or several that differ
// only by case and none exactly (matches lists them).
func (ps *roster) find(name string) *onlinePlayer {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	list := ps.byName[strings.ToLower(name)]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].name == name {
			return list[i]
		}
	}
	if len(list) == 1 {
		return list[0]
	}
	return nil
}

// matches lists the players whose name is name in any case.
func (ps *roster) matches(name string) []*onlinePlayer {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return slices.Clone(ps.byName[strings.ToLower(name)])
}

func (ps *roster) all() []*onlinePlayer {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out []*onlinePlayer
	for _, list := range ps.byName {
		out = append(out, list...)
	}
	return out
}

// Players lists the connected players, of one server or ("") of all, by name.
func (p *Proxy) Players(server string) []PlayerInfo {
	var out []PlayerInfo
	for _, pl := range p.roster.all() {
		if info := pl.info(); server == "" || info.Server == server {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b PlayerInfo) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return out
}

// arrive counts a player in on srv at address: the players gauge, the manager's
// idle timer, the join event and log line.
func (p *players) arrive(pl *onlinePlayer, srv *server, address string) {
	pl.mu.Lock()
	pl.srv, pl.address = srv, address
	pl.mu.Unlock()
	srv.players.Add(1)
	p.met.PlayerJoined(srv.id)
	if m := p.opts.Manager; m != nil {
		m.PlayerJoined(srv.id)
	}
}

// depart counts a player out of the server they are on.
func (p *players) depart(pl *onlinePlayer) {
	srv, _ := pl.where()
	srv.players.Add(-1)
	p.met.PlayerLeft(srv.id)
	if m := p.opts.Manager; m != nil {
		m.PlayerLeft(srv.id)
	}
}

// visit accounts for a player's whole stay: the list, counts, events and log
// lines around relay, which moves their bytes until they leave.
func (p *players) visit(cn *conn, pl *onlinePlayer, address string, relay func() (up, down int64)) {
	leave := p.welcome(cn, pl, address)
	leave(relay())
}

// welcome counts a player in (the list, counts, the join event and log line) and
// returns what counts them out when their bytes have stopped moving.
func (p *players) welcome(cn *conn, pl *onlinePlayer, address string) (leave func(up, down int64)) {
	start := p.now()
	p.arrive(pl, cn.srv, address)
	p.roster.add(pl)
	p.door.loginOutcome(cn, metrics.LoginSuccess)
	// Events and log lines are built only for someone who takes them: boxing
	// their fields costs allocations on every login otherwise.
	if p.bus.Wants(events.PlayerJoin) {
		p.bus.Publish(events.PlayerJoin, playerInfo(cn, pl, cn.srv, address))
	}
	if p.log.Enabled(context.Background(), slog.LevelInfo) {
		p.log.Info("player joined", "player", pl.name, "uuid", pl.uuid, "server", cn.srv.id, "address", address, "client", cn.client.Addr())
	}
	return func(up, down int64) { p.farewell(cn, pl, start, up, down) }
}

// playerInfo is the events' view of pl (logged in through cn) on srv's address.
func playerInfo(cn *conn, pl *onlinePlayer, srv *server, address string) events.Player {
	return events.Player{Server: srv.id, Address: address, Username: pl.name, UUID: pl.uuid, ClientIP: cn.ip.String()}
}

// farewell counts a player out once their session is over.
func (p *players) farewell(cn *conn, pl *onlinePlayer, start time.Time, up, down int64) {
	p.roster.remove(pl)
	srv, addr := pl.where()
	p.depart(pl)
	p.met.BytesForwarded(up, down)
	if p.bus.Wants(events.PlayerLeave) {
		info := playerInfo(cn, pl, srv, addr)
		info.DurationSecs = p.now().Sub(start).Seconds()
		info.BytesIn, info.BytesOut = up, down
		p.bus.Publish(events.PlayerLeave, info)
	}
	if p.log.Enabled(context.Background(), slog.LevelInfo) {
		p.log.Info("player left", "player", pl.name, "uuid", pl.uuid, "server", srv.id, "address", addr,
			"duration", p.now().Sub(start).Round(time.Second), "bytes_up", up, "bytes_down", down)
	}
}

// newPlayer is the record of the player cn logged in.
func newPlayer(cn *conn, now time.Time) *onlinePlayer {
	pl := &onlinePlayer{
		name: cn.player, uuid: cn.uuid, client: cn.client, protocol: cn.protocol,
		mode: cn.srv.cfg.ProxyMode, since: now, origin: cn, proof: cn.proof,
	}
	cn.pl = pl
	return pl
}
