package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
)

// fakeFleet records what the API shared and answers with a set delivery.
type fakeFleet struct {
	mu        sync.Mutex
	delivery  FleetDelivery
	shared    []string
	drainedAt []bool // whether the drain store had the change when it was shared
	drains    *DrainStore
	players   []FleetPlayer
	err       error
}

func (f *fakeFleet) ShareBackend(_ context.Context, action Action, server, address string) FleetDelivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shared = append(f.shared, fmt.Sprintf("%s %s %s", action, server, address))
	if f.drains != nil {
		f.drainedAt = append(f.drainedAt, f.drains.Drained(server, address))
	}
	return f.delivery
}

func (f *fakeFleet) ShareMaintenance(_ context.Context, server string, on bool) FleetDelivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shared = append(f.shared, fmt.Sprintf("maintenance %s on=%v", server, on))
	return f.delivery
}

func (f *fakeFleet) ShareBan(_ context.Context, b bans.Ban, lifted bool) FleetDelivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shared = append(f.shared, fmt.Sprintf("ban %s %s lifted=%v", b.Type, b.Value, lifted))
	return f.delivery
}

func (f *fakeFleet) Status() FleetStatus {
	return FleetStatus{Enabled: true, ID: "a", Redis: "redis://10.0.0.5:6379", Connected: true, LiveProxies: 2, Players: 3,
		Proxies: []FleetProxy{
			{ID: "a", Address: "10.0.0.1:25565", Version: "1.0", Players: 2, Live: true, Self: true},
			{ID: "b", Address: "10.0.0.2:25565", Version: "1.0", Players: 1, Live: true},
		}}
}

func (f *fakeFleet) Players(_ context.Context, server string) ([]FleetPlayer, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []FleetPlayer
	for _, p := range f.players {
		if server == "" || p.Server == server {
			out = append(out, p)
		}
	}
	return out, nil
}

func fleetEnv(t *testing.T, ff *fakeFleet) *testEnv {
	t.Helper()
	env := newTestEnv(t, func(o *ServerOptions) { o.Fleet = ff })
	ff.drains = env.rt.drains
	return env
}

func TestFleetRouteWithoutFleet(t *testing.T) {
	env := newTestEnv(t)
	status, _, body := env.call(t, "GET", "/api/v1/fleet", testKey, "")
	if status != 200 || !strings.Contains(body, `"enabled":false`) || !strings.Contains(body, `"proxies":[]`) {
		t.Fatalf("%d %s", status, body)
	}
	status, _, body = env.call(t, "GET", "/api/v1/players?fleet=true", testKey, "")
	if status != 400 || !strings.Contains(body, "not in a fleet") {
		t.Fatalf("players?fleet=true without a fleet: %d %s", status, body)
	}
	_, _, body = env.call(t, "POST", "/api/v1/servers/lobby/backends/10.0.0.1%3A25565/drain", testKey, "")
	if strings.Contains(body, `"fleet"`) {
		t.Fatalf("a drain without a fleet mentions it: %s", body)
	}
	_, _, body = env.call(t, "GET", "/api/v1/snapshot", testKey, "")
	if strings.Contains(body, `"fleet"`) {
		t.Fatalf("a snapshot without a fleet mentions it: %s", body)
	}
}

// Drain, enable and reset are shared after they are applied here, and the answer
// says how far they got.
func TestFleetSharesBackendActions(t *testing.T) {
	for _, d := range []FleetDelivery{
		{State: FleetShared},
		{State: FleetQueued, Message: "the fleet does not have it yet (Redis at redis://h:6379: connection refused); it is kept and published when Redis answers"},
	} {
		t.Run(d.State, func(t *testing.T) {
			ff := &fakeFleet{delivery: d}
			env := fleetEnv(t, ff)
			for _, a := range Actions() {
				status, _, body := env.call(t, "POST", "/api/v1/servers/lobby/backends/10.0.0.1%3A25565/"+string(a), testKey, "")
				var res Envelope[ActionResult]
				if status != 200 || json.Unmarshal([]byte(body), &res) != nil || res.Data.Fleet == nil || *res.Data.Fleet != d {
					t.Fatalf("%s: %d %s", a, status, body)
				}
			}
			want := []string{"drain lobby 10.0.0.1:25565", "enable lobby 10.0.0.1:25565", "reset lobby 10.0.0.1:25565"}
			if strings.Join(ff.shared, ",") != strings.Join(want, ",") {
				t.Fatalf("shared %v, want %v", ff.shared, want)
			}
			if len(ff.drainedAt) < 2 || !ff.drainedAt[0] || ff.drainedAt[1] {
				t.Fatalf("a change was shared before this proxy stored it: %v", ff.drainedAt)
			}
			if logged := strings.Contains(env.logs.String(), "not shared with the fleet yet"); logged != !d.Shared() {
				t.Fatalf("warning logged = %v for %s:\n%s", logged, d.State, env.logs.String())
			}
		})
	}
}

