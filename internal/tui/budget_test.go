package tui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/admin/admintest"
	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// fixtureRuntime serves fixture() as a running proxy would; its players are an
// admintest roster, so sends and kicks really change them.
type fixtureRuntime struct {
	*admintest.Roster
	snap Snapshot
}

func newFixtureRuntime() fixtureRuntime {
	snap := fixture()
	var servers []admintest.Server
	for _, s := range snap.Servers {
		srv := admintest.Server{ID: s.ID, ProxyMode: s.ProxyMode}
		for _, b := range snap.Backends[s.ID].Backends {
			srv.Addresses = append(srv.Addresses, b.Address)
		}
		servers = append(servers, srv)
	}
	roster := admintest.NewRoster(servers...)
	for _, p := range snap.Players {
		roster.Join(p)
	}
	return fixtureRuntime{Roster: roster, snap: snap}
}

func (f fixtureRuntime) Servers(time.Time) []admin.ServerInfo { return f.snap.Servers }
func (f fixtureRuntime) Backends(id string, _ time.Time) (admin.Backends, error) {
	b, ok := f.snap.Backends[id]
	if !ok {
		return admin.Backends{}, admin.ErrUnknownServer
	}
	return b, nil
}
func (fixtureRuntime) SetDrain(string, string, bool, time.Time) error { return nil }
func (fixtureRuntime) Reset(string, string, time.Time) error          { return nil }
func (f fixtureRuntime) Stats(time.Time) admin.Stats                  { return f.snap.Stats }
func (fixtureRuntime) StartServer(context.Context, string) error      { return admin.ErrNotManaged }
func (fixtureRuntime) StopServer(context.Context, string) error       { return admin.ErrNotManaged }
func (fixtureRuntime) SetMaintenance(string, bool) error              { return admin.ErrUnknownServer }

// requestLog records every request an admin server answered, with the simulated
// time it arrived at.
type requestLog struct {
	mu   sync.Mutex
	now  time.Time
	reqs []loggedRequest
}

type loggedRequest struct {
	at     time.Time
	path   string
	status int
}

func (l *requestLog) setNow(t time.Time) { l.mu.Lock(); l.now = t; l.mu.Unlock() }
func (l *requestLog) Now() time.Time     { l.mu.Lock(); defer l.mu.Unlock(); return l.now }

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }
func (r *statusRecorder) Flush()               { r.ResponseWriter.(http.Flusher).Flush() }

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := l.Now()
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		l.mu.Lock()
		i := len(l.reqs)
		l.reqs = append(l.reqs, loggedRequest{at: at, path: r.URL.Path})
		l.mu.Unlock()
		h.ServeHTTP(rec, r)
		l.mu.Lock()
		l.reqs[i].status = rec.status
		l.mu.Unlock()
	})
}

// proxyFleet is an admin.Fleet of two proxies for the budget tests: eu-1 (this
// one) and eu-2 with two players; unreachable turns its player list into the
// API's 503.
type proxyFleet struct {
	mu          sync.Mutex
	unreachable bool
}

func (*proxyFleet) ShareBackend(context.Context, admin.Action, string, string) admin.FleetDelivery {
	return admin.FleetDelivery{State: admin.FleetShared}
}
func (*proxyFleet) ShareMaintenance(context.Context, string, bool) admin.FleetDelivery {
	return admin.FleetDelivery{State: admin.FleetShared}
}
func (*proxyFleet) ShareBan(context.Context, bans.Ban, bool) admin.FleetDelivery {
	return admin.FleetDelivery{State: admin.FleetShared}
}
func (*proxyFleet) Status() admin.FleetStatus {
	return admin.FleetStatus{Enabled: true, ID: "eu-1", Connected: true, LiveProxies: 2, Players: 7}
}
func (f *proxyFleet) Players(context.Context, string) ([]admin.FleetPlayer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unreachable {
		return nil, admin.ErrFleetUnreachable
	}
	return []admin.FleetPlayer{
		{Player: admin.Player{Name: "Steve", Server: "survival", Since: t0}, Proxy: "eu-2"},
		{Player: admin.Player{Name: "carol", Server: "lobby", Since: t0}, Proxy: "eu-2"},
	}, nil
}

