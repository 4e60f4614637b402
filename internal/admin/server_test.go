package admin

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

const testKey = "0123456789abcdef0123456789abcdef"

type testEnv struct {
	srv   *Server
	http  *httptest.Server
	rt    *fakeRuntime
	bus   *events.Bus
	clock *testutil.Clock
	logs  *testutil.SyncBuffer
	dir   string
}

type envOpt func(*ServerOptions)

func newTestEnv(t *testing.T, opts ...envOpt) *testEnv {
	t.Helper()
	dir := t.TempDir()
	rt := newFakeRuntime()
	rt.t = t
	drains, err := OpenDrainStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	rt.drains = drains
	maint, err := OpenMaintenanceStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	rt.maintStore = maint
	clock := testutil.NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	store, err := bans.Open(filepath.Join(dir, "bans.json"), clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	logs := &testutil.SyncBuffer{}
	o := ServerOptions{
		Web:         config.Web{Enabled: true, Bind: "127.0.0.1:0", DataDir: dir, RequestsPerMinute: 100000},
		APIKey:      testKey,
		Runtime:     rt,
		Bus:         events.NewBus(),
		Bans:        store,
		Metrics:     http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "infrarust_up 1\n") }),
		Drains:      drains,
		Maintenance: maint,
		Logger:      testLogger(logs),
		Now:         clock.Now,
	}
	for _, f := range opts {
		f(&o)
	}
	s, err := NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return &testEnv{srv: s, http: hs, rt: rt, bus: o.Bus, clock: clock, logs: logs, dir: dir}
}