func TestFleetSharesBans(t *testing.T) {
	ff := &fakeFleet{delivery: FleetDelivery{State: FleetShared}}
	env := fleetEnv(t, ff)
	status, _, body := env.call(t, "POST", "/api/v1/bans", testKey, `{"type":"name","value":"Griefer"}`)
	if status != 201 || !strings.Contains(body, `"value":"griefer"`) || !strings.Contains(body, `"fleet":{"state":"shared"}`) {
		t.Fatalf("add: %d %s", status, body)
	}
	status, _, body = env.call(t, "DELETE", "/api/v1/bans/username/griefer", testKey, "")
	if status != 200 || !strings.Contains(body, `"fleet":{"state":"shared"}`) {
		t.Fatalf("remove: %d %s", status, body)
	}
	want := "ban username griefer lifted=false,ban username griefer lifted=true"
	if got := strings.Join(ff.shared, ","); got != want {
		t.Fatalf("shared %s, want %s", got, want)
	}
	// The client reads a ban answer as the ban and what the fleet made of it.
	c := NewClient(env.http.URL, testKey)
	ff.mu.Lock()
	ff.delivery = FleetDelivery{State: FleetQueued, Message: "Redis does not answer"}
	ff.mu.Unlock()
	b, err := c.AddBan(context.Background(), BanRequest{Type: "ip", Value: "203.0.113.9"})
	if err != nil || b.Value != "203.0.113.9" || b.Fleet == nil || b.Fleet.State != FleetQueued || b.Fleet.Message != "Redis does not answer" {
		t.Fatalf("client: %+v %v", b, err)
	}
	removed, err := c.RemoveBan(context.Background(), bans.TypeIP, "203.0.113.9")
	if err != nil || removed.Value != "203.0.113.9" || removed.Fleet == nil || removed.Fleet.State != FleetQueued {
		t.Fatalf("client remove: %+v %v", removed, err)
	}
}

func TestFleetStatusAndPlayers(t *testing.T) {
	ff := &fakeFleet{players: []FleetPlayer{
		{Player: Player{Name: "Alice", Server: "lobby", Since: time.Unix(0, 0).UTC()}, Proxy: "a"},
		{Player: Player{Name: "carol", Server: "survival", Since: time.Unix(0, 0).UTC()}, Proxy: "b"},
	}}
	env := fleetEnv(t, ff)
	c := NewClient(env.http.URL, testKey)
	st, err := c.Fleet(context.Background())
	if err != nil || !st.Enabled || len(st.Proxies) != 2 || st.Proxies[1].ID != "b" || !st.Proxies[0].Self {
		t.Fatalf("fleet: %+v %v", st, err)
	}
	list, err := c.FleetPlayers(context.Background(), "")
	if err != nil || len(list) != 2 || list[1].Proxy != "b" || list[1].Name != "carol" {
		t.Fatalf("fleet players: %+v %v", list, err)
	}
	list, err = c.FleetPlayers(context.Background(), "survival")
	if err != nil || len(list) != 1 || list[0].Name != "carol" {
		t.Fatalf("fleet players of survival: %+v %v", list, err)
	}
	// Without ?fleet the list is this proxy's, as before.
	local, err := c.Players(context.Background(), "")
	if err != nil || len(local) != 2 || local[0].Name != "jeb_" {
		t.Fatalf("local players: %+v %v", local, err)
	}
	snap, err := c.Snapshot(context.Background())
	if err != nil || snap.Fleet == nil || snap.Fleet.LiveProxies != 2 {
		t.Fatalf("snapshot fleet: %+v %v", snap.Fleet, err)
	}
	for q, want := range map[string]int{"fleet=maybe": 400, "fleet=false": 200, "fleet=1": 200, "fleet=true&server=nope": 404} {
		if status, _, body := env.call(t, "GET", "/api/v1/players?"+q, testKey, ""); status != want {
			t.Errorf("?%s: %d, want %d (%s)", q, status, want, body)
		}
	}
	ff.err = fmt.Errorf("%w: Redis at redis://h:6379: connection refused", ErrFleetUnreachable)
	status, _, body := env.call(t, "GET", "/api/v1/players?fleet=true", testKey, "")
	if status != 503 || !strings.Contains(body, "connection refused") || !strings.Contains(body, "without ?fleet=true") {
		t.Fatalf("fleet down: %d %s", status, body)
	}
}

// A maintenance set through the API is stored, applied and then shared with
// the fleet, both ways.
func TestFleetSharesMaintenance(t *testing.T) {
	ff := &fakeFleet{delivery: FleetDelivery{State: FleetShared}}
	env := fleetEnv(t, ff)
	for _, on := range []string{"true", "false"} {
		status, _, body := env.call(t, "POST", "/api/v1/servers/lobby/maintenance", testKey, `{"on":`+on+`}`)
		if status != 200 {
			t.Fatalf("maintenance %s: %d %s", on, status, body)
		}
	}
	if got := strings.Join(ff.shared, ","); got != "maintenance lobby on=true,maintenance lobby on=false" {
		t.Fatalf("shared %q", got)
	}
}
