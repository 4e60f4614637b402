// Package admintest is an in-memory proxy for tests of the admin API and of its
// clients (the CLI, `infrarust top`): servers with addresses, drains, and
// players that join, are sent, kicked and moved by the rules admin.PlayerRuntime
// states. Only tests import it.
package admintest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// Server declares one server of the fake proxy.
type Server struct {
	ID string
	// ProxyMode decides whether its players can be moved: offline and
	// client_only can, every other mode cannot.
	ProxyMode string
	// Network: players move only between servers of one network.
	Network   string
	Addresses []string
	// Fallbacks are the servers a drain with move sends players to when no other
	// address of this one takes them, in order.
	Fallbacks []string
	// Refuse, when set, is the reason every backend of this server refuses a
	// player moved to it (a "server is full" kick, say).
	Refuse string
}

// Switchable reports whether the proxy can move this server's players.
func (s Server) Switchable() bool { return config.ProxyMode(s.ProxyMode).Intercepted() }

// Roster is an admin.PlayerRuntime that really keeps players and moves them:
// sends go to the target's address with the fewest players that is not drained,
// in the same network only; a drain with move empties the address into the
// server's other addresses, then its fallbacks. Safe for concurrent use.
type Roster struct {
	mu      sync.Mutex
	servers map[string]*server
	order   []string
	players []admin.Player
	kicks   []string
	told    []string // "name: text" of messages and broadcasts
	bus     *events.Bus
}

type server struct {
	Server
	drained map[string]bool
}

// NewRoster builds a fake proxy with servers and no players.
func NewRoster(servers ...Server) *Roster {
	p := &Roster{servers: map[string]*server{}}
	for _, s := range servers {
		p.servers[s.ID] = &server{Server: s, drained: map[string]bool{}}
		p.order = append(p.order, s.ID)
	}
	return p
}

// PublishTo makes moves publish player.switch and kicks player.leave on bus,
// as the proxy does.
func (p *Roster) PublishTo(bus *events.Bus) {
	p.mu.Lock()
	p.bus = bus
	p.mu.Unlock()
}

// Join puts pl on pl.Server at pl.Address; ProxyMode and Switchable come from
// the server. It panics on a server or address the fake does not have: that is
// a broken test, not an input.
func (p *Roster) Join(pl admin.Player) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.servers[pl.Server]
	if !ok || !slices.Contains(s.Addresses, pl.Address) {
		panic(fmt.Sprintf("admintest: %s joins %s %s, which the fake does not have", pl.Name, pl.Server, pl.Address))
	}
	pl.ProxyMode, pl.Switchable = s.ProxyMode, s.Switchable()
	p.players = append(p.players, pl)
}

// SetDrained marks addr so that no move lands on it (the drain route calls the
// runtime's SetDrain, which a composed fake forwards here).
func (p *Roster) SetDrained(server, addr string, drained bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.servers[server]; ok {
		s.drained[addr] = drained
	}
}

// Drained reports whether SetDrained marked addr.
func (p *Roster) Drained(server, addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.servers[server]
	return ok && s.drained[addr]
}

// Count is how many players are on server (at addr, or anywhere on it for "").
func (p *Roster) Count(server, addr string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.countLocked(server, addr)
}

func (p *Roster) countLocked(server, addr string) int {
	n := 0
	for _, pl := range p.players {
		if pl.Server == server && (addr == "" || pl.Address == addr) {
			n++
		}
	}
	return n
}

// Kicks lists the kicks so far as "name: reason".
func (p *Roster) Kicks() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.kicks)
}