// call sends one request with an optional bearer key and returns status, headers and body.
func (e *testEnv) call(t *testing.T, method, path, key, body string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.http.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := e.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, resp.Header, "" // the stream never ends; headers are enough
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestAuthOnEveryRoute(t *testing.T) {
	routes := []struct {
		method, path, body string
		open               bool
		ok                 int
	}{
		{"GET", "/api/v1/health", "", true, 200},
		{"GET", "/api/v1/servers", "", false, 200},
		{"GET", "/api/v1/servers/lobby/backends", "", false, 200},
		{"GET", "/api/v1/health/backends", "", false, 200},
		{"POST", "/api/v1/servers/lobby/backends/10.0.0.1%3A25565/drain", "", false, 200},
		{"POST", "/api/v1/servers/lobby/backends/10.0.0.1%3A25565/enable", "", false, 200},
		{"POST", "/api/v1/servers/lobby/backends/10.0.0.1%3A25565/reset", "", false, 200},
		{"POST", "/api/v1/servers/lobby/maintenance", `{"on":true}`, false, 200},
		{"GET", "/api/v1/stats", "", false, 200},
		{"GET", "/api/v1/snapshot", "", false, 200},
		{"GET", "/api/v1/players", "", false, 200},
		{"GET", "/api/v1/fleet", "", false, 200},
		{"POST", "/api/v1/players/Notch/send", `{"server":"survival"}`, false, 200},
		{"POST", "/api/v1/players/jeb_/kick", "", false, 200},
		{"GET", "/api/v1/events", "", false, 200},
		{"GET", "/api/v1/bans", "", false, 200},
		{"POST", "/api/v1/bans", `{"type":"ip","value":"203.0.113.9"}`, false, 201},
		{"DELETE", "/api/v1/bans/ip/203.0.113.9", "", false, 200},
		{"GET", "/metrics", "", false, 200},
		// Issue 54's routes; this env keeps no permissions store and cannot
		// reload, so the right key gets 503 (what matters: the others get 401).
		{"POST", "/api/v1/reload", "", false, 503},
		{"GET", "/api/v1/config/fingerprint", "", false, 503},
		{"GET", "/api/v1/permissions", "", false, 200},
		{"PUT", "/api/v1/permissions/groups/mod", `{"servers":["lobby"]}`, false, 503},
		{"DELETE", "/api/v1/permissions/groups/mod", "", false, 503},
		{"POST", "/api/v1/permissions/groups/mod/permissions", `{"permission":"infrarust.command.kick"}`, false, 503},
		{"DELETE", "/api/v1/permissions/groups/mod/permissions/infrarust.command.kick", "", false, 503},
		{"POST", "/api/v1/permissions/groups/mod/members", `{"player":"Kate"}`, false, 503},
		{"DELETE", "/api/v1/permissions/groups/mod/members/Kate", "", false, 503},
		{"POST", "/api/v1/permissions/admins", `{"player":"Kate"}`, false, 503},
		// Issue 57's routes, at the reference's paths.
		{"GET", "/api/v1/players/count", "", false, 200},
		{"GET", "/api/v1/players/Notch", "", false, 200},
		{"POST", "/api/v1/players/Notch/message", `{"message":"hi"}`, false, 200},
		{"POST", "/api/v1/players/broadcast", `{"message":"hi"}`, false, 200},
		{"GET", "/api/v1/proxy", "", false, 200},
		{"POST", "/api/v1/config/reload", "", false, 503},
		{"GET", "/api/v1/logs/history", "", false, 503},
		{"GET", "/api/v1/logs", "", false, 503},
		{"GET", "/api/v1/events/recent", "", false, 200},
		{"POST", "/api/v1/session", `{"key":"` + testKey + `"}`, true, 200},
		{"POST", "/api/v1/servers", `{"id":"x","server":{"domains":["x.com"]}}`, false, 503},
		{"PUT", "/api/v1/servers/x", `{"domains":["x.com"]}`, false, 503},
		{"DELETE", "/api/v1/servers/x", "", false, 503},
		{"GET", "/api/v1/nope", "", false, 404},
	}
	env := newTestEnv(t)
	for _, r := range routes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			env.clock.Advance(time.Minute) // refill the failed-attempt budget of 127.0.0.1
			for _, c := range []struct {
				name, key string
				want      int
			}{
				{"missing", "", 401},
				{"wrong", "ffffffffffffffffffffffffffffffff", 401},
				{"right", testKey, r.ok},
			} {
				want := c.want
				if r.open {
					want = r.ok
				}
				status, hdr, body := env.call(t, r.method, r.path, c.key, r.body)
				if status != want {
					t.Fatalf("%s key: status %d, want %d (%s)", c.name, status, want, body)
				}
				if want == 401 {
					if !strings.Contains(body, `"code":"UNAUTHORIZED"`) || hdr.Get("WWW-Authenticate") == "" {
						t.Errorf("%s key: 401 without error envelope or WWW-Authenticate: %s", c.name, body)
					}
				}
			}
		})
	}
}

func TestEventsAcceptsQueryToken(t *testing.T) {
	env := newTestEnv(t)
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/api/v1/events?token=" + testKey, 200},
		{"/api/v1/events?token=wrong-wrong-wrong-wrong", 401},
		{"/api/v1/servers?token=" + testKey, 401}, // only the stream takes ?token=
	} {
		if status, _, body := env.call(t, "GET", tc.path, "", ""); status != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.path, status, tc.want, body)
		}
	}
}

func TestMetricsPublic(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Web.MetricsPublic = true })
	status, _, body := env.call(t, "GET", "/metrics", "", "")
	if status != 200 || !strings.Contains(body, "infrarust_up 1") {
		t.Fatalf("public /metrics: %d %q", status, body)
	}
	if status, _, _ := env.call(t, "GET", "/api/v1/servers", "", ""); status != 401 {
		t.Fatalf("metrics_public must not open other routes, got %d", status)
	}
}

func decodeData[T any](t *testing.T, body string) T {
	t.Helper()
	var env Envelope[T]
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	return env.Data
}

func decodeError(t *testing.T, body string) ErrorBody {
	t.Helper()
	var env ErrorEnvelope
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	return env.Error
}

