package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
)

func TestPrintFleet(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	st := admin.FleetStatus{Enabled: true, ID: "a", Redis: "redis://:xxxxx@10.0.0.5:6379", Connected: true, LiveProxies: 2, Players: 3,
		Proxies: []admin.FleetProxy{
			{ID: "a", Address: "10.0.0.1:25565", Admin: "127.0.0.1:8080", Version: "1.2.0", StartedAt: now.Add(-2 * time.Hour), Players: 2, HeartbeatAgeSecs: 0.4, Live: true, Self: true},
			{ID: "b", Address: "10.0.0.2:25565", Version: "1.2.0", StartedAt: now.Add(-5 * time.Minute), Players: 1, HeartbeatAgeSecs: 0.9, Live: true},
			{ID: "c", Address: "10.0.0.3:25565", Version: "1.1.0", StartedAt: now.Add(-time.Hour), HeartbeatAgeSecs: 95, Live: false},
		}}
	var out bytes.Buffer
	if err := printFleet(&out, st, now); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"fleet of a via redis://:xxxxx@10.0.0.5:6379: connected; 2 live proxies, 3 players",
		"a (this)  10.0.0.1:25565  127.0.0.1:8080  1.2.0    2h00m   2        0.4s ago",
		"b         10.0.0.2:25565  -               1.2.0    5m00s   1        0.9s ago",
		"1m35s ago       LOST",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}

	st.Connected, st.LastError, st.Since, st.ViewAt, st.PendingChanges = false, "Redis at redis://10.0.0.5:6379: connection refused", now.Add(-time.Minute), now.Add(-time.Minute), 2
	out.Reset()
	_ = printFleet(&out, st, now)
	for _, want := range []string{"DISCONNECTED since 1m00s (Redis at redis://10.0.0.5:6379: connection refused)",
		"as of 1m00s ago", "2 change(s) made on a are not in the fleet yet"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	out.Reset()
	_ = printFleet(&out, admin.FleetStatus{}, now)
	if !strings.Contains(out.String(), "not in a fleet") {
		t.Errorf("without a fleet: %s", out.String())
	}
}

func TestFleetNote(t *testing.T) {
	cases := []struct {
		d    *admin.FleetDelivery
		want string
	}{
		{nil, ""},
		{&admin.FleetDelivery{State: admin.FleetShared}, ""},
		{&admin.FleetDelivery{State: admin.FleetQueued, Message: "m"}, "not shared with the fleet yet: m"},
		{&admin.FleetDelivery{State: admin.FleetSuperseded, Message: "m"}, "the fleet keeps a newer change instead: m"},
		{&admin.FleetDelivery{State: admin.FleetLocalOnly, Message: "m"}, "applied on this proxy only: m"},
	}
	for _, c := range cases {
		if got := fleetNote(c.d); got != c.want {
			t.Errorf("%+v: %q, want %q", c.d, got, c.want)
		}
	}
}
