package tui

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// t0 is the fixed "now" of every test.
var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func f64(v float64) *float64 { return &v }

// fixture is a state with every kind of backend: healthy, ramping, probing,
// unhealthy and draining.
func fixture() Snapshot {
	return Snapshot{
		At: t0,
		Stats: admin.Stats{
			Bind: "0.0.0.0:25565", StartedAt: t0.Add(-(3*time.Hour + 25*time.Minute + 10*time.Second)),
			PlayersOnline: 17, ConnectionsActive: 19, ConnectionsPerSec: 2.4, RejectionsPerSec: 0.3, Version: "0.1.0",
		},
		Servers: []admin.ServerInfo{
			{ID: "survival", Domains: []string{"survival.example.com", "mc.example.com"}, Strategy: "round_robin", AddressCount: 5, HealthyCount: 2, Players: 14, ProxyMode: "offline"},
			{ID: "lobby", Domains: []string{"lobby.example.com"}, Strategy: "first_available", AddressCount: 1, HealthyCount: 1, Players: 3, ProxyMode: "passthrough"},
			{ID: "creative", Domains: []string{"creative.example.com"}, Strategy: "least_conn", AddressCount: 2, HealthyCount: 0, UnknownCount: 1, ProxyMode: "client_only"},
		},
		// Some of the players the counts above stand for: intercepted ones on
		// survival, a passthrough one on lobby, one whose version the proxy does
		// not know.
		Players: []admin.Player{
			{Name: "Notch", UUID: "069a79f4-44e9-4726-a5be-fca90e38aaf5", Server: "survival", Address: "10.0.0.1:25565", ClientIP: "198.51.100.7",
				Protocol: 769, Version: "1.21.4", ProxyMode: "offline", Since: t0.Add(-(3*time.Hour + 2*time.Minute)), Switchable: true},
			{Name: "dinnerbone", Server: "survival", Address: "10.0.0.2:25565", ClientIP: "198.51.100.8",
				Protocol: 765, Version: "1.20.4", ProxyMode: "offline", Since: t0.Add(-12 * time.Minute), Switchable: true},
			{Name: "Herobrine", Server: "survival", Address: "10.0.0.1:25565", ClientIP: "203.0.113.66",
				Protocol: 999, ProxyMode: "offline", Since: t0.Add(-40 * time.Second), Switchable: true},
			{Name: "jeb_", Server: "survival", Address: "backup.internal.example.net:25565", ClientIP: "198.51.100.9",
				Protocol: 47, Version: "1.8.9", ProxyMode: "offline", Since: t0.Add(-2 * time.Hour), Switchable: true},
			{Name: "Alex", Server: "lobby", Address: "127.0.0.1:25566", ClientIP: "2001:db8::7",
				Protocol: 769, Version: "1.21.4", ProxyMode: "passthrough", Since: t0.Add(-45 * time.Minute)},
		},
		Backends: map[string]admin.Backends{
			"survival": {Server: "survival", Strategy: "round_robin", Backends: []admin.Backend{
				{Address: "10.0.0.1:25565", Weight: 10, EffectiveWeight: 10, State: "healthy", Health: "healthy", ActiveConnections: 8, Inflight: 1,
					HealthySinceSecs: f64(3600), ConnectEWMAms: f64(2.3)},
				{Address: "10.0.0.2:25565", Weight: 10, EffectiveWeight: 3.2, State: "healthy", Health: "healthy", ActiveConnections: 1, Ejections: 1,
					HealthySinceSecs: f64(12), LastFailureSecsAgo: f64(95), ConnectEWMAms: f64(4.8)},
				{Address: "10.0.0.3:25565", Weight: 5, State: "probing", Health: "probing", Ejections: 2, LastFailureSecsAgo: f64(31)},
				{Address: "10.0.0.4:25565", Weight: 5, Priority: 1, State: "unhealthy", Health: "unhealthy", Ejections: 3, LastFailureSecsAgo: f64(4), ConnectEWMAms: f64(1250)},
				{Address: "backup.internal.example.net:25565", Weight: 10, EffectiveWeight: 10, Priority: 1, State: "draining", Health: "healthy", ActiveConnections: 5,
					HealthySinceSecs: f64(7200), ConnectEWMAms: f64(31)},
			}},
			"lobby": {Server: "lobby", Strategy: "first_available", Backends: []admin.Backend{
				{Address: "127.0.0.1:25566", Weight: 1, EffectiveWeight: 1, State: "healthy", Health: "healthy", ActiveConnections: 3, ConnectEWMAms: f64(0.4)},
			}},
			"creative": {Server: "creative", Strategy: "least_conn", Backends: []admin.Backend{
				{Address: "10.0.1.9:25565", Weight: 1, State: "unhealthy", Health: "unhealthy", Ejections: 7, LastFailureSecsAgo: f64(300)},
				// Added by a reload and not checked yet: it takes players, but is not called healthy.
				{Address: "10.0.1.10:25565", Weight: 1, EffectiveWeight: 1, State: "unknown", Health: "unknown"},
			}},
		},
	}
}