// Players implements admin.PlayerRuntime.
func (p *Roster) Players(server string) []admin.Player {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []admin.Player
	for _, pl := range p.players {
		if server == "" || pl.Server == server {
			out = append(out, pl)
		}
	}
	slices.SortFunc(out, func(a, b admin.Player) int {
		return cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return out
}

func (p *Roster) find(name string) int {
	if i := slices.IndexFunc(p.players, func(pl admin.Player) bool { return pl.Name == name }); i >= 0 {
		return i // the exact-case match first, as the proxy's roster does
	}
	return slices.IndexFunc(p.players, func(pl admin.Player) bool { return strings.EqualFold(pl.Name, name) })
}

// SendPlayer implements admin.PlayerRuntime.
func (p *Roster) SendPlayer(ctx context.Context, name, target string, _ bool) (admin.Player, error) {
	if err := ctx.Err(); err != nil {
		return admin.Player{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.find(name)
	if i < 0 {
		return admin.Player{}, admin.ErrUnknownPlayer
	}
	to, ok := p.servers[target]
	if !ok {
		return admin.Player{}, admin.ErrUnknownServer
	}
	from := p.servers[p.players[i].Server]
	if !from.Switchable() {
		return admin.Player{}, fmt.Errorf("%w (%s is %s)", admin.ErrNotSwitchable, from.ID, from.ProxyMode)
	}
	if err := sameNetwork(from, to); err != nil {
		return admin.Player{}, err
	}
	addr, err := p.pickLocked(to, "")
	if err != nil {
		return admin.Player{}, err
	}
	p.moveLocked(i, to.ID, addr, "admin")
	return p.players[i], nil
}

// sameNetwork refuses a move across networks; a server the proxy cannot switch
// players on belongs to no network.
func sameNetwork(from, to *server) error {
	if !to.Switchable() {
		return fmt.Errorf("%w (%s is %s: only offline and client_only servers take moved players)", admin.ErrOtherNetwork, to.ID, to.ProxyMode)
	}
	if from.Network != to.Network {
		return fmt.Errorf("%w (%s is in network %q, %s in %q)", admin.ErrOtherNetwork, from.ID, from.Network, to.ID, to.Network)
	}
	return nil
}

// pickLocked chooses the address of s with the fewest players that is not
// drained and is not avoid, as a least_conn balancer would.
func (p *Roster) pickLocked(s *server, avoid string) (string, error) {
	if s.Refuse != "" {
		return "", fmt.Errorf("%w: %s refused the player: %s", admin.ErrMoveFailed, s.ID, s.Refuse)
	}
	best, bestN := "", 0
	for _, a := range s.Addresses {
		if a == avoid || s.drained[a] {
			continue
		}
		if n := p.countLocked(s.ID, a); best == "" || n < bestN {
			best, bestN = a, n
		}
	}
	if best == "" {
		return "", fmt.Errorf("%w: no address of %s takes players (all drained)", admin.ErrMoveFailed, s.ID)
	}
	return best, nil
}

func (p *Roster) moveLocked(i int, server, addr, reason string) {
	pl := &p.players[i]
	sw := events.Switch{Username: pl.Name, UUID: pl.UUID, FromServer: pl.Server, FromAddress: pl.Address,
		ToServer: server, ToAddress: addr, Reason: reason}
	pl.Server, pl.Address = server, addr
	pl.ProxyMode = p.servers[server].ProxyMode
	p.bus.Publish(events.PlayerSwitch, sw)
}

// KickPlayer implements admin.PlayerRuntime.
func (p *Roster) KickPlayer(name, reason string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.find(name)
	if i < 0 {
		return admin.ErrUnknownPlayer
	}
	pl := p.players[i]
	p.players = slices.Delete(p.players, i, i+1)
	p.kicks = append(p.kicks, pl.Name+": "+reason)
	p.bus.Publish(events.PlayerLeave, events.Player{Server: pl.Server, Address: pl.Address, Username: pl.Name,
		UUID: pl.UUID, ClientIP: pl.ClientIP})
	return nil
}

// MessagePlayer implements admin.PlayerRuntime: players of passthrough
// servers cannot be told.
func (p *Roster) MessagePlayer(name, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.find(name)
	if i < 0 {
		return admin.ErrUnknownPlayer
	}
	if !p.players[i].Switchable {
		return admin.ErrNotIntercepted
	}
	p.told = append(p.told, p.players[i].Name+": "+text)
	return nil
}

// Broadcast implements admin.PlayerRuntime.
func (p *Roster) Broadcast(text, server string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pl := range p.players {
		if pl.Switchable && (server == "" || pl.Server == server) {
			p.told = append(p.told, pl.Name+": "+text)
			n++
		}
	}
	return n
}

// Told lists the messages players got, "name: text".
func (p *Roster) Told() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.told)
}

// MovePlayers implements admin.PlayerRuntime: every player on address leaves
// for another address of server, else a fallback server; one nothing takes
// stays. A server whose players cannot be moved answers ErrNotSwitchable when
// anyone is on the address.
func (p *Roster) MovePlayers(ctx context.Context, serverID, address string) (admin.MoveResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.servers[serverID]
	if !ok {
		return admin.MoveResult{}, admin.ErrUnknownServer
	}
	if !slices.Contains(s.Addresses, address) {
		return admin.MoveResult{}, admin.ErrUnknownAddress
	}
	var res admin.MoveResult
	on := p.countLocked(serverID, address)
	if on > 0 && !s.Switchable() {
		res.Stayed = on
		return res, fmt.Errorf("%w (%s is %s; its %d player(s) on %s stay until they leave)", admin.ErrNotSwitchable, s.ID, s.ProxyMode, on, address)
	}
	for i := range p.players {
		if p.players[i].Server != serverID || p.players[i].Address != address {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if addr, err := p.pickLocked(s, address); err == nil {
			p.moveLocked(i, s.ID, addr, "drain")
			res.Moved++
			continue
		}
		moved := false
		for _, fb := range s.Fallbacks {
			to, ok := p.servers[fb]
			if !ok || sameNetwork(s, to) != nil {
				continue
			}
			if addr, err := p.pickLocked(to, ""); err == nil {
				p.moveLocked(i, to.ID, addr, "drain")
				res.Moved++
				moved = true
				break
			}
		}
		if !moved {
			res.Stayed++
		}
	}
	return res, nil
}

// Runtime is a whole fake proxy for the admin API: the servers and addresses of
// Roster, each address healthy unless drained, with its player count as its
// active connections.
type Runtime struct {
	*Roster
	// Version is reported in Stats.
	Version string
	maint   map[string]bool // guarded by Roster.mu
}

// NewRuntime builds a fake proxy with servers and no players.
func NewRuntime(servers ...Server) *Runtime {
	return &Runtime{Roster: NewRoster(servers...), Version: "test"}
}

var _ admin.Runtime = (*Runtime)(nil)

// Servers implements admin.Runtime.
func (r *Runtime) Servers(time.Time) []admin.ServerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]admin.ServerInfo, 0, len(r.order))
	for _, id := range r.order {
		s := r.servers[id]
		healthy := 0
		for _, a := range s.Addresses {
			if !s.drained[a] {
				healthy++
			}
		}
		out = append(out, admin.ServerInfo{ID: id, Domains: []string{id + ".example.com"}, Strategy: "least_conn",
			AddressCount: len(s.Addresses), HealthyCount: healthy, Players: r.countLocked(id, ""), ProxyMode: s.ProxyMode,
			Maintenance: r.maint[id]})
	}
	return out
}