func TestBackendActions(t *testing.T) {
	tests := []struct {
		name, method, path string
		status             int
		code, msgContains  string
		wantState          string
	}{
		{"drain", "POST", "/api/v1/servers/lobby/backends/10.0.0.2%3A25565/drain", 200, "", "", "draining"},
		{"drain again is idempotent", "POST", "/api/v1/servers/lobby/backends/10.0.0.2%3A25565/drain", 200, "", "", "draining"},
		{"enable", "POST", "/api/v1/servers/lobby/backends/10.0.0.2:25565/enable", 200, "", "", "healthy"},
		{"ipv6 in brackets", "POST", "/api/v1/servers/lobby/backends/%5B2001%3ADB8%3A%3A1%5D%3A25565/drain", 200, "", "", "draining"},
		{"default port", "POST", "/api/v1/servers/lobby/backends/10.0.0.1/drain", 200, "", "", "draining"},
		{"hostname normalised", "POST", "/api/v1/servers/survival/backends/MC.Example.NET%3A25570/reset", 200, "", "", "healthy"},
		{"unparsable", "POST", "/api/v1/servers/lobby/backends/10.0.0.2%3A99999/drain", 400, "BAD_REQUEST", "invalid port", ""},
		{"unbracketed v6 with port", "POST", "/api/v1/servers/lobby/backends/2001%3Adb8%3A%3A1%3A25565%3Ax/drain", 400, "BAD_REQUEST", "not host:port", ""},
		{"unknown server", "POST", "/api/v1/servers/nether/backends/10.0.0.2%3A25565/drain", 404, "NOT_FOUND", `no server "nether"; servers are: lobby, survival`, ""},
		{"unknown address", "POST", "/api/v1/servers/lobby/backends/10.0.0.9%3A25565/drain", 404, "NOT_FOUND",
			"server lobby has no address 10.0.0.9:25565; addresses are: 10.0.0.1:25565, 10.0.0.2:25565, [2001:db8::1]:25565", ""},
		{"GET on a POST route", "GET", "/api/v1/servers/lobby/backends/10.0.0.2%3A25565/drain", 405, "METHOD_NOT_ALLOWED", "POST", ""},
	}
	env := newTestEnv(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := env.call(t, tc.method, tc.path, testKey, "")
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if tc.code != "" {
				e := decodeError(t, body)
				if e.Code != tc.code || !strings.Contains(e.Message, tc.msgContains) {
					t.Fatalf("error %+v, want code %s containing %q", e, tc.code, tc.msgContains)
				}
				return
			}
			res := decodeData[ActionResult](t, body)
			if res.Backend.State != tc.wantState || res.Backend.Address != res.Address {
				t.Fatalf("result %+v, want fresh backend in state %s", res, tc.wantState)
			}
		})
	}
	// The drains that stand are on disk, under the runtime's spelling of the address.
	reopened, err := OpenDrainStore(env.dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"lobby": {"10.0.0.1:25565", "[2001:db8::1]:25565"}}
	if got := reopened.All(); !equalDrains(got, want) {
		t.Fatalf("persisted %v, want %v", got, want)
	}
	if got := env.rt.resets; len(got) != 1 || got[0] != "survival mc.example.net:25570" {
		t.Fatalf("resets %v", got)
	}
	logs := env.logs.String()
	if !strings.Contains(logs, "action=drain server=lobby address=10.0.0.2:25565 client_ip=127.0.0.1") {
		t.Errorf("no audit line for the drain in:\n%s", logs)
	}
}

func equalDrains(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, ",") != strings.Join(b[k], ",") {
			return false
		}
	}
	return true
}

