package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/admin/admintest"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

const key = "0123456789abcdef0123456789abcdef"

var since = time.Date(2025, 6, 1, 11, 0, 0, 0, time.UTC)

// network is the fake proxy of these tests: lobby (two addresses, falls back to
// survival) and survival are one network of intercepted servers; creative is
// passthrough; minigames is another network; full refuses everyone.
func network() *admintest.Runtime {
	rt := admintest.NewRuntime(
		admintest.Server{ID: "lobby", ProxyMode: "offline", Network: "main", Addresses: []string{"10.0.0.1:25565", "10.0.0.2:25565"}, Fallbacks: []string{"survival"}},
		admintest.Server{ID: "survival", ProxyMode: "client_only", Network: "main", Addresses: []string{"10.0.1.1:25565"}},
		admintest.Server{ID: "creative", ProxyMode: "passthrough", Addresses: []string{"10.0.2.1:25565"}},
		admintest.Server{ID: "minigames", ProxyMode: "offline", Network: "games", Addresses: []string{"10.0.3.1:25565"}},
		admintest.Server{ID: "full", ProxyMode: "offline", Network: "main", Addresses: []string{"10.0.4.1:25565"}, Refuse: "The server is full!"},
	)
	for _, p := range []admin.Player{
		{Name: "Notch", UUID: "069a79f4-44e9-4726-a5be-fca90e38aaf5", Server: "lobby", Address: "10.0.0.1:25565", ClientIP: "198.51.100.7", Protocol: 769, Version: "1.21.4"},
		{Name: "dinnerbone", Server: "lobby", Address: "10.0.0.1:25565", ClientIP: "198.51.100.8", Protocol: 765, Version: "1.20.4"},
		{Name: "jeb_", Server: "creative", Address: "10.0.2.1:25565", ClientIP: "198.51.100.9", Protocol: 47, Version: "1.8.9"},
		{Name: "Alex", Server: "survival", Address: "10.0.1.1:25565", ClientIP: "198.51.100.10", Protocol: 769, Version: "1.21.4"},
	} {
		p.Since = since
		rt.Join(p)
	}
	return rt
}