// topAgainstAdmin runs a dashboard with its default interval against a real admin
// API with the default limit of 60 requests a minute ([web] defaults), in a
// fleet when fleet is not nil; every request is logged at its simulated time.
func topAgainstAdmin(t *testing.T, fleet admin.Fleet) (*harness, *requestLog) {
	t.Helper()
	const key = "0123456789abcdef0123456789abcdef"
	log := &requestLog{now: t0}
	defaults := config.Default()
	srv, err := admin.NewServer(admin.ServerOptions{
		Web:     defaults.Web,
		APIKey:  key,
		Runtime: newFixtureRuntime(),
		Bus:     events.NewBus(),
		Now:     log.Now,
		Fleet:   fleet,
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(log.wrap(srv))
	t.Cleanup(hs.Close) // after the model's Close below has ended its event stream
	c := admin.NewClient(hs.URL, key)

	h := &harness{t: t, now: t0}
	h.m = New(Options{Client: c, Events: AdminEvents{C: c}, Now: func() time.Time { return h.now },
		Renderer: asciiRenderer()}) // Interval left at its default, as `infrarust top` runs
	h.m.after = func(d time.Duration, msg tea.Msg) tea.Cmd {
		h.timers = append(h.timers, timer{d, h.now.Add(d), msg})
		return nil
	}
	h.holdStreams()
	t.Cleanup(h.m.Close)
	return h, log
}

// perMinute counts the requests of each of the first n minutes, failing on any 429.
func (l *requestLog) perMinute(t *testing.T, n int) (counts []int, byPath map[string]int) {
	t.Helper()
	l.mu.Lock()
	reqs := append([]loggedRequest(nil), l.reqs...)
	l.mu.Unlock()
	counts, byPath = make([]int, n), map[string]int{}
	for _, r := range reqs {
		if r.status == http.StatusTooManyRequests {
			t.Fatalf("throttled at %v on %s: the dashboard must live within the default limit", r.at.Sub(t0), r.path)
		}
		if m := int(r.at.Sub(t0) / time.Minute); m < n {
			counts[m]++
		}
		byPath[r.path]++
	}
	return counts, byPath
}

// TestTopStaysWithinTheDefaultAdminLimit runs the dashboard with its defaults for
// ten simulated minutes against a real admin API with the default limit: it must
// never be throttled, and any minute holds at most one snapshot request per
// DefaultInterval plus the event stream.
func TestTopStaysWithinTheDefaultAdminLimit(t *testing.T) {
	h, log := topAgainstAdmin(t, nil)
	for _, msg := range run(h.m.Init()) {
		h.send(msg)
	}
	h.runUntil(t0.Add(10*time.Minute), log.setNow)

	perMinute, byPath := log.perMinute(t, 10)
	snapshots := byPath["/api/v1/snapshot"]
	limit := int(time.Minute/DefaultInterval) + 1 // + the event stream
	for m, n := range perMinute {
		if n > limit {
			t.Errorf("minute %d: %d requests, want at most %d", m, n, limit)
		}
	}
	t.Logf("requests per minute with the defaults: %v (%d snapshot requests in 10 minutes)", perMinute, snapshots)
	if snapshots < 10*int(time.Minute/DefaultInterval) {
		t.Errorf("only %d snapshot requests in 10 minutes: the view is not being refreshed", snapshots)
	}
}

// TestTopFleetModeStaysWithinTheDefaultAdminLimit: with the players pane showing
// the whole fleet, the fleet's list is one more request per interval (two
// with the snapshot, 24 a minute plus the stream by default, still far inside
// 60), across a Redis outage too; hidden, or back in local mode, it costs nothing.
func TestTopFleetModeStaysWithinTheDefaultAdminLimit(t *testing.T) {
	fleet := &proxyFleet{}
	h, log := topAgainstAdmin(t, fleet)
	h.send(tea.WindowSizeMsg{Width: 120, Height: 40}) // the players pane shows by itself
	for _, msg := range run(h.m.Init()) {
		h.send(msg)
	}
	h.keys("f")
	if !h.m.fleetShown() {
		t.Fatalf("f did not show the fleet: %q", h.m.status)
	}
	h.runUntil(t0.Add(5*time.Minute), log.setNow)
	if got := len(h.m.visiblePlayers()); got != 7 {
		t.Fatalf("%d rows in fleet mode, want 5 of this proxy + 2 of eu-2", got)
	}
	fleet.mu.Lock()
	fleet.unreachable = true // Redis goes away for five minutes: 503s, same cadence
	fleet.mu.Unlock()
	h.runUntil(t0.Add(10*time.Minute), log.setNow)
	if !h.m.fleetUnreachable() || len(h.m.visiblePlayers()) != 7 {
		t.Fatalf("Redis away: unreachable %v, %d rows (want the last list's 7)", h.m.fleetUnreachable(), len(h.m.visiblePlayers()))
	}

	perMinute, byPath := log.perMinute(t, 10)
	perInterval := int(time.Minute / DefaultInterval)
	limit := 2*perInterval + 1 + 1 // snapshot + fleet list per interval, the stream, f's first list
	for m, n := range perMinute {
		if n > limit {
			t.Errorf("minute %d: %d requests, want at most %d", m, n, limit)
		}
	}
	lists := byPath["/api/v1/players"]
	t.Logf("requests per minute in fleet mode: %v (%d snapshots, %d fleet lists in 10 minutes)", perMinute, byPath["/api/v1/snapshot"], lists)
	if lists < 10*perInterval-1 || lists > 10*perInterval+1 {
		t.Errorf("%d fleet lists in 10 minutes, want one per interval (%d)", lists, 10*perInterval)
	}

	// Back in local mode (f), shown: no fleet list for five minutes; then fleet
	// mode again (one list at once) and hidden (p): none for five more.
	h.keys("f")
	if h.m.fleetShown() || !h.m.playersVisible() {
		t.Fatal("not back in local mode with the pane shown")
	}
	h.runUntil(t0.Add(15*time.Minute), log.setNow)
	h.keys("f", "p")
	if !h.m.fleetMode || h.m.playersVisible() {
		t.Fatal("not in fleet mode with the pane hidden")
	}
	h.runUntil(t0.Add(20*time.Minute), log.setNow)
	if _, byPath := log.perMinute(t, 20); byPath["/api/v1/players"] != lists+1 {
		t.Errorf("%d fleet lists in local mode or hidden, want only the one f asked for", byPath["/api/v1/players"]-lists)
	}
}

// TestEventBurstsCostNoRequests feeds a busy event stream (a health change, a
// reload, a server state change and a lag notice every second) and checks that
// snapshot requests stay one per interval, never closer.
func TestEventBurstsCostNoRequests(t *testing.T) {
	fc := &fakeClient{snap: fixture()}
	h := newHarness(t, fc, &fakeSource{streams: []*fakeStream{{}}})
	fc.clock = func() time.Time { return h.now }
	h.holdStreams()
	for _, msg := range run(h.m.Init()) {
		h.send(msg)
	}
	if h.m.stream == nil {
		t.Fatal("stream not open")
	}
	s := h.m.stream
	hc := events.HealthChange{Server: "survival", Address: "10.0.0.1:25565", From: "healthy", To: "unhealthy", Reason: "3 connect failures in 10s"}
	var storm []Event
	for _, ev := range []struct {
		typ  events.Type
		data any
	}{
		{events.BackendHealthChange, hc},
		{events.ConfigReload, events.Reload{Reason: "file changed", Servers: []string{"survival"}}},
		{events.ServerStateChange, events.ServerState{Server: "survival", From: "sleeping", To: "starting"}},
		{events.Lagged, events.LaggedInfo{Missed: 3}},
	} {
		storm = append(storm, Event{Type: ev.typ, Data: mustJSON(t, ev.data)})
	}
	h.runUntil(t0.Add(time.Minute), func(now time.Time) {
		for _, ev := range storm {
			ev.Time = now
			h.send(eventMsg{stream: s, ev: ev})
		}
	})
	interval := h.m.interval
	for i := 1; i < len(fc.requestTimes); i++ {
		if gap := fc.requestTimes[i].Sub(fc.requestTimes[i-1]); gap < interval {
			t.Fatalf("requests %d and %d only %v apart, want at least %v", i-1, i, gap, interval)
		}
	}
	if max := int(time.Minute/interval) + 1; fc.requests > max {
		t.Fatalf("%d snapshot requests in a minute of events, want at most %d", fc.requests, max)
	}
	// The R key asks for a refresh but waits for the budget too.
	before := fc.requests
	h.keys("R")
	if fc.requests != before {
		t.Fatal("R sent a request inside the interval")
	}
}

// TestRateLimitedDashboardWaitsOutRetryAfter: a 429 is waited out for as long as
// its Retry-After says, with no request in between.
func TestRateLimitedDashboardWaitsOutRetryAfter(t *testing.T) {
	fc := &fakeClient{snap: fixture(), err: &admin.APIError{Status: 429, Code: "RATE_LIMITED",
		Message: "too many admin API requests from 127.0.0.1; retry in 45 s", RetryAfter: 45 * time.Second}}
	h := newHarness(t, fc, nil)
	fc.clock = func() time.Time { return h.now }
	h.send(tea.WindowSizeMsg{Width: 120, Height: 30})
	for _, msg := range run(h.m.Init()) {
		h.send(msg)
	}
	if fc.requests != 1 || h.m.conn != connDown {
		t.Fatalf("requests %d conn %d", fc.requests, h.m.conn)
	}
	if v := h.m.View(); !strings.Contains(v, "retrying in 45s") || !strings.Contains(v, "RATE_LIMITED") {
		t.Fatalf("view does not say it waits 45 s because it was rate limited:\n%s", v)
	}
	h.runUntil(t0.Add(44*time.Second), nil)
	if fc.requests != 1 {
		t.Fatalf("%d requests before Retry-After elapsed, want 1", fc.requests)
	}
	fc.mu.Lock()
	fc.err = nil
	fc.mu.Unlock()
	h.runUntil(t0.Add(46*time.Second), nil)
	if fc.requests != 2 || h.m.conn != connUp {
		t.Fatalf("after Retry-After: requests %d conn %d", fc.requests, h.m.conn)
	}
	// Any answered error (not just 429) is retried no sooner than the interval.
	fc.mu.Lock()
	fc.err = &admin.APIError{Status: 500, Code: "INTERNAL", Message: "boom"}
	fc.mu.Unlock()
	h.runUntil(h.now.Add(h.m.interval), nil)
	if !h.m.retryPending || h.m.backoffActive < h.m.interval {
		t.Fatalf("retry after a 500 pending %v in %v, want at least the interval %v", h.m.retryPending, h.m.backoffActive, h.m.interval)
	}
}

// TestPlayerActionsThroughTheAdminAPI drives send and kick from the keyboard
// through the real admin client and server to a fake proxy that moves players.
func TestPlayerActionsThroughTheAdminAPI(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	rt := newFixtureRuntime()
	srv, err := admin.NewServer(admin.ServerOptions{Web: config.Web{RequestsPerMinute: 100000}, APIKey: key, Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	h := newHarness(t, admin.NewClient(hs.URL, key), nil)
	for _, msg := range run(h.m.Init()) {
		h.send(msg)
	}
	h.keys("p")
	where := func(name string) string {
		for _, p := range rt.Players("") {
			if p.Name == name {
				return p.Server + " " + p.Address
			}
		}
		return "gone"
	}
	selectPlayer := func(name string) {
		t.Helper()
		for i := 0; h.m.selPlayer != name; i++ {
			if i > 10 {
				t.Fatalf("no row %q", name)
			}
			h.keys("j")
		}
	}

	selectPlayer("Notch")
	h.keys("m")
	typeText(h, "creative")
	h.keys("enter", "y")
	if got := where("Notch"); got != "creative 10.0.1.9:25565" {
		t.Fatalf("Notch on %s; status %q", got, h.m.status)
	}
	if h.m.status != "sent Notch to creative (10.0.1.9:25565)" {
		t.Fatalf("status %q", h.m.status)
	}

	// lobby is passthrough: the API refuses, and says why on the status line.
	selectPlayer("dinnerbone")
	h.keys("m")
	typeText(h, "lobby")
	h.keys("enter", "y")
	if !h.m.statusErr || !strings.Contains(h.m.status, "send dinnerbone failed: CONFLICT: dinnerbone cannot be sent to lobby") {
		t.Fatalf("status %q", h.m.status)
	}
	if got := where("dinnerbone"); got != "survival 10.0.0.2:25565" {
		t.Fatalf("dinnerbone on %s", got)
	}

	h.keys("x")
	typeText(h, "bye")
	h.keys("enter", "y")
	if got := rt.Kicks(); len(got) != 1 || got[0] != "dinnerbone: bye" || h.m.status != "kicked dinnerbone from survival: bye" {
		t.Fatalf("kicks %v, status %q", got, h.m.status)
	}
}