// fakeClient serves a snapshot (or an error) and records requests and actions;
// a send answers the player on the target's first address, as the API does.
type fakeClient struct {
	mu      sync.Mutex
	snap    Snapshot
	err     error
	actErr  error
	actions []string
	// playerErr fails the next sends and kicks; players records them as
	// "send NAME SERVER" and "kick NAME: REASON".
	playerErr error
	players   []string
	requests  int // snapshot requests
	// clock, when set, timestamps every snapshot request into requestTimes.
	clock        func() time.Time
	requestTimes []time.Time
	// fleet is what FleetPlayers answers, or fleetErr; fleetRequests counts the
	// calls, timestamped by clock into fleetTimes.
	fleet         []admin.FleetPlayer
	fleetErr      error
	fleetRequests int
	fleetTimes    []time.Time
}

func (f *fakeClient) FleetPlayers(_ context.Context, server string) ([]admin.FleetPlayer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fleetRequests++
	if f.clock != nil {
		f.fleetTimes = append(f.fleetTimes, f.clock())
	}
	if f.fleetErr != nil {
		return nil, f.fleetErr
	}
	var out []admin.FleetPlayer
	for _, p := range f.fleet {
		if server == "" || p.Server == server {
			out = append(out, p)
		}
	}
	return out, nil
}

func (f *fakeClient) Snapshot(context.Context) (admin.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if f.clock != nil {
		f.requestTimes = append(f.requestTimes, f.clock())
	}
	return admin.Snapshot{Stats: f.snap.Stats, Servers: f.snap.Servers, Backends: f.snap.Backends, Players: f.snap.Players, Fleet: f.snap.Fleet}, f.err
}

func (f *fakeClient) findPlayer(name string) (admin.Player, bool) {
	for _, p := range f.snap.Players {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return admin.Player{}, false
}

func (f *fakeClient) SendPlayer(_ context.Context, name, server string, _ bool) (admin.Player, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.players = append(f.players, "send "+name+" "+server)
	if f.playerErr != nil {
		return admin.Player{}, f.playerErr
	}
	p, ok := f.findPlayer(name)
	bs := f.snap.Backends[server].Backends
	if !ok || len(bs) == 0 {
		return admin.Player{}, &admin.APIError{Status: 404, Code: "NOT_FOUND", Message: "no such player or server"}
	}
	p.Server, p.Address = server, bs[0].Address
	return p, nil
}

func (f *fakeClient) KickPlayer(_ context.Context, name, reason string) (admin.KickResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.players = append(f.players, "kick "+name+": "+reason)
	if f.playerErr != nil {
		return admin.KickResult{}, f.playerErr
	}
	p, ok := f.findPlayer(name)
	if !ok {
		return admin.KickResult{}, &admin.APIError{Status: 404, Code: "NOT_FOUND", Message: "no such player"}
	}
	return admin.KickResult{Player: p, Reason: reason}, nil
}

func (f *fakeClient) Act(_ context.Context, a admin.Action, server, addr string) (admin.ActionResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, string(a)+" "+server+" "+addr)
	if f.actErr != nil {
		return admin.ActionResult{}, f.actErr
	}
	state := balance.StateHealthy
	if a == admin.ActionDrain {
		state = balance.StateDraining
	}
	return admin.ActionResult{Server: server, Address: addr, Action: a,
		Backend: admin.Backend{Address: addr, Weight: 10, EffectiveWeight: 10, State: string(state), Health: "healthy"}}, nil
}