type env struct {
	url    string
	rt     *admintest.Runtime
	bus    *events.Bus
	logs   *testutil.SyncBuffer
	drains *admin.DrainStore
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	drains, err := admin.OpenDrainStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{rt: network(), bus: events.NewBus(), logs: &testutil.SyncBuffer{}, drains: drains}
	e.rt.PublishTo(e.bus)
	s, err := admin.NewServer(admin.ServerOptions{
		Web:     config.Web{Bind: "127.0.0.1:0", DataDir: dir, RequestsPerMinute: 100000},
		APIKey:  key,
		Runtime: e.rt,
		Bus:     e.bus,
		Drains:  drains,
		Logger:  slog.New(slog.NewTextHandler(e.logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	e.url = hs.URL
	return e
}

func (e *env) call(t *testing.T, method, path, auth, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func data[T any](t *testing.T, body string) T {
	t.Helper()
	var env admin.Envelope[T]
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	return env.Data
}

func apiErr(t *testing.T, body string) admin.ErrorBody {
	t.Helper()
	var env admin.ErrorEnvelope
	if err := json.Unmarshal([]byte(body), &env); err != nil || env.Error.Code == "" {
		t.Fatalf("not an error envelope: %q (%v)", body, err)
	}
	return env.Error
}

func names(list []admin.Player) []string {
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = p.Name
	}
	return out
}

func where(rt *admintest.Runtime, name string) string {
	for _, p := range rt.Players("") {
		if p.Name == name {
			return p.Server + " " + p.Address
		}
	}
	return "gone"
}

func TestPlayerRoutesNeedTheKey(t *testing.T) {
	e := newEnv(t)
	for _, r := range []struct {
		method, path, body string
		ok                 int
	}{
		{"GET", "/api/v1/players", "", 200},
		{"POST", "/api/v1/players/Notch/send", `{"server":"survival"}`, 200},
		{"POST", "/api/v1/players/Notch/kick", `{"reason":"bye"}`, 200},
	} {
		for _, auth := range []string{"", "ffffffffffffffffffffffffffffffff"} {
			if status, body := e.call(t, r.method, r.path, auth, r.body); status != 401 || apiErr(t, body).Code != "UNAUTHORIZED" {
				t.Errorf("%s %s with key %q: %d %s, want 401", r.method, r.path, auth, status, body)
			}
		}
		if where(e.rt, "Notch") != "lobby 10.0.0.1:25565" {
			t.Fatalf("an unauthorised request moved Notch: %s", where(e.rt, "Notch"))
		}
	}
	for _, r := range []struct {
		method, path, body string
		ok                 int
	}{
		{"GET", "/api/v1/players", "", 200},
		{"POST", "/api/v1/players/Notch/send", `{"server":"survival"}`, 200},
		{"POST", "/api/v1/players/Notch/kick", `{"reason":"bye"}`, 200},
	} {
		if status, body := e.call(t, r.method, r.path, key, r.body); status != r.ok {
			t.Errorf("%s %s: %d %s, want %d", r.method, r.path, status, body, r.ok)
		}
	}
	if got := e.rt.Kicks(); !slices.Equal(got, []string{"Notch: bye"}) {
		t.Fatalf("kicks %v", got)
	}
}

func TestListPlayers(t *testing.T) {
	e := newEnv(t)
	status, body := e.call(t, "GET", "/api/v1/players", key, "")
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	all := data[[]admin.Player](t, body)
	// By name in any case: dinnerbone sorts between Alex and jeb_.
	if got := names(all); !slices.Equal(got, []string{"Alex", "dinnerbone", "jeb_", "Notch"}) {
		t.Fatalf("players %v", got)
	}
	n := all[3]
	if n.UUID == "" || n.Server != "lobby" || n.Address != "10.0.0.1:25565" || n.ClientIP != "198.51.100.7" ||
		n.Protocol != 769 || n.Version != "1.21.4" || n.ProxyMode != "offline" || !n.Switchable || !n.Since.Equal(since) {
		t.Fatalf("Notch %+v", n)
	}
	if all[2].Switchable || all[2].ProxyMode != "passthrough" {
		t.Fatalf("jeb_ on a passthrough server must not be switchable: %+v", all[2])
	}
	for _, field := range []string{`"name"`, `"server"`, `"address"`, `"client_ip"`, `"protocol"`, `"version"`, `"proxy_mode"`, `"since"`, `"switchable"`} {
		if !strings.Contains(body, field) {
			t.Errorf("answer lacks %s: %s", field, body)
		}
	}

	_, body = e.call(t, "GET", "/api/v1/players?server=lobby", key, "")
	if got := names(data[[]admin.Player](t, body)); !slices.Equal(got, []string{"dinnerbone", "Notch"}) {
		t.Fatalf("lobby players %v", got)
	}
	// An empty server answers an empty array, not null.
	if status, body := e.call(t, "GET", "/api/v1/players?server=minigames", key, ""); status != 200 || !strings.Contains(body, `"data":[]`) {
		t.Fatalf("empty server: %d %s", status, body)
	}
	for _, tc := range []struct {
		path   string
		status int
		msg    string
	}{
		{"/api/v1/players?server=lobbby", 404, `no server "lobbby"; servers are: creative, full, lobby, minigames, survival`},
		{"/api/v1/players?srever=lobby", 400, `unknown query parameter "srever"`},
	} {
		status, body := e.call(t, "GET", tc.path, key, "")
		if status != tc.status || !strings.Contains(apiErr(t, body).Message, tc.msg) {
			t.Errorf("%s: %d %s, want %d with %q", tc.path, status, body, tc.status, tc.msg)
		}
	}
}

func TestSendPlayer(t *testing.T) {
	tests := []struct {
		name, path, body string
		status           int
		code, msg        string
		// where Notch is afterwards
		notch string
	}{
		{"moved, name in any case", "/api/v1/players/NOTCH/send", `{"server":"survival"}`, 200, "", "", "survival 10.0.1.1:25565"},
		{"unknown player", "/api/v1/players/Herobrine/send", `{"server":"survival"}`, 404, "NOT_FOUND", `no player "Herobrine" is online`, "lobby 10.0.0.1:25565"},
		{"unknown server", "/api/v1/players/Notch/send", `{"server":"lobbby"}`, 404, "NOT_FOUND", `no server "lobbby"; servers are: creative, full, lobby`, "lobby 10.0.0.1:25565"},
		{"already there", "/api/v1/players/Notch/send", `{"server":"lobby"}`, 409, "CONFLICT", "Notch is already on lobby (10.0.0.1:25565)", "lobby 10.0.0.1:25565"},
		{"other network", "/api/v1/players/Notch/send", `{"server":"minigames"}`, 409, "CONFLICT", `Notch cannot be sent to minigames: the target server is not in the player's network (lobby is in network "main", minigames in "games")`, "lobby 10.0.0.1:25565"},
		{"passthrough target", "/api/v1/players/Notch/send", `{"server":"creative"}`, 409, "CONFLICT", "creative is passthrough", "lobby 10.0.0.1:25565"},
		{"target refuses", "/api/v1/players/Notch/send", `{"server":"full"}`, 502, "BAD_GATEWAY", "Notch was not moved to full: the move failed; the player stays where they were: full refused the player: The server is full!", "lobby 10.0.0.1:25565"},
		{"no server in body", "/api/v1/players/Notch/send", `{}`, 400, "BAD_REQUEST", "say where to send the player", "lobby 10.0.0.1:25565"},
		{"no body", "/api/v1/players/Notch/send", ``, 400, "BAD_REQUEST", "not a send request", "lobby 10.0.0.1:25565"},
		{"not json", "/api/v1/players/Notch/send", `survival`, 400, "BAD_REQUEST", "not a send request", "lobby 10.0.0.1:25565"},
		{"unknown field", "/api/v1/players/Notch/send", `{"server":"survival","when":"now"}`, 400, "BAD_REQUEST", "unknown field", "lobby 10.0.0.1:25565"},
		// Two requests in one body: neither is applied.
		{"trailing object", "/api/v1/players/Notch/send", `{"server":"survival"}{"server":"full"}`, 400, "BAD_REQUEST", "trailing data", "lobby 10.0.0.1:25565"},
		{"trailing text", "/api/v1/players/Notch/send", `{"server":"survival"} please`, 400, "BAD_REQUEST", "trailing data", "lobby 10.0.0.1:25565"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			sub := e.bus.Subscribe(8, events.PlayerSwitch)
			defer sub.Close()
			status, body := e.call(t, "POST", tc.path, key, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if got := where(e.rt, "Notch"); got != tc.notch {
				t.Fatalf("Notch is on %s, want %s", got, tc.notch)
			}
			if tc.code != "" {
				if e := apiErr(t, body); e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
					t.Fatalf("error %+v, want %s containing %q", e, tc.code, tc.msg)
				}
				return
			}
			if p := data[admin.Player](t, body); p.Name != "Notch" || p.Server != "survival" || p.Address != "10.0.1.1:25565" || p.ProxyMode != "client_only" {
				t.Fatalf("answer %+v, want Notch where they landed", p)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			ev, err := sub.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if sw := ev.Data.(events.Switch); sw.FromServer != "lobby" || sw.ToServer != "survival" || sw.Reason != "admin" {
				t.Fatalf("switch event %+v", sw)
			}
			if logs := e.logs.String(); !strings.Contains(logs, "action=player.send player=Notch from=lobby server=survival address=10.0.1.1:25565 force=false client_ip=127.0.0.1") {
				t.Fatalf("no audit line in:\n%s", logs)
			}
		})
	}
}

func TestSendPassthroughPlayerIsAConflict(t *testing.T) {
	e := newEnv(t)
	status, body := e.call(t, "POST", "/api/v1/players/jeb_/send", key, `{"server":"lobby"}`)
	if status != 409 || !strings.Contains(apiErr(t, body).Message, "jeb_ cannot be moved: the player's server is passthrough") {
		t.Fatalf("%d %s", status, body)
	}
	if where(e.rt, "jeb_") != "creative 10.0.2.1:25565" {
		t.Fatal("jeb_ moved")
	}
	status, body = e.call(t, "GET", "/api/v1/players/jeb_/send", key, "")
	if status != 405 || apiErr(t, body).Code != "METHOD_NOT_ALLOWED" {
		t.Fatalf("GET on send: %d %s", status, body)
	}
}

func TestKickPlayer(t *testing.T) {
	e := newEnv(t)
	sub := e.bus.Subscribe(8, events.PlayerLeave)
	defer sub.Close()

	status, body := e.call(t, "POST", "/api/v1/players/notch/kick", key, `{"reason":"  spamming chat  "}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	res := data[admin.KickResult](t, body)
	if res.Player.Name != "Notch" || res.Player.Server != "lobby" || res.Reason != "spamming chat" {
		t.Fatalf("kick answer %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ev, err := sub.Next(ctx); err != nil || ev.Data.(events.Player).Username != "Notch" {
		t.Fatalf("player.leave: %+v %v", ev, err)
	}
	// No body, or an empty object: the default reason.
	for _, tc := range []struct{ who, body string }{{"dinnerbone", ""}, {"Alex", "{}"}, {"jeb_", ` {"reason":""} `}} {
		status, body := e.call(t, "POST", "/api/v1/players/"+tc.who+"/kick", key, tc.body)
		if status != 200 || data[admin.KickResult](t, body).Reason != admin.DefaultKickReason {
			t.Fatalf("kick %s with %q: %d %s", tc.who, tc.body, status, body)
		}
	}
	want := []string{"Notch: spamming chat", "dinnerbone: " + admin.DefaultKickReason, "Alex: " + admin.DefaultKickReason, "jeb_: " + admin.DefaultKickReason}
	if got := e.rt.Kicks(); !slices.Equal(got, want) {
		t.Fatalf("kicks %q, want %q", got, want)
	}
	if !strings.Contains(e.logs.String(), `action=player.kick player=Notch server=lobby address=10.0.0.1:25565 reason="spamming chat" client_ip=127.0.0.1`) {
		t.Fatalf("no audit line in:\n%s", e.logs.String())
	}

	e = newEnv(t)
	for _, tc := range []struct {
		path, body string
		status     int
		msg        string
	}{
		{"/api/v1/players/Notch/kick", `{"reason":"` + strings.Repeat("x", admin.MaxKickReasonLen+1) + `"}`, 400, "keep it to 1024"},
		{"/api/v1/players/Notch/kick", `{"reason":"a"}{"reason":"b"}`, 400, "trailing data"},
		{"/api/v1/players/Notch/kick", `{"why":"a"}`, 400, "unknown field"},
		{"/api/v1/players/Notch/kick", `"a"`, 400, "not a kick request"},
		{"/api/v1/players/Herobrine/kick", `{"reason":"a"}`, 404, `no player "Herobrine" is online`},
	} {
		status, body := e.call(t, "POST", tc.path, key, tc.body)
		if status != tc.status || !strings.Contains(apiErr(t, body).Message, tc.msg) {
			t.Errorf("%s %.40s: %d %s, want %d with %q", tc.path, tc.body, status, body, tc.status, tc.msg)
		}
	}
	if len(e.rt.Kicks()) != 0 || where(e.rt, "Notch") == "gone" {
		t.Fatalf("a refused kick kicked: %v", e.rt.Kicks())
	}
}

const drainPath = "/api/v1/servers/lobby/backends/10.0.0.1%3A25565/drain"

func TestDrainWithMove(t *testing.T) {
	e := newEnv(t)
	status, body := e.call(t, "POST", drainPath, key, `{"move": true}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	res := data[admin.ActionResult](t, body)
	if res.Move == nil || *res.Move != (admin.MoveResult{Moved: 2}) {
		t.Fatalf("move %+v, want 2 moved", res.Move)
	}
	// The answer's backend is read after the move: drained and empty.
	if res.Action != admin.ActionDrain || res.Backend.State != "draining" || res.Backend.ActiveConnections != 0 {
		t.Fatalf("backend %+v", res.Backend)
	}
	for _, who := range []string{"Notch", "dinnerbone"} {
		if got := where(e.rt, who); got != "lobby 10.0.0.2:25565" {
			t.Fatalf("%s on %s, want the other address", who, got)
		}
	}
	if !e.drains.Drained("lobby", "10.0.0.1:25565") {
		t.Fatal("the drain was not stored")
	}
	logs := e.logs.String()
	for _, want := range []string{
		"action=drain server=lobby address=10.0.0.1:25565 client_ip=127.0.0.1 move=true",
		"action=drain.move server=lobby address=10.0.0.1:25565 moved=2 stayed=0 client_ip=127.0.0.1",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("no %q in:\n%s", want, logs)
		}
	}

	// The last address of lobby: its players go to the fallback, survival.
	status, body = e.call(t, "POST", "/api/v1/servers/lobby/backends/10.0.0.2%3A25565/drain", key, `{"move":true}`)
	if status != 200 || *data[admin.ActionResult](t, body).Move != (admin.MoveResult{Moved: 2}) {
		t.Fatalf("second drain: %d %s", status, body)
	}
	if got := where(e.rt, "Notch"); got != "survival 10.0.1.1:25565" {
		t.Fatalf("Notch on %s, want the fallback", got)
	}
	// survival has one address and no fallback: everyone stays, and that is an answer, not an error.
	status, body = e.call(t, "POST", "/api/v1/servers/survival/backends/10.0.1.1%3A25565/drain", key, `{"move":true}`)
	if status != 200 || *data[admin.ActionResult](t, body).Move != (admin.MoveResult{Stayed: 3}) {
		t.Fatalf("drain of the only address: %d %s", status, body)
	}
}

func TestDrainWithMoveOnPassthroughKeepsTheDrain(t *testing.T) {
	e := newEnv(t)
	status, body := e.call(t, "POST", "/api/v1/servers/creative/backends/10.0.2.1%3A25565/drain", key, `{"move":true}`)
	msg := apiErr(t, body).Message
	if status != 409 || !strings.Contains(msg, "drained 10.0.2.1:25565 on creative (the drain stands), but its players were not moved: the player's server is passthrough") {
		t.Fatalf("%d %s", status, body)
	}
	if !e.drains.Drained("creative", "10.0.2.1:25565") || where(e.rt, "jeb_") != "creative 10.0.2.1:25565" {
		t.Fatal("the drain must stand and jeb_ stay")
	}
}

func TestDrainBodies(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		status           int
		msg              string
		moved            bool
	}{
		{"no body is a plain drain", drainPath, "", 200, "", false},
		{"move false is a plain drain", drainPath, `{"move":false}`, 200, "", false},
		{"empty object", drainPath, ` {} `, 200, "", false},
		{"move with enable", "/api/v1/servers/lobby/backends/10.0.0.1%3A25565/enable", `{"move":true}`, 400, `"move" goes with drain, not enable`, false},
		{"move with reset", "/api/v1/servers/lobby/backends/10.0.0.1%3A25565/reset", `{"move":true}`, 400, `"move" goes with drain, not reset`, false},
		{"unknown field", drainPath, `{"mvoe":true}`, 400, "unknown field", false},
		{"trailing", drainPath, `{"move":true} {"move":false}`, 400, "trailing data", false},
		{"not json", drainPath, `move=true`, 400, "not a drain request", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			status, body := e.call(t, "POST", tc.path, key, tc.body)
			if status != tc.status {
				t.Fatalf("%d %s", status, body)
			}
			if tc.msg != "" && !strings.Contains(apiErr(t, body).Message, tc.msg) {
				t.Fatalf("message %s, want %q", body, tc.msg)
			}
			if status == 200 && strings.Contains(body, `"move"`) {
				t.Fatalf("a plain drain answered a move: %s", body)
			}
			if got := where(e.rt, "Notch"); got != "lobby 10.0.0.1:25565" {
				t.Fatalf("Notch moved to %s", got)
			}
			if status != 200 && e.drains.Drained("lobby", "10.0.0.1:25565") {
				t.Fatal("a refused request drained")
			}
		})
	}
}

func TestSnapshotCarriesThePlayers(t *testing.T) {
	e := newEnv(t)
	status, body := e.call(t, "GET", "/api/v1/snapshot", key, "")
	snap := data[admin.Snapshot](t, body)
	if status != 200 || !slices.Equal(names(snap.Players), []string{"Alex", "dinnerbone", "jeb_", "Notch"}) {
		t.Fatalf("%d %s", status, body)
	}
}

func TestSSEFiltersPlayerSwitch(t *testing.T) {
	e := newEnv(t)
	c := admin.NewClient(e.url, key)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := c.Events(ctx, events.PlayerSwitch)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	// A kick (player.leave) is filtered out; the send's switch comes through.
	if _, err := c.KickPlayer(ctx, "Alex", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendPlayer(ctx, "dinnerbone", "survival", false); err != nil {
		t.Fatal(err)
	}
	ev, err := stream.Next()
	if err != nil {
		t.Fatal(err)
	}
	var sw events.Switch
	if err := json.Unmarshal(ev.Data, &sw); err != nil {
		t.Fatal(err)
	}
	want := events.Switch{Username: "dinnerbone", FromServer: "lobby", FromAddress: "10.0.0.1:25565", ToServer: "survival", ToAddress: "10.0.1.1:25565", Reason: "admin"}
	if ev.Type != events.PlayerSwitch || sw != want {
		t.Fatalf("event %s %+v, want %+v", ev.Type, sw, want)
	}
}

func TestClientPlayers(t *testing.T) {
	e := newEnv(t)
	c := admin.NewClient(e.url, key)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	list, err := c.Players(ctx, "lobby")
	if err != nil || !slices.Equal(names(list), []string{"dinnerbone", "Notch"}) {
		t.Fatalf("Players(lobby) = %v, %v", names(list), err)
	}
	p, err := c.SendPlayer(ctx, "notch", "survival", false)
	if err != nil || p.Server != "survival" || p.Name != "Notch" {
		t.Fatalf("SendPlayer = %+v, %v", p, err)
	}
	k, err := c.KickPlayer(ctx, "Notch", "")
	if err != nil || k.Reason != admin.DefaultKickReason || k.Player.Server != "survival" {
		t.Fatalf("KickPlayer = %+v, %v", k, err)
	}
	res, err := c.DrainMove(ctx, "lobby", "10.0.0.1:25565")
	if err != nil || res.Move == nil || res.Move.Moved != 1 || res.Backend.State != "draining" {
		t.Fatalf("DrainMove = %+v, %v", res, err)
	}
	if list, err := c.Players(ctx, ""); err != nil || len(list) != 3 {
		t.Fatalf("Players() = %v, %v", names(list), err)
	}

	for _, tc := range []struct {
		name   string
		call   func() error
		status int
		msg    string
	}{
		{"unknown player", func() error { _, err := c.SendPlayer(ctx, "Herobrine", "lobby", false); return err }, 404, `no player "Herobrine" is online`},
		{"passthrough", func() error { _, err := c.SendPlayer(ctx, "jeb_", "lobby", false); return err }, 409, "jeb_ cannot be moved"},
		{"refused", func() error { _, err := c.SendPlayer(ctx, "Alex", "full", false); return err }, 502, "The server is full!"},
		{"unknown server filter", func() error { _, err := c.Players(ctx, "nope"); return err }, 404, `no server "nope"`},
		{"kick unknown", func() error { _, err := c.KickPlayer(ctx, "Herobrine", "x"); return err }, 404, "Herobrine"},
		{"drain move passthrough", func() error { _, err := c.DrainMove(ctx, "creative", "10.0.2.1:25565"); return err }, 409, "the drain stands"},
	} {
		err := tc.call()
		var ae *admin.APIError
		if !errors.As(err, &ae) || ae.Status != tc.status || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %d with %q", tc.name, err, tc.status, tc.msg)
		}
	}
	// Missing arguments are refused before any request.
	for _, err := range []error{
		func() error { _, err := c.SendPlayer(ctx, " ", "lobby", false); return err }(),
		func() error { _, err := c.SendPlayer(ctx, "Alex", "", false); return err }(),
		func() error { _, err := c.KickPlayer(ctx, "", ""); return err }(),
	} {
		var ae *admin.APIError
		if err == nil || errors.As(err, &ae) || !strings.Contains(err.Error(), "say which player") {
			t.Errorf("err %v, want a local 'say which player'", err)
		}
	}
}

// An older proxy has no players routes and ignores a drain's body: the client
// says so instead of showing a bare 404 or claiming a move that did not happen.
func TestClientAgainstAnOlderProxy(t *testing.T) {
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/drain") {
			_, _ = io.WriteString(w, `{"data":{"server":"lobby","address":"10.0.0.1:25565","action":"drain","backend":{"address":"10.0.0.1:25565","state":"draining"}}}`)
			return
		}
		w.WriteHeader(404)
		_, _ = io.WriteString(w, `{"error":{"code":"NOT_FOUND","message":"no admin API route `+r.Method+` `+r.URL.Path+`; see docs/admin-api.md"}}`)
	}))
	defer old.Close()
	c := admin.NewClient(old.URL, key)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Players(ctx, ""); err == nil || !strings.Contains(err.Error(), "has no players API: it is older than this CLI; upgrade it") {
		t.Fatalf("Players: %v", err)
	}
	if _, err := c.SendPlayer(ctx, "Notch", "lobby", false); err == nil || !strings.Contains(err.Error(), "older than this CLI") {
		t.Fatalf("SendPlayer: %v", err)
	}
	if _, err := c.DrainMove(ctx, "lobby", "10.0.0.1:25565"); err == nil || !strings.Contains(err.Error(), "drained 10.0.0.1:25565 on lobby, but the proxy at "+old.URL+" moved nobody") {
		t.Fatalf("DrainMove: %v", err)
	}
}