func TestReadRoutes(t *testing.T) {
	env := newTestEnv(t)
	_, _, body := env.call(t, "GET", "/api/v1/health", "", "")
	if h := decodeData[map[string]string](t, body); h["status"] != "ok" {
		t.Errorf("health %v", h)
	}
	_, _, body = env.call(t, "GET", "/api/v1/servers", testKey, "")
	if s := decodeData[[]ServerInfo](t, body); len(s) != 2 || s[0].ID != "lobby" || s[0].AddressCount != 3 {
		t.Errorf("servers %+v", s)
	}
	_, _, body = env.call(t, "GET", "/api/v1/servers/lobby/backends", testKey, "")
	if b := decodeData[Backends](t, body); b.Strategy != "round_robin" || len(b.Backends) != 3 || b.Backends[1].ActiveConnections != 3 {
		t.Errorf("backends %+v", b)
	}
	status, _, body := env.call(t, "GET", "/api/v1/servers/nope/backends", testKey, "")
	if status != 404 || !strings.Contains(body, "servers are: lobby, survival") {
		t.Errorf("unknown server: %d %s", status, body)
	}
	_, _, body = env.call(t, "GET", "/api/v1/health/backends", testKey, "")
	if all := decodeData[map[string]Backends](t, body); len(all) != 2 || len(all["survival"].Backends) != 1 {
		t.Errorf("all backends %+v", all)
	}
	_, _, body = env.call(t, "GET", "/api/v1/stats", testKey, "")
	if s := decodeData[Stats](t, body); s.PlayersOnline != 7 || s.Version != "test" {
		t.Errorf("stats %+v", s)
	}
}

func TestBanRoutes(t *testing.T) {
	env := newTestEnv(t)
	sub := env.bus.Subscribe(16, events.BanCreated, events.BanRemoved)
	defer sub.Close()

	status, _, body := env.call(t, "POST", "/api/v1/bans", testKey, `{"type":"ip","value":"203.0.113.0/24","reason":"bots","duration":"7d"}`)
	if status != 201 {
		t.Fatalf("add: %d %s", status, body)
	}
	b := decodeData[bans.Ban](t, body)
	if b.ExpiresAt == nil || !b.ExpiresAt.Equal(env.clock.Now().Add(7*24*time.Hour)) || b.CreatedBy != "admin-api@127.0.0.1" {
		t.Fatalf("ban %+v: want expiry now+7d and author with caller IP", b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ev, err := sub.Next(ctx); err != nil || ev.Type != events.BanCreated {
		t.Fatalf("ban.created not published: %v %v", ev, err)
	}

	bad := []struct{ body, msg string }{
		{`{"type":"ip","value":"not-an-ip"}`, "invalid IP"},
		{`{"type":"mac","value":"x"}`, "unknown ban type"},
		{`{"type":"username","value":"x","duration":"7 fortnights"}`, "unknown unit"},
		{`{"type":"username","value":"x","duration":"7d","expires_at":"2030-01-01T00:00:00Z"}`, "not both"},
		{`{"type":"username","value":"x","colour":"red"}`, "unknown field"},
		{`not json`, "not a ban request"},
		// Two requests in one body: neither is applied.
		{`{"type":"username","value":"first"}{"type":"username","value":"second"}`, "trailing data"},
		{`{"type":"username","value":"first"} trailing`, "trailing data"},
		{`{"type":"username","value":"first"}]`, "trailing data"},
	}
	for _, tc := range bad {
		status, _, body := env.call(t, "POST", "/api/v1/bans", testKey, tc.body)
		if status != 400 || !strings.Contains(decodeError(t, body).Message, tc.msg) {
			t.Errorf("POST %s: %d %s, want 400 mentioning %q", tc.body, status, body, tc.msg)
		}
	}

	_, _, body = env.call(t, "GET", "/api/v1/bans", testKey, "")
	if list := decodeData[[]bans.Ban](t, body); len(list) != 1 || list[0].Value != "203.0.113.0/24" {
		t.Fatalf("list %+v", list)
	}
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/api/v1/bans/ip/203.0.113.0%2F24", 200},
		{"/api/v1/bans/ip/203.0.113.0%2F24", 404},
		{"/api/v1/bans/ip/not-an-ip", 400},
		{"/api/v1/bans/colour/red", 400},
	} {
		if status, _, body := env.call(t, "DELETE", tc.path, testKey, ""); status != tc.status {
			t.Errorf("DELETE %s: %d %s, want %d", tc.path, status, body, tc.status)
		}
	}
	if ev, err := sub.Next(ctx); err != nil || ev.Type != events.BanRemoved {
		t.Fatalf("ban.removed not published: %v %v", ev, err)
	}
	if !strings.Contains(env.logs.String(), "action=unban") {
		t.Errorf("no audit line for the unban")
	}
}

func TestBanRoutesWithoutStore(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Bans = nil })
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/v1/bans", ""},
		{"POST", "/api/v1/bans", `{"type":"ip","value":"1.2.3.4"}`},
		{"DELETE", "/api/v1/bans/ip/1.2.3.4", ""},
	} {
		status, _, body := env.call(t, r.method, r.path, testKey, r.body)
		if status != 503 || !strings.Contains(body, "bans are unavailable") {
			t.Errorf("%s %s: %d %s", r.method, r.path, status, body)
		}
	}
}

