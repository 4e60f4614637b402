package manager

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

// fakeServerBin is this test binary, which a child runs as a fake server.
var fakeServerBin string

func TestMain(m *testing.M) {
	if os.Getenv(fakeServerEnv) == "1" {
		fakeServerMain(os.Args[1:])
		return
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "finding the test binary to run as a fake server:", err)
		os.Exit(1)
	}
	fakeServerBin = exe
	os.Exit(m.Run())
}

// harness is a manager wired to an event subscription, a log buffer and the fake
// providers it built, with every provider type registered.
type harness struct {
	m    *Manager
	bus  *events.Bus
	sub  *events.Sub
	logs *testutil.SyncBuffer

	readyCh chan string // every OnReady call, as server@address

	mu    sync.Mutex
	fakes map[string][]*fakeProvider // server -> providers built for it, oldest first
}

// newHarness builds a manager on clock (nil: the real clock). Cleanup shuts it
// down and fails the test on a state change outside the state machine.
func newHarness(t *testing.T, clock Clock) *harness {
	t.Helper()
	h := &harness{bus: events.NewBus(), logs: &testutil.SyncBuffer{}, fakes: map[string][]*fakeProvider{},
		readyCh: make(chan string, 64)}
	h.sub = h.bus.Subscribe(256, events.ServerStateChange)
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.m = New(Options{
		Bus:     h.bus,
		Logger:  log,
		Clock:   clock,
		OnReady: func(server, addr string) { h.readyCh <- server + "@" + addr },
		Providers: map[string]ProviderFunc{
			"local":       localProviders(log, ""),
			"pterodactyl": pteroProviders(&http.Client{Timeout: 5 * time.Second}),
			"fake":        h.newFake(false),
			"fakechild":   h.newFake(true),
		},
	})
	t.Cleanup(func() {
		if err := h.m.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		h.sub.Close()
		if strings.Contains(h.logs.String(), "outside the state machine") {
			t.Error("the manager made a state change its transition table does not allow")
		}
		if t.Failed() {
			t.Logf("manager log:\n%s", h.logs.String())
		}
	})
	return h
}

func (h *harness) newFake(child bool) ProviderFunc {
	return func(server string, sm *config.ServerManager, notify func()) (Provider, error) {
		f := &fakeProvider{id: server, notify: notify, onStart: PhaseRunning}
		h.mu.Lock()
		h.fakes[server] = append(h.fakes[server], f)
		h.mu.Unlock()
		if child {
			return fakeChild{f}, nil
		}
		return f, nil
	}
}

// fake is the newest provider built for server.
func (h *harness) fake(t *testing.T, server string) *fakeProvider {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	fs := h.fakes[server]
	if len(fs) == 0 {
		t.Fatalf("no fake provider was built for %s", server)
	}
	return fs[len(fs)-1]
}

// nextReady waits for the next OnReady call; it runs outside the manager's lock,
// so it may come just after the login that the start let through.
func (h *harness) nextReady(t *testing.T) string {
	t.Helper()
	select {
	case r := <-h.readyCh:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("OnReady was not called")
		return ""
	}
}

// noMoreReady fails if OnReady was called again.
func (h *harness) noMoreReady(t *testing.T) {
	t.Helper()
	select {
	case r := <-h.readyCh:
		t.Errorf("unexpected OnReady call %s", r)
	default:
	}
}

// waitState reads server.state_change events until one reaches want, and returns it.
func (h *harness) waitState(t *testing.T, server string, want State) StateChange {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ev, err := h.sub.Next(ctx)
		if err != nil {
			t.Fatalf("no %s event for %s: %v (state now %s)", want, server, err, h.m.State(server))
		}
		if sc, ok := ev.Data.(StateChange); ok && sc.Server == server && sc.To == string(want) {
			return sc
		}
	}
}

func (h *harness) configure(t *testing.T, servers ...*config.Server) {
	t.Helper()
	if err := h.m.Configure(servers); err != nil {
		t.Fatalf("Configure: %v", err)
	}
}

// firstPoll runs one synchronous poll pass, as Run would.
func (h *harness) firstPoll() {
	h.m.check()
	h.m.wg.Wait()
}

// fakeServer is a managed server of a fake provider type ("fake": like a panel,
// "fakechild": like a local process); version stands in for the command, so a
// reload with another version makes a new provider.
func fakeServer(id, typ, version string, addrs ...string) *config.Server {
	s := &config.Server{ID: id, ServerManager: &config.ServerManager{
		Type: typ, Command: version,
		StartTimeout: config.Duration(time.Minute), PollInterval: config.Duration(5 * time.Second),
		ShutdownTimeout: config.Duration(30 * time.Second),
	}}
	for _, a := range addrs {
		s.Addresses = append(s.Addresses, config.Address{Address: a, Weight: 1})
	}
	return s
}