// BenchmarkSnapshot measures what the players cost the dashboard's one request
// per refresh: the snapshot answered with 0, 1 000 and 5 000 players online
// (baseline: 0), in server time and bytes per answer.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{0, 1000, 5000} {
		b.Run(fmt.Sprintf("players=%d", n), func(b *testing.B) {
			rt := admintest.NewRuntime(
				admintest.Server{ID: "lobby", ProxyMode: "offline", Addresses: []string{"10.0.0.1:25565", "10.0.0.2:25565"}},
				admintest.Server{ID: "survival", ProxyMode: "passthrough", Addresses: []string{"10.0.1.1:25565"}},
			)
			addrs := [][2]string{{"lobby", "10.0.0.1:25565"}, {"lobby", "10.0.0.2:25565"}, {"survival", "10.0.1.1:25565"}}
			for i := range n {
				a := addrs[i%len(addrs)]
				rt.Join(admin.Player{Name: fmt.Sprintf("player_%05d", i), UUID: "069a79f4-44e9-4726-a5be-fca90e38aaf5",
					Server: a[0], Address: a[1], ClientIP: "198.51.100.7", Protocol: 769, Version: "1.21.4", Since: since})
			}
			s, err := admin.NewServer(admin.ServerOptions{Web: config.Web{RequestsPerMinute: 0}, APIKey: key, Runtime: rt})
			if err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/api/v1/snapshot", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			var size int
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				s.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("status %d", w.Code)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/answer")
		})
	}
}

