package admin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// What the balancer knows reaches the wire as it is: an address nothing has
// checked is "unknown" with no healthy-since, and the server totals count it
// apart from the healthy ones (a drained address counts in neither).
func TestUnknownReachesTheWire(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pool := balance.NewPool(balance.Options{}, []balance.Address{{Address: "a:1"}, {Address: "b:1"}, {Address: "c:1"}, {Address: "d:1"}}, t0)
	pool.ProbeResult("b:1", true, 0, t0)
	if err := pool.SetDrain("c:1", true, t0); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Minute)
	snap := pool.Snapshot(now)

	a := BackendFrom(snap[0], now)
	if a.State != "unknown" || a.Health != "unknown" || a.HealthySinceSecs != nil || a.BackendState() != balance.StateUnknown {
		t.Errorf("untried address on the wire: %+v", a)
	}
	raw, err := json.Marshal(a)
	if err != nil || !strings.Contains(string(raw), `"state":"unknown"`) {
		t.Errorf("JSON %s, %v", raw, err)
	}
	if b := BackendFrom(snap[1], now); b.State != "healthy" || b.HealthySinceSecs == nil || *b.HealthySinceSecs != 60 {
		t.Errorf("probed address on the wire: %+v", b)
	}
	if got := CountUnknown(snap); got != 2 {
		t.Errorf("CountUnknown = %d, want 2 (a and d; c is drained, b is healthy)", got)
	}
}
