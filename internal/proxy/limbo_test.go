package proxy

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/accounts"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// awaitJoin waits for the client to be in a world (the limbo's or a server's).
func (pc *playClient) awaitJoin(t *testing.T) {
	t.Helper()
	select {
	case <-pc.joins:
	case k := <-pc.kicked:
		t.Fatalf("kicked (%q) before entering a world", k)
	case <-time.After(10 * time.Second):
		t.Fatal("no join game within 10s")
	}
}

// awaitPlayer waits until the players list shows name on server at address.
func awaitPlayer(t *testing.T, tp *testProxy, name, server, address string) {
	t.Helper()
	waitFor(t, name+" on "+server+"/"+address, func() bool {
		for _, pl := range tp.Players("") {
			if pl.Name == name && pl.Server == server && pl.Address == address {
				return true
			}
		}
		return false
	})
}

// A player who wakes a sleeping server waits in the limbo (in a world, with
// keep-alives, however long the start takes) and is moved in when it is ready;
// the players waiting for one start share it: one EnsureStarted for all.
func TestWakeHoldsPlayerInLimbo(t *testing.T) {
	// The backend listens from the start (a port reserved by closing a listener
	// can be taken by a client's connection meanwhile); what holds the players
	// is the manager's start, which ends only on release.
	addr := startPlayBackendAt(t, "127.0.0.1:0", "woken", 0).addr
	s := interceptedServer("sleepy", config.ModeOffline, addr)
	s.ServerManager = &config.ServerManager{Type: "local", Command: "true"}
	s.LimboHandlers = []config.LimboHandler{config.LimboWake}
	release := make(chan struct{})
	m := newFakeManager(map[string]string{"sleepy": "sleeping"}, nil)
	m.start = func(ctx context.Context, server string) error {
		m.setState(server, "starting")
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		m.setState(server, "online")
		return nil
	}
	tp := startProxyOpts(t, nil, Options{Manager: m}, s)
	pc := joinAndPlay(t, tp.addr, "sleepy.test", "Early")
	pc.awaitJoin(t) // the limbo's world
	awaitPlayer(t, tp, "Early", "sleepy", "limbo")
	late := joinAndPlay(t, tp.addr, "sleepy.test", "Late")
	late.awaitJoin(t)
	awaitPlayer(t, tp, "Late", "sleepy", "limbo")
	close(release)
	pc.await(t, "hello from woken")
	late.await(t, "hello from woken")
	awaitPlayer(t, tp, "Early", "sleepy", addr)
	awaitPlayer(t, tp, "Late", "sleepy", addr)
	if n := m.ensured.Load(); n != 1 {
		t.Fatalf("EnsureStarted called %d times for one start", n)
	}
}

// A full server queues the players who arrive and lets them in, in order, as
// slots open; a queue_priority player goes first.
func TestQueueAdmitsInOrder(t *testing.T) {
	b := startPlayBackendAt(t, "127.0.0.1:0", "Q", 1)
	s := interceptedServer("full", config.ModeOffline, b.addr)
	s.LimboHandlers = []config.LimboHandler{config.LimboQueue}
	s.QueuePriority = []string{"VIP"}
	tp := startProxy(t, nil, s)
	first := joinAndPlay(t, tp.addr, "full.test", "First")
	first.await(t, "hello from Q")
	var queued []*playClient
	for _, name := range []string{"Second", "Third", "VIP"} {
		pc := joinAndPlay(t, tp.addr, "full.test", name)
		pc.awaitJoin(t) // held in the limbo
		awaitPlayer(t, tp, name, "full", "limbo")
		queued = append(queued, pc)
	}
	// Each admitted player leaves after landing, which frees the slot.
	first.net.Close()
	for _, pc := range []*playClient{queued[2], queued[0], queued[1]} {
		pc.await(t, "hello from Q")
		pc.net.Close()
	}
	b.mu.Lock()
	order := slices.Clone(b.order)
	b.mu.Unlock()
	if want := []string{"First", "VIP", "Second", "Third"}; !slices.Equal(order, want) {
		t.Fatalf("admitted in the order %v, want %v", order, want)
	}
}

// During maintenance, staff go through and other players wait in the limbo until
// it ends; a passthrough server in maintenance tells them.
func TestMaintenanceHoldsAndLetsStaffThrough(t *testing.T) {
	b := startPlayBackend(t, "M")
	s := interceptedServer("maint", config.ModeOffline, b.addr)
	s.LimboHandlers = []config.LimboHandler{config.LimboMaintenance}
	s.MaintenanceStaff = []string{"admin"}
	pt := newServer("pt", []string{"pt.test"}, b.addr)
	tp := startProxy(t, nil, s, pt)
	if err := tp.SetMaintenance("maint", true); err != nil {
		t.Fatal(err)
	}
	if err := tp.SetMaintenance("pt", true); err != nil {
		t.Fatal(err)
	}
	staff := joinAndPlay(t, tp.addr, "maint.test", "Admin")
	staff.await(t, "hello from M")
	player := joinAndPlay(t, tp.addr, "maint.test", "Player")
	player.awaitJoin(t)
	awaitPlayer(t, tp, "Player", "maint", "limbo")
	mustLogin(t, tp.addr, direct, "pt.test", "Someone", "pt is under maintenance, please come back later")
	if err := tp.SetMaintenance("maint", false); err != nil {
		t.Fatal(err)
	}
	player.await(t, "hello from M")
}

