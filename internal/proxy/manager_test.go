package proxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/manager"
)

// fakeManager is the server manager as the proxy sees it: it counts EnsureStarted
// calls and lets each test decide what a start does.
type fakeManager struct {
	mu      sync.Mutex
	managed map[string]string // server -> state
	start   func(ctx context.Context, server string) error

	ensured atomic.Int64
	joined  atomic.Int64
	left    atomic.Int64
}

func newFakeManager(states map[string]string, start func(ctx context.Context, server string) error) *fakeManager {
	return &fakeManager{managed: states, start: start}
}

func (m *fakeManager) Managed(server string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.managed[server]
	return ok
}

func (m *fakeManager) State(server string) manager.State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return manager.State(m.managed[server])
}

func (m *fakeManager) setState(server, state string) {
	m.mu.Lock()
	m.managed[server] = state
	m.mu.Unlock()
}

func (m *fakeManager) EnsureStarted(ctx context.Context, server string) error {
	m.ensured.Add(1)
	if m.start == nil {
		return errors.New("fake manager: no start behaviour")
	}
	return m.start(ctx, server)
}

func (m *fakeManager) PlayerJoined(string)              { m.joined.Add(1) }
func (m *fakeManager) PlayerLeft(string)                { m.left.Add(1) }
func (m *fakeManager) Configure([]*config.Server) error { return nil }

// managedServer is a server config with a [server_manager] whose address nobody
// listens on yet; active probing is off, as for a server that is asleep on purpose.
func managedServer(t *testing.T, id, domain string) (*config.Server, string) {
	addr := laterAddress(t)
	s := newServer(id, []string{domain}, addr)
	s.ServerManager = &config.ServerManager{Type: "local", Command: "true"}
	off := config.ActiveHealth{Enabled: false}
	s.ActiveHealth = &off
	return s, addr
}

func TestManagedStatusNeverWakes(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "sleepy", MOTD: "awake and well"})
	s := newServer("sleepy", []string{"sleepy.com"}, b.Addr())
	s.MOTD.Sleeping = textMOTD("zzz — custom sleeping")
	s.MOTD.Crashed = textMOTD("custom crash screen")
	m := newFakeManager(map[string]string{"sleepy": "sleeping"}, nil)
	tp := startProxyOpts(t, nil, Options{Manager: m}, s)

	cases := []struct{ state, want string }{
		{"sleeping", "zzz — custom sleeping"},
		{"offline", "zzz — custom sleeping"},
		{"starting", "§eStarting — you will be connected in a moment"}, // built-in default
		{"crashed", "custom crash screen"},
		{"stopping", "zzz — custom sleeping"},
		{"online", "awake and well"}, // relayed from the backend
		{"crashed", "custom crash screen"},
	}
	for _, tc := range cases {
		m.setState("sleepy", tc.state)
		for i := 0; i < 3; i++ {
			mustPing(t, tp.addr, direct, "sleepy.com", tc.want)
		}
	}
	if n := m.ensured.Load(); n != 0 {
		t.Fatalf("status pings called EnsureStarted %d times; a ping must never start a server", n)
	}
	if n := b.StatusRequests.Load(); n != 1 {
		t.Fatalf("backend saw %d status requests; only the one while online may reach it", n)
	}
	if n := b.Logins.Load(); n != 0 {
		t.Fatalf("backend saw %d logins", n)
	}
}

func textMOTD(text string) *config.MOTD { return &config.MOTD{Text: text} }