func TestNewServerRefusesBadOptions(t *testing.T) {
	rt := newFakeRuntime()
	for _, tc := range []struct {
		name string
		opts ServerOptions
		want string
	}{
		{"no runtime", ServerOptions{APIKey: testKey}, "Runtime is required"},
		{"short key", ServerOptions{Runtime: rt, APIKey: "short"}, "at least 16"},
		{"public bind without key", ServerOptions{Runtime: rt, Web: config.Web{Bind: "0.0.0.0:8080", DataDir: t.TempDir()}}, "reachable from other machines"},
	} {
		t.Setenv("INFRARUST_API_KEY", "")
		if _, err := NewServer(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FuzzDecodeBanRequest: any body is either one ban request or an error, never a
// panic, and an accepted body holds nothing after its object.
func FuzzDecodeBanRequest(f *testing.F) {
	for _, seed := range []string{
		`{"type":"ip","value":"203.0.113.0/24","reason":"bots","duration":"7d"}`,
		`{"type":"username","value":"a"}{"type":"username","value":"b"}`,
		`{"type":"uuid","value":"x","expires_at":"2030-01-01T00:00:00Z"}` + "\n",
		`{"type":"ip"} trailing`, `null`, `[]`, ``, `{"colour":"red"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req, err := decodeBanRequest(strings.NewReader(body))
		if err != nil {
			return
		}
		// Accepted: re-decoding the body as a stream yields exactly one value.
		dec := json.NewDecoder(strings.NewReader(body))
		var first, second json.RawMessage
		if dec.Decode(&first) != nil || dec.Decode(&second) != io.EOF {
			t.Fatalf("accepted %q (%+v) although it is not exactly one JSON value", body, req)
		}
	})
}

// FuzzDecodeDrainRequest: an optional body is empty (white space only), exactly
// one object, or an error; never a panic, never a second object applied.
func FuzzDecodeDrainRequest(f *testing.F) {
	for _, seed := range []string{``, " \n\t", `{"move":true}`, `{"move":false}`, `{}`, `{"move":true}{"move":false}`,
		`{"move":1}`, `null`, ` {"move":true} `, `{"mvoe":true}`, "\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req, err := decodeStrict[DrainRequest](strings.NewReader(body), true)
		if err != nil {
			return
		}
		if strings.TrimLeft(body, " \t\r\n") == "" {
			if req.Move {
				t.Fatalf("empty body %q decoded as a move", body)
			}
			return
		}
		dec := json.NewDecoder(strings.NewReader(body))
		var first, second json.RawMessage
		if dec.Decode(&first) != nil || dec.Decode(&second) != io.EOF {
			t.Fatalf("accepted %q (%+v) although it is not exactly one JSON value", body, req)
		}
	})
}
