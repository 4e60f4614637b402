package admin

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"
)

// fakeRuntime is a proxy with fixed servers whose drain and reset calls are recorded.
type fakeRuntime struct {
	mu         sync.Mutex
	servers    map[string][]Backend
	drains     *DrainStore       // when set, SetDrain checks the intent was persisted first
	maintStore *MaintenanceStore // when set, SetMaintenance checks it was persisted first
	maint      map[string]bool
	t          *testing.T
	resets     []string
	setCalls   []string
	stats      Stats
	players    []Player
	kicks      []string
	told       []string
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{servers: map[string][]Backend{
		"lobby": {
			{Address: "10.0.0.1:25565", Weight: 1, EffectiveWeight: 1, State: "healthy", Health: "healthy"},
			{Address: "10.0.0.2:25565", Weight: 2, EffectiveWeight: 2, State: "healthy", Health: "healthy", ActiveConnections: 3},
			{Address: "[2001:db8::1]:25565", Weight: 1, EffectiveWeight: 1, State: "unhealthy", Health: "unhealthy", Ejections: 2},
		},
		"survival": {
			{Address: "mc.example.net:25570", Weight: 1, EffectiveWeight: 1, State: "healthy", Health: "healthy"},
		},
	}, stats: Stats{PlayersOnline: 7, ConnectionsActive: 9, Version: "test"},
		players: []Player{
			{Name: "Notch", Server: "lobby", Address: "10.0.0.2:25565", ClientIP: "198.51.100.7", Protocol: 769, Version: "1.21.4", ProxyMode: "offline", Switchable: true},
			{Name: "jeb_", Server: "survival", Address: "mc.example.net:25570", ClientIP: "198.51.100.8", Protocol: 47, ProxyMode: "passthrough"},
		}}
}

func (f *fakeRuntime) Servers(time.Time) []ServerInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ServerInfo
	for id, bs := range f.servers {
		out = append(out, ServerInfo{ID: id, Strategy: "round_robin", AddressCount: len(bs), Maintenance: f.maint[id]})
	}
	slices.SortFunc(out, func(a, b ServerInfo) int { return compareStrings(a.ID, b.ID) })
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (f *fakeRuntime) Backends(server string, _ time.Time) (Backends, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	bs, ok := f.servers[server]
	if !ok {
		return Backends{}, ErrUnknownServer
	}
	return Backends{Server: server, Strategy: "round_robin", Backends: slices.Clone(bs)}, nil
}

func (f *fakeRuntime) find(server, addr string) (*Backend, error) {
	bs, ok := f.servers[server]
	if !ok {
		return nil, ErrUnknownServer
	}
	for i := range bs {
		if bs[i].Address == addr {
			return &bs[i], nil
		}
	}
	return nil, ErrUnknownAddress
}

func (f *fakeRuntime) SetDrain(server, addr string, drained bool, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := f.find(server, addr)
	if err != nil {
		return err
	}
	if f.drains != nil && f.drains.Drained(server, addr) != drained {
		f.t.Errorf("SetDrain(%s, %s, %v) called before the intent was persisted", server, addr, drained)
	}
	f.setCalls = append(f.setCalls, server+" "+addr)
	if drained {
		b.State = "draining"
	} else {
		b.State = b.Health
	}
	return nil
}

func (f *fakeRuntime) Reset(server, addr string, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := f.find(server, addr)
	if err != nil {
		return err
	}
	b.Ejections = 0
	f.resets = append(f.resets, server+" "+addr)
	return nil
}

func (f *fakeRuntime) Stats(time.Time) Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

func (f *fakeRuntime) removeServer(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.servers, id)
}

func testLogger(buf *testutil.SyncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (f *fakeRuntime) StartServer(_ context.Context, server string) error { return f.power(server) }
func (f *fakeRuntime) StopServer(_ context.Context, server string) error  { return f.power(server) }

func (f *fakeRuntime) SetMaintenance(server string, on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.servers[server]; !ok {
		return ErrUnknownServer
	}
	if f.maintStore != nil && slices.Contains(f.maintStore.All(), server) != on {
		f.t.Errorf("maintenance of %s applied before it was persisted", server)
	}
	if f.maint == nil {
		f.maint = map[string]bool{}
	}
	f.maint[server] = on
	return nil
}

func (f *fakeRuntime) power(server string) error {
	for _, s := range f.Servers(time.Time{}) {
		if s.ID == server {
			return ErrNotManaged
		}
	}
	return ErrUnknownServer
}

// The fake's players: a list the player operations really change, with the
// errors of the contract. The full fake (networks, fallbacks, balancing) is
// admintest's, which the external tests of this package use; this one keeps the
// in-package tests (auth on every route, the snapshot) honest.

func (f *fakeRuntime) Players(server string) []Player {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Player
	for _, p := range f.players {
		if server == "" || p.Server == server {
			out = append(out, p)
		}
	}
	return out
}

func (f *fakeRuntime) playerIndex(name string) int {
	return slices.IndexFunc(f.players, func(p Player) bool { return strings.EqualFold(p.Name, name) })
}

func (f *fakeRuntime) SendPlayer(_ context.Context, name, server string, _ bool) (Player, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.playerIndex(name)
	if i < 0 {
		return Player{}, ErrUnknownPlayer
	}
	bs, ok := f.servers[server]
	if !ok {
		return Player{}, ErrUnknownServer
	}
	if !f.players[i].Switchable {
		return Player{}, ErrNotSwitchable
	}
	f.players[i].Server, f.players[i].Address = server, bs[0].Address
	return f.players[i], nil
}

func (f *fakeRuntime) KickPlayer(name, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.playerIndex(name)
	if i < 0 {
		return ErrUnknownPlayer
	}
	f.kicks = append(f.kicks, f.players[i].Name+": "+reason)
	f.players = slices.Delete(f.players, i, i+1)
	return nil
}

func (f *fakeRuntime) MessagePlayer(name, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.playerIndex(name)
	switch {
	case i < 0:
		return ErrUnknownPlayer
	case !f.players[i].Switchable:
		return ErrNotIntercepted
	}
	f.told = append(f.told, f.players[i].Name+": "+text)
	return nil
}

func (f *fakeRuntime) Broadcast(text, server string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.players {
		if p.Switchable && (server == "" || p.Server == server) {
			f.told = append(f.told, p.Name+": "+text)
			n++
		}
	}
	return n
}

// MovePlayers moves the address's players to the server's first other address
// that is not draining.
func (f *fakeRuntime) MovePlayers(_ context.Context, server, addr string) (MoveResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.find(server, addr); err != nil {
		return MoveResult{}, err
	}
	var to string
	for _, b := range f.servers[server] {
		if b.Address != addr && b.State != "draining" {
			to = b.Address
			break
		}
	}
	var res MoveResult
	for i := range f.players {
		p := &f.players[i]
		if p.Server != server || p.Address != addr {
			continue
		}
		if to == "" || !p.Switchable {
			res.Stayed++
			continue
		}
		p.Address = to
		res.Moved++
	}
	return res, nil
}
