package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
)

// An address nobody has tried is "unknown" everywhere an operator looks (backends
// list, the servers summary, /metrics) instead of "healthy"; the first login
// through it proves it, and the SSE stream says unknown -> healthy.
func TestE2EUntriedAddressIsUnknown(t *testing.T) {
	first := startFake(t, fakemc.Options{Name: "first"})
	spare := startFake(t, fakemc.Options{Name: "spare"}) // first_available never needs it
	s := startServe(t, t.TempDir(), e2eServer("lobby", first.Addr(), spare.Addr()))

	out, err := cli(t, "backends", "list", "--config", s.configPath)
	if err != nil || !containsLine(out, first.Addr(), "unknown", "unknown") || !containsLine(out, spare.Addr(), "unknown", "unknown") {
		t.Fatalf("backends list before any login: %v\n%s", err, out)
	}
	servers, err := s.client.Servers(context.Background())
	if err != nil || len(servers) != 1 || servers[0].HealthyCount != 0 || servers[0].UnknownCount != 2 {
		t.Fatalf("servers before any login: %+v, %v; want 0 healthy, 2 unknown", servers, err)
	}
	code, page := scrape(t, s, s.key)
	for _, addr := range []string{first.Addr(), spare.Addr()} {
		unknown, ok1 := metricValue(page, "infrarust_backend_state", map[string]string{"address": addr, "state": "unknown"})
		healthy, ok2 := metricValue(page, "infrarust_backend_state", map[string]string{"address": addr, "state": "healthy"})
		if code != http.StatusOK || !ok1 || !ok2 || unknown != 1 || healthy != 0 {
			t.Fatalf("/metrics for %s: unknown=%v healthy=%v (code %d)\n%s", addr, unknown, healthy, code, page)
		}
	}

	stream, err := s.client.Events(context.Background(), "backend.health_change")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	evs := eventsOf(stream)
	if got := loginTo(t, s.proxyAddr, "Alex"); got != reached("first", "Alex") {
		t.Fatalf("login: %q", got)
	}
	if hc := waitHealthChange(t, evs, first.Addr(), "healthy", 5*time.Second); hc.From != "unknown" || hc.Reason != "connect ok" {
		t.Fatalf("health_change %+v, want unknown -> healthy (connect ok)", hc)
	}
	out, err = cli(t, "backends", "list", "--config", s.configPath)
	if err != nil || !containsLine(out, first.Addr(), "healthy", "healthy") || !containsLine(out, spare.Addr(), "unknown", "unknown") {
		t.Fatalf("backends list after one login: %v\n%s", err, out)
	}
}

// With probe_healthy on (as `config init`'s starter config has it), the prober
// finds out what each address is without a single player: the live one is
// healthy and the dead one is ejected.
func TestE2EProbingTellsTheTruthWithoutPlayers(t *testing.T) {
	live := startFake(t, fakemc.Options{Name: "live"})
	gone := startFake(t, fakemc.Options{Name: "gone"})
	killBackend(t, gone)
	s := startServeWith(t, t.TempDir(), func(c *config.Config) {
		c.ActiveHealth.ProbeHealthy = true
		c.ActiveHealth.Interval = config.Duration(time.Second)
	}, e2eServer("lobby", gone.Addr(), live.Addr()))
	stream, err := s.client.Events(context.Background(), "backend.health_change")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	evs := eventsOf(stream)

	// Probes at 0s, 1s and 2s: the live address at the first, the dead one at the third.
	if hc := waitHealthChange(t, evs, gone.Addr(), "unhealthy", 10*time.Second); hc.From != "unknown" {
		t.Fatalf("dead address: %+v, want unknown -> unhealthy", hc)
	}
	out, err := cli(t, "backends", "list", "--config", s.configPath)
	if err != nil || !containsLine(out, gone.Addr(), "unhealthy") || !containsLine(out, live.Addr(), "healthy", "healthy") {
		t.Fatalf("backends list: %v\n%s", err, out)
	}
	if n := live.Logins.Load(); n != 0 {
		t.Fatalf("the live backend saw %d logins; probes alone must have decided", n)
	}
}