// fakeStream yields queued events, then errEnd (the proxy went away).
type fakeStream struct {
	events []Event
	closed bool
}

var errEnd = errors.New("stream ended")

func (s *fakeStream) Next() (Event, error) {
	if s.closed || len(s.events) == 0 {
		return Event{}, errEnd
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *fakeStream) Close() { s.closed = true }

// fakeSource hands out prepared streams, or fails when it has none.
type fakeSource struct {
	streams []*fakeStream
	calls   int
}

func (f *fakeSource) Subscribe(context.Context) (Stream, error) {
	f.calls++
	if len(f.streams) == 0 {
		return nil, errors.New("dial tcp 127.0.0.1:8080: connect: connection refused")
	}
	s := f.streams[0]
	f.streams = f.streams[1:]
	return s, nil
}

// timer is a tick the model asked for; tests deliver it by hand instead of waiting.
type timer struct {
	d   time.Duration
	due time.Time
	msg tea.Msg
}

// harness wraps a model with a settable clock and recorded timers.
type harness struct {
	t      *testing.T
	m      *Model
	now    time.Time
	timers []timer
}

func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

func newHarness(t *testing.T, c Client, src EventSource) *harness {
	t.Helper()
	h := &harness{t: t, now: t0}
	h.m = New(Options{Client: c, Events: src, Interval: 2 * time.Second, Now: func() time.Time { return h.now },
		Renderer: asciiRenderer(), Target: "http://127.0.0.1:8080"})
	h.m.after = func(d time.Duration, msg tea.Msg) tea.Cmd {
		h.timers = append(h.timers, timer{d, h.now.Add(d), msg})
		return nil
	}
	t.Cleanup(h.m.Close)
	return h
}

// send delivers msg and then runs every command it produces, synchronously,
// feeding results back until nothing is left.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	queue := []tea.Msg{msg}
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 1000 {
			h.t.Fatal("model does not settle")
		}
		msg, queue = queue[0], queue[1:]
		_, cmd := h.m.Update(msg)
		queue = append(queue, run(cmd)...)
	}
}

// sendOnly delivers msg without running the resulting command, which it returns.
func (h *harness) sendOnly(msg tea.Msg) tea.Cmd {
	_, cmd := h.m.Update(msg)
	return cmd
}

// run executes cmd and flattens batches; tea.Quit's message is dropped.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, run(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

func key(s string) tea.KeyMsg {
	switch s {
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// runUntil delivers the model's timers in time order, moving the clock to each,
// until the clock would pass end; inject is called at every step with the new
// time so a test can feed events in between.
func (h *harness) runUntil(end time.Time, inject func(now time.Time)) {
	h.t.Helper()
	for {
		i := -1
		for j, tm := range h.timers {
			if i < 0 || tm.due.Before(h.timers[i].due) {
				i = j
			}
		}
		if i < 0 || h.timers[i].due.After(end) {
			h.now = end
			return
		}
		tm := h.timers[i]
		h.timers = slices.Delete(h.timers, i, i+1)
		h.now = tm.due
		if inject != nil {
			inject(h.now)
		}
		h.send(tm.msg)
	}
}

// holdStreams makes the model wait for events by hand: a stream's next event is
// delivered only when a test sends it, as on a quiet proxy.
func (h *harness) holdStreams() {
	h.m.wait = func(Stream) tea.Cmd { return nil }
}

func (h *harness) keys(ks ...string) {
	h.t.Helper()
	for _, k := range ks {
		h.send(key(k))
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./internal/tui -update to accept):\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}