func TestManagedLoginWakesThenLands(t *testing.T) {
	s, addr := managedServer(t, "sleepy", "sleepy.com")
	called := make(chan struct{}, 1)
	release := make(chan struct{})
	m := newFakeManager(map[string]string{"sleepy": "sleeping"}, nil)
	m.start = func(ctx context.Context, server string) error {
		m.setState(server, "starting")
		called <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	tp := startProxyOpts(t, nil, Options{Manager: m}, s)
	// If the test fails early, free the waiting login before the proxy shuts down
	// (cleanups run last-registered first).
	var releaseOnce sync.Once
	freeStart := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(freeStart)
	mustPing(t, tp.addr, direct, "sleepy.com", "§7Sleeping — join to wake it up")

	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		text, err := loginResult(t, tp.addr, direct, "sleepy.com", loginStartOf("Alex"))
		done <- result{text, err}
	}()
	select {
	case <-called:
	case r := <-done:
		t.Fatalf("login finished before the server was started: %q, %v", r.text, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("a login on a sleeping server never called EnsureStarted")
	}
	// While the player waits: the MOTD says starting, and pings still start nothing.
	mustPing(t, tp.addr, direct, "sleepy.com", "§eStarting — you will be connected in a moment")

	// The fake "starts" the server: a backend appears on the configured address.
	b, err := fakemc.Start(addr, fakemc.Options{Name: "sleepy", MOTD: "good morning"})
	if err != nil {
		t.Fatalf("start the woken backend on %s: %v", addr, err)
	}
	t.Cleanup(func() { b.Close() })
	m.setState("sleepy", "online")
	freeStart()

	r := <-done
	if r.err != nil || r.text != landed("sleepy", "Alex") {
		t.Fatalf("waiting player: %q, %v; want to land on the woken backend", r.text, r.err)
	}
	if n := m.ensured.Load(); n != 1 {
		t.Fatalf("EnsureStarted called %d times, want 1", n)
	}
	mustPing(t, tp.addr, direct, "sleepy.com", "good morning")
	waitFor(t, "PlayerJoined and PlayerLeft", func() bool { return m.joined.Load() == 1 && m.left.Load() == 1 })
}

func TestManagedRefusedPlayersNeverWake(t *testing.T) {
	pub := startBackend(t, fakemc.Options{Name: "pub", MOTD: "pub motd"})
	s, _ := managedServer(t, "sleepy", "sleepy.com")
	s.IPFilter.Deny = []string{"192.0.2.0/24"}
	m := newFakeManager(map[string]string{"sleepy": "sleeping"}, func(context.Context, string) error {
		return errors.New("Server is starting, please reconnect in a moment")
	})
	store, err := bans.Open("", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, bn := range []bans.Ban{
		{Type: bans.TypeUsername, Value: "Griefer", Reason: "griefing"},
		{Type: bans.TypeIP, Value: "203.0.113.9", Reason: "bad range"},
	} {
		if _, err := store.Add(bn, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	tp := startProxyOpts(t, func(c *config.Config) {
		c.ReceiveProxyProtocol = true
		c.RateLimit.Enabled = true
		c.RateLimit.MaxConnections = 2
		c.RateLimit.Window = config.Duration(time.Hour)
	}, Options{Manager: m, Bans: store}, newServer("pub", []string{"pub.com"}, pub.Addr()), s)

	// Banned by name and by IP.
	if got, err := loginResult(t, tp.addr, v2("198.51.100.1:1000"), "sleepy.com", loginStartOf("Griefer")); err != nil || got != "You are banned: griefing" {
		t.Fatalf("banned player: %q, %v", got, err)
	}
	if got, err := loginResult(t, tp.addr, v2("203.0.113.9:1000"), "sleepy.com", loginStartOf("Alex")); err != nil || got != "You are banned: bad range" {
		t.Fatalf("banned IP: %q, %v", got, err)
	}
	// Rate limited: the IP spent its tokens elsewhere.
	limited := v2("198.51.100.2:1000")
	mustLogin(t, tp.addr, limited, "pub.com", "Bob", landed("pub", "Bob"))
	mustLogin(t, tp.addr, limited, "pub.com", "Bob", landed("pub", "Bob"))
	mustLogin(t, tp.addr, limited, "sleepy.com", "Bob", rateLimited)
	// Filtered by the server's ip_filter.
	mustBeRefusedSilently(t, tp.addr, v2("192.0.2.7:1000"), "sleepy.com", "Carl")
	// Status pings, from anyone.
	for i := 0; i < 5; i++ {
		mustPing(t, tp.addr, v2("198.51.100.3:1000"), "sleepy.com", "§7Sleeping — join to wake it up")
	}
	if n := m.ensured.Load(); n != 0 {
		t.Fatalf("refused players or pings called EnsureStarted %d times; want 0", n)
	}

	// A player who passes every check does ask for a start.
	mustLogin(t, tp.addr, v2("198.51.100.4:1000"), "sleepy.com", "Dana", "Server is starting, please reconnect in a moment")
	if n := m.ensured.Load(); n != 1 {
		t.Fatalf("EnsureStarted called %d times for one admitted player, want 1", n)
	}
}

func TestManagedStartErrorReachesPlayer(t *testing.T) {
	// The server's address is a listener that only counts connections: a failed start
	// must never be followed by a dial.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int64
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-acceptDone })
	s, _ := managedServer(t, "sleepy", "sleepy.com")
	s.Addresses[0].Address = ln.Addr().String()

	const reason = "server sleepy crashed while starting: exit status 1 (java.lang.OutOfMemoryError)"
	m := newFakeManager(map[string]string{"sleepy": "sleeping"}, func(context.Context, string) error {
		return errors.New(reason)
	})
	tp := startProxyOpts(t, nil, Options{Manager: m}, s)
	for i := 0; i < 2; i++ {
		got, err := loginResult(t, tp.addr, direct, "sleepy.com", loginStartOf("Alex"))
		if err != nil {
			t.Fatalf("start failure closed the player silently: %v", err)
		}
		if got != reason {
			t.Fatalf("start failure text %q, want %q", got, reason)
		}
	}
	if n := m.ensured.Load(); n != 2 {
		t.Fatalf("EnsureStarted called %d times, want once per admitted login (2)", n)
	}
	if n := dials.Load(); n != 0 {
		t.Fatalf("the proxy dialed the server %d times after its start failed", n)
	}
	if n := m.joined.Load(); n != 0 {
		t.Fatalf("PlayerJoined called %d times for players who never joined", n)
	}
}