// Backends implements admin.Runtime.
func (r *Runtime) Backends(id string, _ time.Time) (admin.Backends, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.servers[id]
	if !ok {
		return admin.Backends{}, admin.ErrUnknownServer
	}
	out := admin.Backends{Server: id, Strategy: "least_conn"}
	for _, a := range s.Addresses {
		state := "healthy"
		if s.drained[a] {
			state = "draining"
		}
		out.Backends = append(out.Backends, admin.Backend{Address: a, Weight: 1, EffectiveWeight: 1, State: state,
			Health: "healthy", ActiveConnections: r.countLocked(id, a)})
	}
	return out, nil
}

// SetDrain implements admin.Runtime.
func (r *Runtime) SetDrain(id, addr string, drained bool, _ time.Time) error {
	if err := r.known(id, addr); err != nil {
		return err
	}
	r.SetDrained(id, addr, drained)
	return nil
}

// Reset implements admin.Runtime; the fake keeps no failures to clear.
func (r *Runtime) Reset(id, addr string, _ time.Time) error { return r.known(id, addr) }

func (r *Runtime) known(id, addr string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.servers[id]
	switch {
	case !ok:
		return admin.ErrUnknownServer
	case !slices.Contains(s.Addresses, addr):
		return admin.ErrUnknownAddress
	}
	return nil
}

// Stats implements admin.Runtime.
func (r *Runtime) Stats(time.Time) admin.Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return admin.Stats{PlayersOnline: len(r.players), ConnectionsActive: int64(len(r.players)), Version: r.Version}
}

// StartServer implements admin.Runtime; the fake manages no server.
func (r *Runtime) StartServer(_ context.Context, id string) error { return r.unmanaged(id) }

// StopServer implements admin.Runtime; the fake manages no server.
func (r *Runtime) StopServer(_ context.Context, id string) error { return r.unmanaged(id) }

// SetMaintenance implements admin.Runtime.
func (r *Runtime) SetMaintenance(id string, on bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.servers[id]; !ok {
		return admin.ErrUnknownServer
	}
	if r.maint == nil {
		r.maint = map[string]bool{}
	}
	r.maint[id] = on
	return nil
}

func (r *Runtime) unmanaged(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.servers[id]; !ok {
		return admin.ErrUnknownServer
	}
	return admin.ErrNotManaged
}
