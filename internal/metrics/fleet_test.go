package metrics

import (
	"strings"
	"sync/atomic"
	"testing"
)

func TestFleetSeriesFollowTheSample(t *testing.T) {
	m := New()
	if out := scrape(t, m); strings.Contains(out, "infrarust_fleet_") {
		t.Fatal("fleet series exist on a proxy without [fleet]")
	}
	var up atomic.Bool
	up.Store(true)
	m.WatchFleet(func() FleetSample {
		return FleetSample{Connected: up.Load(), LiveProxies: 3, Pending: 2, RedisCommands: 41}
	})
	out := scrape(t, m)
	for _, want := range []string{"infrarust_fleet_connected 1", "infrarust_fleet_proxies 3",
		"infrarust_fleet_pending_changes 2", "infrarust_fleet_redis_commands_total 41"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q", want)
		}
	}
	up.Store(false)
	if out := scrape(t, m); !strings.Contains(out, "infrarust_fleet_connected 0\n") {
		t.Error("the gauge does not follow a lost connection")
	}
	var nilM *Metrics
	nilM.WatchFleet(func() FleetSample { return FleetSample{} }) // safe on nil
}