// Offline-mode names that differ only by case are different players: a kick by
// the exact name hits that player and no other; a name that matches several in
// another case is a 409 that lists them.
func TestKickByExactCase(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"dupname_0", "DUPNAME_0"} {
		e.rt.Join(admin.Player{Name: name, Server: "lobby", Address: "10.0.0.1:25565", ClientIP: "198.51.100.20", Protocol: 769, Since: since})
	}
	status, body := e.call(t, "POST", "/api/v1/players/Dupname_0/kick", key, "")
	if status != 409 || !strings.Contains(body, `2 players match \"Dupname_0\" in any case: DUPNAME_0, dupname_0; give the exact name`) {
		t.Fatalf("ambiguous kick: %d %s", status, body)
	}
	status, body = e.call(t, "POST", "/api/v1/players/dupname_0/kick", key, "")
	if status != 200 || data[admin.KickResult](t, body).Player.Name != "dupname_0" {
		t.Fatalf("exact kick: %d %s", status, body)
	}
	if got := e.rt.Kicks(); len(got) != 1 || !strings.HasPrefix(got[0], "dupname_0: ") {
		t.Fatalf("kicks %q: want dupname_0 only", got)
	}
	// With one left, any case finds it.
	if status, body := e.call(t, "POST", "/api/v1/players/dupname_0/kick", key, ""); status != 200 || data[admin.KickResult](t, body).Player.Name != "DUPNAME_0" {
		t.Fatalf("the one left, in another case: %d %s", status, body)
	}
}
