package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
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

// deliveryFleet is a fleet whose every change ends as delivery says.
type deliveryFleet struct{ delivery admin.FleetDelivery }

func (f deliveryFleet) ShareBackend(context.Context, admin.Action, string, string) admin.FleetDelivery {
	return f.delivery
}
func (f deliveryFleet) ShareMaintenance(context.Context, string, bool) admin.FleetDelivery {
	return f.delivery
}
func (f deliveryFleet) ShareBan(context.Context, bans.Ban, bool) admin.FleetDelivery {
	return f.delivery
}
func (deliveryFleet) Status() admin.FleetStatus {
	return admin.FleetStatus{Enabled: true, ID: "p1", Proxies: []admin.FleetProxy{}}
}
func (deliveryFleet) Players(context.Context, string) ([]admin.FleetPlayer, error) {
	return nil, admin.ErrFleetUnreachable
}

// TestChangesWarnWhenTheFleetLacksThem: `backends drain`, `bans add` and `bans
// remove` print the change on stdout and, when the fleet did not take it, a
// warning on stderr (exit status 0: the change holds on this proxy).
func TestChangesWarnWhenTheFleetLacksThem(t *testing.T) {
	for _, c := range []struct {
		delivery admin.FleetDelivery
		warning  string
	}{
		{admin.FleetDelivery{State: admin.FleetShared}, ""},
		{admin.FleetDelivery{State: admin.FleetQueued, Message: "Redis at 127.0.0.1:6379 does not answer; published when it does"},
			"warning: not shared with the fleet yet: Redis at 127.0.0.1:6379 does not answer; published when it does\n"},
		{admin.FleetDelivery{State: admin.FleetSuperseded, Message: "a newer unban from p2"},
			"warning: the fleet keeps a newer change instead: a newer unban from p2\n"},
	} {
		t.Run(c.delivery.State, func(t *testing.T) {
			dir := t.TempDir()
			store, err := bans.Open(filepath.Join(dir, "bans.json"), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			drains, err := admin.OpenDrainStore(dir)
			if err != nil {
				t.Fatal(err)
			}
			s, err := admin.NewServer(admin.ServerOptions{Web: config.Web{DataDir: dir, RequestsPerMinute: 100000}, APIKey: cliTestKey,
				Runtime: newCLIRuntime(), Bans: store, Drains: drains, Fleet: deliveryFleet{c.delivery}})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(s)
			t.Cleanup(hs.Close)
			conn := []string{"--admin-url", hs.URL, "--api-key", cliTestKey}
			for _, step := range []struct {
				args []string
				out  string
			}{
				{[]string{"backends", "drain", "lobby", "10.0.0.1:25565"}, "drained 10.0.0.1:25565 on lobby"},
				{[]string{"bans", "add", "--ip", "203.0.113.7", "--reason", "bot joins"}, "banned ip 203.0.113.7 permanently"},
				{[]string{"bans", "remove", "--ip", "203.0.113.7"}, "removed ip ban on 203.0.113.7"},
			} {
				out, errOut, err := runCLIStderr(t, append(step.args, conn...)...)
				if err != nil || !strings.Contains(out, step.out) || errOut != c.warning {
					t.Errorf("%s: err %v\nstdout %q\nstderr %q, want %q", strings.Join(step.args, " "), err, out, errOut, c.warning)
				}
			}
		})
	}
}
