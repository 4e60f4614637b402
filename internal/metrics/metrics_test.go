package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/events"
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
	m.ServerState("survival", "starting")
	m.ServerState("survival", "online")

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
		`infrarust_bytes_forwarded_total{direction="upstream"} 100`,
		`infrarust_bytes_forwarded_total{direction="downstream"} 2500`,
		"infrarust_status_cache_hits_total 1",
		"infrarust_status_cache_misses_total 2",
		`infrarust_server_state{server="survival",state="online"} 1`,
		"go_goroutines ",
		"process_",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, absent := range []string{
		`infrarust_backend_connect_failures_total{address="10.0.0.1:25565"`, // success is not a failure
		`infrarust_server_state{server="survival",state="starting"}`,        // one state per server
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
	m.ServerState("survival", "online")

	m.ForgetAddress("lobby", "10.0.0.2:25565")
	m.ForgetServer("survival")
	out := scrape(t, m)
	if !strings.Contains(out, `address="10.0.0.1:25565"`) {
		t.Error("ForgetAddress removed a sibling address")
	}
	for _, gone := range []string{`address="10.0.0.2:25565"`, `server="survival"`} {
		if strings.Contains(out, gone) {
			t.Errorf("%s still exported after Forget", gone)
		}
	}
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
	m.ServerState("a", "b")
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