// A player whose server goes down (no kick, the connection just drops) waits in
// the limbo and is moved back when it answers again.
func TestServerDownHoldsThenReturns(t *testing.T) {
	a := startPlayBackend(t, "A")
	addr := a.addr
	s := interceptedServer("lobby", config.ModeOffline, addr)
	s.LimboHandlers = []config.LimboHandler{config.LimboQueue}
	tp := startProxy(t, nil, s)
	pc := joinAndPlay(t, tp.addr, "lobby.test", "Steve")
	pc.await(t, "hello from A")
	a.stop()
	pc.awaitJoin(t) // the limbo's world
	startPlayBackendAt(t, addr, "A again", 0)
	pc.await(t, "hello from A again")
	awaitPlayer(t, tp, "Steve", "lobby", addr)
}

// typeCommand sends a chat command (/register ...) as a 1.21 client does.
func (pc *playClient) typeCommand(t *testing.T, line string) {
	t.Helper()
	id, _ := pc.reg.ID(mc.PlayState, mc.Serverbound, mc.PacketChatCommand)
	if err := pc.conn.WritePacket(id, mc.AppendString(nil, line)); err != nil {
		t.Fatal(err)
	}
}

// A player who logs in to a full server through the auth limbo is handed on
// to that server's queue, not let to poll for a slot of their own: the queue's
// order holds for them (queue_priority first).
func TestAuthLimboHandsOnToTheQueue(t *testing.T) {
	b := startPlayBackendAt(t, "127.0.0.1:0", "Q", 1)
	s := interceptedServer("full", config.ModeOffline, b.addr)
	s.LimboHandlers = []config.LimboHandler{config.LimboAuth, config.LimboQueue}
	s.QueuePriority = []string{"VIP"}
	dir := t.TempDir()
	tp := startProxyOpts(t, func(c *config.Config) {
		c.AuthLimbo.Argon2 = config.Argon2{MemoryKiB: 64, Iterations: 1, Parallelism: 1}
	}, Options{OpenAccounts: func() (accounts.Store, error) { return accounts.OpenBolt(dir) }}, s)
	in := func(name string) *playClient {
		pc := joinAndPlay(t, tp.addr, "full.test", name)
		pc.awaitJoin(t) // the auth limbo
		pc.typeCommand(t, "register passw0rd passw0rd")
		return pc
	}
	first := in("First")
	first.await(t, "hello from Q")
	second := in("Second")
	waitFor(t, "Second in the queue", func() bool { return tp.limbos.queueOf("full").len() == 1 })
	vip := in("VIP")
	waitFor(t, "VIP in the queue", func() bool { return tp.limbos.queueOf("full").len() == 2 })
	first.net.Close()
	vip.await(t, "hello from Q")
	vip.net.Close()
	second.await(t, "hello from Q")
	b.mu.Lock()
	order := slices.Clone(b.order)
	b.mu.Unlock()
	if want := []string{"First", "VIP", "Second"}; !slices.Equal(order, want) {
		t.Fatalf("admitted in the order %v, want %v", order, want)
	}
}

// A server in maintenance without the maintenance handler refuses a player
// who logs in through the auth limbo, as it refuses any login, instead of
// keeping them in the limbo polling.
func TestAuthLimboRefusedByMaintenanceWithoutItsHandler(t *testing.T) {
	b := startPlayBackend(t, "M")
	s := interceptedServer("maint", config.ModeOffline, b.addr)
	s.LimboHandlers = []config.LimboHandler{config.LimboAuth}
	dir := t.TempDir()
	tp := startProxyOpts(t, func(c *config.Config) {
		c.AuthLimbo.Argon2 = config.Argon2{MemoryKiB: 64, Iterations: 1, Parallelism: 1}
	}, Options{OpenAccounts: func() (accounts.Store, error) { return accounts.OpenBolt(dir) }}, s)
	pc := joinAndPlay(t, tp.addr, "maint.test", "Player")
	pc.awaitJoin(t)
	if err := tp.SetMaintenance("maint", true); err != nil {
		t.Fatal(err)
	}
	pc.typeCommand(t, "register passw0rd passw0rd")
	select {
	case k := <-pc.kicked:
		if k != "maint is under maintenance, please come back later" {
			t.Fatalf("kicked with %q, want the maintenance refusal", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still held after the login: no refusal")
	}
}