// fakeProvider is a backend whose phase the test sets; gates hold Start or Stop
// until the test releases them.
type fakeProvider struct {
	id     string
	notify func()

	mu          sync.Mutex
	phase       Phase
	reason      string
	onStart     Phase // the phase a successful Start moves to
	startErr    error
	statusErr   error
	startGate   chan struct{} // when set, Start waits until it is closed
	stopGate    chan struct{} // when set, Stop waits until it is closed
	stopEntered chan struct{} // when set, closed as Stop begins
	stopErr     error         // when set, Stop fails with it and the backend keeps running
	starts      int
	graces      []time.Duration // the grace of every Stop call
	output      []string
}

func (f *fakeProvider) Start(ctx context.Context) error {
	f.mu.Lock()
	gate := f.startGate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return fmt.Errorf("fake start of %s: %w", f.id, ctx.Err())
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
	if f.startErr != nil {
		return f.startErr
	}
	f.phase, f.reason = f.onStart, ""
	return nil
}

func (f *fakeProvider) Stop(ctx context.Context, grace time.Duration) (string, error) {
	f.mu.Lock()
	f.graces = append(f.graces, grace)
	f.phase = PhaseStopping
	gate, entered, stopErr := f.stopGate, f.stopEntered, f.stopErr
	f.mu.Unlock()
	if entered != nil {
		close(entered)
	}
	if stopErr != nil {
		return "killed (SIGKILL)", stopErr
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return "", fmt.Errorf("fake stop of %s: %w", f.id, ctx.Err())
		}
	}
	f.mu.Lock()
	f.phase = PhaseStopped
	f.mu.Unlock()
	return "stopped cleanly", nil
}

func (f *fakeProvider) Status(context.Context) (Observation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.statusErr != nil {
		return Observation{}, f.statusErr
	}
	return Observation{Phase: f.phase, Reason: f.reason}, nil
}

// set changes the backend on its own (a crash, a start outside the proxy) and
// tells the manager, as a provider's watcher would.
func (f *fakeProvider) set(p Phase, reason string) {
	f.mu.Lock()
	f.phase, f.reason = p, reason
	f.mu.Unlock()
	f.notify()
}

// configure changes the fake's behaviour under its lock.
func (f *fakeProvider) configure(change func(f *fakeProvider)) {
	f.mu.Lock()
	change(f)
	f.mu.Unlock()
}

func (f *fakeProvider) phaseNow() Phase {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.phase
}

func (f *fakeProvider) startCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts
}

func (f *fakeProvider) stopGraces() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.graces)
}

// fakeChild is a fake that, like a local process, is the proxy's child, knows
// its state without I/O and keeps console output.
type fakeChild struct{ *fakeProvider }

func (f fakeChild) Alive() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.phase == PhaseStarting || f.phase == PhaseRunning || f.phase == PhaseStopping
}

func (f fakeChild) StatusNow() Observation {
	obs, _ := f.Status(context.Background())
	return obs
}

func (f fakeChild) LastOutput() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.output)
}

// manualClock is testutil's hand-moved clock with timers: a timer fires when
// Advance crosses its time, and waitTimers lets a test wait until the manager has
// armed its timers before moving the clock, so nothing depends on sleeping.
type manualClock struct {
	*testutil.Clock
	mu      sync.Mutex
	timers  map[*manualTimer]struct{}
	changed chan struct{} // closed and replaced when the set of timers changes
}

type manualTimer struct {
	at time.Time
	c  chan time.Time
}

func newManualClock() *manualClock {
	return &manualClock{
		Clock:  testutil.NewClock(time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)),
		timers: map[*manualTimer]struct{}{}, changed: make(chan struct{}),
	}
}

func (c *manualClock) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *manualClock) NewTimer(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{at: c.Now().Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- t.at
		return t.c, func() {}
	}
	c.timers[t] = struct{}{}
	c.signal()
	return t.c, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.timers[t]; ok {
			delete(c.timers, t)
			c.signal()
		}
	}
}

// Advance moves the clock and fires every timer whose time came.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Clock.Advance(d)
	now := c.Now()
	for t := range c.timers {
		if !t.at.After(now) {
			t.c <- now
			delete(c.timers, t)
		}
	}
	c.signal()
}

// waitTimers blocks until at least n timers are armed.
func (c *manualClock) waitTimers(t *testing.T, n int) {
	t.Helper()
	failsafe := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		armed, ch := len(c.timers), c.changed
		c.mu.Unlock()
		if armed >= n {
			return
		}
		select {
		case <-ch:
		case <-failsafe:
			t.Fatalf("only %d timers armed, want %d", armed, n)
		}
	}
}
