package metrics

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape status %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestSeriesAndLabels(t *testing.T) {
	m := New()
	m.ConnAccepted()
	m.ConnAccepted()
	m.ConnActive(2)
	m.ConnActive(-1)
	m.ConnRejected("rate_limit")
	m.BackendConnect("lobby", "10.0.0.1:25565", 20*time.Millisecond, nil)
	m.BackendConnect("lobby", "10.0.0.2:25565", 0, errors.New("refused"))
	m.BackendConnect("lobby", "10.0.0.2:25565", 0, errors.New("refused"))
	m.HealthTransition("lobby", "10.0.0.2:25565", "unhealthy")
	m.StatusLatency("lobby", "10.0.0.1:25565", 5*time.Millisecond)
	m.PlayerJoined("lobby")
	m.PlayerJoined("lobby")
	m.PlayerLeft("lobby")
	m.BytesForwarded(100, 2500)
	m.StatusCache(true)
	m.StatusCache(false)
	m.StatusCache(false)
	m.WatchServers([]string{"online", "starting", "crashed"}, func() []ServerSample { return []ServerSample{{Server: "survival", State: "online"}} })
	m.Login("lobby", LoginSuccess)
	m.Login("lobby", LoginSuccess)
	m.Login("lobby", LoginBanned)
	m.SetBuildInfo("v1.2.3", "abc123")

	out := scrape(t, m)
	for _, want := range []string{
		"infrarust_connections_accepted_total 2",
		"infrarust_connections_active 1",
		`infrarust_connections_rejected_total{reason="rate_limit"} 1`,
		`infrarust_backend_connect_duration_seconds_count{address="10.0.0.1:25565",server="lobby"} 1`,
		`infrarust_backend_connect_duration_seconds_bucket{address="10.0.0.1:25565",server="lobby",le="0.032"} 1`,
		`infrarust_backend_connect_failures_total{address="10.0.0.2:25565",server="lobby"} 2`,
		`infrarust_backend_health_transitions_total{address="10.0.0.2:25565",server="lobby",state="unhealthy"} 1`,
		`infrarust_backend_status_latency_seconds_count{address="10.0.0.1:25565",server="lobby"} 1`,
		`infrarust_players_online{server="lobby"} 1`,
		`infrarust_forwarded_bytes_total{direction="upstream"} 100`,
		`infrarust_forwarded_bytes_total{direction="downstream"} 2500`,
		`infrarust_logins_total{outcome="success",server="lobby"} 2`,
		`infrarust_logins_total{outcome="banned",server="lobby"} 1`,
		`infrarust_build_info{commit="abc123",go_version="go`,
		"infrarust_status_cache_hits_total 1",
		"infrarust_status_cache_misses_total 2",
		`infrarust_server_state{server="survival",state="online"} 1`,
		`infrarust_server_state{server="survival",state="starting"} 0`,
		`infrarust_server_state{server="survival",state="crashed"} 0`,
		"go_goroutines ",
		"process_",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, absent := range []string{
		`infrarust_backend_connect_failures_total{address="10.0.0.1:25565"`, // success is not a failure
		"infrarust_bytes_forwarded_total",                                   // renamed to ..._bytes_total
		`infrarust_build_info{commit="unknown"`,                             // replaced by SetBuildInfo
	} {
		if strings.Contains(out, absent) {
			t.Errorf("unexpected %q", absent)
		}
	}
}

func TestForgetKeepsCardinalityBounded(t *testing.T) {
	m := New()
	m.BackendConnect("lobby", "10.0.0.1:25565", time.Millisecond, nil)
	m.BackendConnect("lobby", "10.0.0.2:25565", time.Millisecond, nil)
	m.HealthTransition("lobby", "10.0.0.2:25565", "unhealthy")
	m.StatusLatency("lobby", "10.0.0.2:25565", time.Millisecond)
	m.PlayerJoined("survival")
	m.BackendConnect("survival", "10.0.1.1:25565", 0, errors.New("x"))
	m.Login("survival", LoginNoBackend)

	m.ForgetAddress("lobby", "10.0.0.2:25565")
	m.ForgetServer("survival")
	m.PlayerLeft("survival") // its player leaves after the reload: not at -1
	out := scrape(t, m)
	if !strings.Contains(out, `address="10.0.0.1:25565"`) {
		t.Error("ForgetAddress removed a sibling address")
	}
	for _, gone := range []string{`address="10.0.0.2:25565"`, `server="survival"`} {
		if strings.Contains(out, gone) {
			t.Errorf("%s still exported after Forget", gone)
		}
	}

	// A server or address configured again later starts afresh and is exported:
	// nothing recorded into children kept from before the Forget.
	m.PlayerJoined("survival")
	m.Login("survival", LoginSuccess)
	m.BackendConnect("lobby", "10.0.0.2:25565", time.Millisecond, nil)
	out = scrape(t, m)
	for _, want := range []string{
		`infrarust_players_online{server="survival"} 1`,
		`infrarust_logins_total{outcome="success",server="survival"} 1`,
		`infrarust_backend_connect_duration_seconds_count{address="10.0.0.2:25565",server="lobby"} 1`,
		`infrarust_backend_connect_duration_seconds_count{address="10.0.0.1:25565",server="lobby"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("after Forget and use again, missing %q", want)
		}
	}
}

// A login's series cost a map lookup, not WithLabelValues' validation, hashing
// and locked search (BenchmarkLoginSeries/labels is the vectors' own path).
func BenchmarkLoginSeries(b *testing.B) {
	m := New()
	servers := make([]string, 64)
	for i := range servers {
		servers[i] = fmt.Sprintf("server-%d", i)
	}
	b.Run("cached", func(b *testing.B) {
		for i := range b.N {
			srv := servers[i%len(servers)]
			m.BackendConnect(srv, "10.0.0.1:25565", time.Millisecond, nil)
			m.PlayerJoined(srv)
			m.Login(srv, LoginSuccess)
			m.PlayerLeft(srv)
			m.BytesForwarded(1, 1)
		}
	})
	b.Run("labels", func(b *testing.B) {
		for i := range b.N {
			srv := servers[i%len(servers)]
			m.connectDuration.WithLabelValues(srv, "10.0.0.1:25565").Observe(0.001)
			m.playersOnline.WithLabelValues(srv).Inc()
			m.logins.WithLabelValues(srv, string(LoginSuccess)).Inc()
			m.playersOnline.WithLabelValues(srv).Dec()
			m.bytesForwarded.WithLabelValues("upstream").Add(1)
			m.bytesForwarded.WithLabelValues("downstream").Add(1)
		}
	})
}

func TestNilMetricsIsSafe(t *testing.T) {
	var m *Metrics
	m.ConnAccepted()
	m.ConnActive(1)
	m.ConnRejected("x")
	m.BackendConnect("a", "b", 0, nil)
	m.HealthTransition("a", "b", "c")
	m.StatusLatency("a", "b", 0)
	m.PlayerJoined("a")
	m.PlayerLeft("a")
	m.BytesForwarded(1, 1)
	m.StatusCache(true)
	m.WatchServers(nil, func() []ServerSample { return nil })
	m.Login("a", LoginSuccess)
	m.SetBuildInfo("v", "c")
	m.WatchBackends(func() []BackendSample { return nil })
	m.ForgetAddress("a", "b")
	m.ForgetServer("a")
	m.SubscribeHealth(events.NewBus())()
	if m.Registry() != nil {
		t.Fatal("nil metrics has a registry")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 404 {
		t.Fatalf("nil handler status %d", rec.Code)
	}
}

func TestSubscribeHealthCountsBusEvents(t *testing.T) {
	m := New()
	bus := events.NewBus()
	stop := m.SubscribeHealth(bus)
	bus.Publish(events.BackendHealthChange, events.HealthChange{Server: "lobby", Address: "10.0.0.2:25565", From: "healthy", To: "unhealthy"})
	bus.Publish(events.PlayerJoin, events.Player{Server: "lobby"}) // ignored
	bus.Publish(events.BackendHealthChange, &events.HealthChange{Server: "lobby", Address: "10.0.0.2:25565", From: "unhealthy", To: "probing"})
	// Wait for the subscriber to drain its queue: a condition, not a time window.
	want := []string{
		`infrarust_backend_health_transitions_total{address="10.0.0.2:25565",server="lobby",state="unhealthy"} 1`,
		`infrarust_backend_health_transitions_total{address="10.0.0.2:25565",server="lobby",state="probing"} 1`,
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := scrape(t, m)
		if strings.Contains(out, want[0]) && strings.Contains(out, want[1]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transitions not counted:\n%s", out)
		}
	}
	stop()
	if bus.Subscribers() != 0 {
		t.Fatal("stop left the subscription attached")
	}
}

// TestBackendStateGaugeHoldsWhileEjected: the gauge says unhealthy for as long as
// the balancer does (an alert on it keeps firing), with 0 for the other states,
// and follows the address out of ejection and away after a reload.
func TestBackendStateGaugeHoldsWhileEjected(t *testing.T) {
	m := New()
	if out := scrape(t, m); strings.Contains(out, "infrarust_backend_state{") {
		t.Fatal("backend_state exported before anything is watched")
	}
	var mu sync.Mutex
	current := []BackendSample{
		{Server: "lobby", Address: "10.0.0.1:25565", State: balance.StateHealthy},
		{Server: "lobby", Address: "10.0.0.2:25565", State: balance.StateUnhealthy},
	}
	m.WatchBackends(func() []BackendSample {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(current)
	})
	series := func(addr, state string, v int) string {
		return fmt.Sprintf(`infrarust_backend_state{address=%q,server="lobby",state=%q} %d`, addr, state, v)
	}
	// Scraped again and again while the address stays ejected: still 1.
	for range 3 {
		out := scrape(t, m)
		for _, want := range []string{
			series("10.0.0.2:25565", "unhealthy", 1), series("10.0.0.2:25565", "healthy", 0),
			series("10.0.0.2:25565", "probing", 0), series("10.0.0.2:25565", "draining", 0),
			series("10.0.0.2:25565", "unknown", 0),
			series("10.0.0.1:25565", "healthy", 1), series("10.0.0.1:25565", "unhealthy", 0),
		} {
			if !strings.Contains(out, want) {
				t.Fatalf("missing %s in:\n%s", want, out)
			}
		}
	}
	mu.Lock()
	current[1].State = balance.StateHealthy
	current = append(current,
		BackendSample{Server: "lobby", Address: "10.0.0.3:25565", State: "quarantined"},
		BackendSample{Server: "lobby", Address: "10.0.0.4:25565", State: balance.StateUnknown})
	mu.Unlock()
	out := scrape(t, m)
	for _, want := range []string{
		series("10.0.0.2:25565", "unhealthy", 0), series("10.0.0.2:25565", "healthy", 1),
		// A state this build does not list still gets its series.
		series("10.0.0.3:25565", "quarantined", 1), series("10.0.0.3:25565", "healthy", 0),
		// An address nobody has checked is exported as what it is, not as healthy.
		series("10.0.0.4:25565", "unknown", 1), series("10.0.0.4:25565", "healthy", 0),
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %s in:\n%s", want, out)
		}
	}
	mu.Lock()
	current = current[:1] // a reload removed three addresses
	mu.Unlock()
	if out := scrape(t, m); strings.Contains(out, "10.0.0.2:25565") || strings.Contains(out, "10.0.0.3:25565") || strings.Contains(out, "10.0.0.4:25565") {
		t.Fatalf("removed addresses still exported:\n%s", out)
	}
}

func TestLoginOutcomesAreAFixedSet(t *testing.T) {
	seen := map[LoginOutcome]bool{}
	for _, o := range LoginOutcomes() {
		if o == "" || seen[o] || strings.ToLower(string(o)) != string(o) {
			t.Fatalf("outcome %q is empty, repeated or not lower case", o)
		}
		seen[o] = true
	}
}

// Logins record into their servers' series from many goroutines while new
// servers appear and others are forgotten; every kept server's count is exact.
func TestSeriesUnderConcurrentLoginsAndForget(t *testing.T) {
	m := New()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				srv := fmt.Sprintf("kept-%d", i%4)
				m.PlayerJoined(srv)
				m.Login(srv, LoginSuccess)
				m.BackendConnect(srv, fmt.Sprintf("10.0.0.%d:25565", g), time.Millisecond, nil)
				m.PlayerLeft(srv)
				gone := fmt.Sprintf("gone-%d-%d", g, i)
				m.PlayerJoined(gone)
				m.ForgetServer(gone)
			}
		}()
	}
	wg.Wait()
	out := scrape(t, m)
	for i := range 4 {
		for _, want := range []string{
			fmt.Sprintf(`infrarust_players_online{server="kept-%d"} 0`, i),
			fmt.Sprintf(`infrarust_logins_total{outcome="success",server="kept-%d"} 1000`, i),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q", want)
			}
		}
	}
	if strings.Contains(out, `server="gone-`) {
		t.Error("a forgotten server is still exported")
	}
}
