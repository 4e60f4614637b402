package nmp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type pkgs = map[string]any

// The freshness check says exactly why an install differs from the lock, so npm ci
// runs only when it must (and CI's own `npm ci` is recognised as fresh).
func TestInstalledMatchesLock(t *testing.T) {
	lock := func(version int, rootDeps map[string]string) map[string]any {
		return map[string]any{
			"lockfileVersion": version,
			"packages": map[string]any{
				"":                              pkgs{"dependencies": rootDeps},
				"node_modules/a":                pkgs{"version": "1.0.0"},
				"node_modules/a/node_modules/b": pkgs{"version": "2.0.0"},
				"node_modules/opt":              pkgs{"version": "3.0.0", "optional": true},
				"node_modules/linked":           pkgs{"link": true},
			},
		}
	}
	deps := map[string]string{"a": "1.0.0"}
	cases := []struct {
		name     string
		lock     map[string]any
		manifest map[string]string
		install  map[string]string // path under node_modules -> version
		want     string            // "" = fresh
	}{
		{"fresh, optional absent", lock(3, deps), deps, map[string]string{"a": "1.0.0", "a/node_modules/b": "2.0.0"}, ""},
		{"optional present at its version", lock(3, deps), deps, map[string]string{"a": "1.0.0", "a/node_modules/b": "2.0.0", "opt": "3.0.0"}, ""},
		{"nothing installed", lock(3, deps), deps, nil, "is not installed"},
		{"nested package missing", lock(3, deps), deps, map[string]string{"a": "1.0.0"}, "node_modules/a/node_modules/b is not installed"},
		{"wrong version", lock(3, deps), deps, map[string]string{"a": "0.9.0", "a/node_modules/b": "2.0.0"}, "node_modules/a is 0.9.0, the lock wants 1.0.0"},
		{"optional at another version", lock(3, deps), deps, map[string]string{"a": "1.0.0", "a/node_modules/b": "2.0.0", "opt": "3.1.0"}, "node_modules/opt is 3.1.0"},
		{"package.json edited without the lock", lock(3, deps), map[string]string{"a": "1.1.0"}, map[string]string{"a": "1.0.0", "a/node_modules/b": "2.0.0"}, "list different dependencies"},
		{"npm 6 lockfile", lock(1, deps), deps, map[string]string{"a": "1.0.0", "a/node_modules/b": "2.0.0"}, "lockfileVersion 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeJSON(t, filepath.Join(dir, "package-lock.json"), c.lock)
			writeJSON(t, filepath.Join(dir, "package.json"), pkgs{"dependencies": c.manifest})
			for p, v := range c.install {
				writeJSON(t, filepath.Join(dir, "node_modules", filepath.FromSlash(p), "package.json"), pkgs{"version": v})
			}
			err := installedMatchesLock(dir)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want fresh, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := newTailBuffer(8)
	for _, w := range []string{"abc", "defgh", "ijk", "0123456789xyz"} {
		if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if got := b.String(); got != "6789xyz" && got != "56789xyz" {
		t.Fatalf("tail = %q", got)
	}
	if got := b.String(); len(got) > 8 {
		t.Fatalf("tail grew past its bound: %q", got)
	}
}

// The stand-in answers like Mojang's session server: a join with a known token makes
// hasJoined return the profile for that server id only; anything else is refused.
func TestSessionServer(t *testing.T) {
	ss := StartSessionServer(t)
	token, p := ss.AddProfile("Steve")
	if len(p.ID) != 32 || p.ID[12] != '4' {
		t.Fatalf("profile id %q is not a 32-digit v4 UUID", p.ID)
	}
	post := func(body string) (int, map[string]string) {
		resp, err := http.Post(ss.URL+"/session/minecraft/join", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	hasJoined := func(name, serverID string) (int, Profile) {
		resp, err := http.Get(ss.URL + "/session/minecraft/hasJoined?" + url.Values{"username": {name}, "serverId": {serverID}, "ip": {"127.0.0.1"}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got Profile
		_ = json.NewDecoder(resp.Body).Decode(&got)
		return resp.StatusCode, got
	}
	join := func(tok, profile, serverID string) string {
		b, _ := json.Marshal(map[string]string{"accessToken": tok, "selectedProfile": profile, "serverId": serverID})
		return string(b)
	}

	if code, _ := hasJoined("Steve", "-1a2b"); code != http.StatusNoContent {
		t.Fatalf("hasJoined before any join: %d, want 204", code)
	}
	if code, _ := post(join(token, p.ID, "-1a2b")); code != http.StatusNoContent {
		t.Fatalf("join with a good token: %d, want 204", code)
	}
	if code, got := hasJoined("Steve", "-1a2b"); code != http.StatusOK || got.ID != p.ID || got.Name != "Steve" {
		t.Fatalf("hasJoined after the join: %d %+v", code, got)
	}
	if code, _ := hasJoined("Steve", "ffff"); code != http.StatusNoContent {
		t.Fatalf("hasJoined with another server id: %d, want 204", code)
	}
	if code, _ := hasJoined("Alex", "-1a2b"); code != http.StatusNoContent {
		t.Fatalf("hasJoined for a name that never joined: %d, want 204", code)
	}
	refusals := []struct{ name, body string }{
		{"unknown token", join("nope", p.ID, "abc")},
		{"someone else's profile", join(token, strings.Repeat("0", 32), "abc")},
		{"no server id", join(token, p.ID, "")},
	}
	for _, r := range refusals {
		if code, e := post(r.body); code != http.StatusForbidden || e["error"] != "ForbiddenOperationException" {
			t.Errorf("join with %s: %d %v, want 403 ForbiddenOperationException", r.name, code, e)
		}
	}
	if code, _ := post("{not json"); code != http.StatusBadRequest {
		t.Errorf("malformed join: %d, want 400", code)
	}
	if code, _ := post(`{"accessToken":"` + strings.Repeat("x", maxSessionBody) + `"}`); code != http.StatusBadRequest {
		t.Errorf("oversized join: %d, want 400", code)
	}
	calls := ss.Calls()
	if len(calls) != 8 || calls[1] != (SessionCall{Kind: "join", Username: "Steve", ServerID: "-1a2b", OK: true}) ||
		calls[2] != (SessionCall{Kind: "hasJoined", Username: "Steve", ServerID: "-1a2b", IP: "127.0.0.1", OK: true}) {
		t.Fatalf("calls recorded: %+v", calls)
	}
}

// The harness against real node processes: Setup installs (or finds) the packages,
// the server's compression threshold option reaches the client, and a rejected job is
// an error rather than a silent result.
func TestHarnessCompressionThresholds(t *testing.T) {
	h := Setup(t)
	if err := installedMatchesLock(h.Dir); err != nil {
		t.Fatalf("after Setup the install must match the lock: %v", err)
	}
	client := h.StartClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cases := []struct {
		option, want int
	}{
		{0, 256}, // nmp's own default
		{64, 64}, // our override of nmp's fixed 256
		{-1, -2}, // no Set Compression at all (nmp reports -2 for "never set")
		{1, 1},   // compress everything
	}
	var srv *Server
	for _, c := range cases {
		srv = h.StartServer(t, ServerOptions{Version: "1.12.2", CompressionThreshold: c.option})
		res, err := client.Login(ctx, LoginOptions{Addr: srv.Addr, Version: "1.12.2", Username: "T", Sizes: []int{10, 63, 64, 65, 3000}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK || res.CompressionThreshold != c.want || res.Mismatches != 0 || res.PayloadsEchoed != 5 {
			t.Errorf("threshold option %d: want OK with client threshold %d: %s", c.option, c.want, res.Raw)
		}
		login, err := srv.Wait(ctx, Match("login", "T"))
		if err != nil {
			t.Fatal(err)
		}
		if login.Compression != c.want {
			t.Errorf("threshold option %d: server compresses at %d, want %d", c.option, login.Compression, c.want)
		}
	}
	// A one-off run (its own runner) sees the server's defaults.
	ping, err := h.Ping(ctx, PingOptions{Addr: srv.Addr, Version: "1.12.2"})
	if err != nil || !ping.OK || ping.MOTD != "nmp backend" || ping.PlayersMax != 20 || ping.ServerProtocol != 340 {
		t.Fatalf("one-off ping: %v %s", err, ping.Raw)
	}
	if _, err := client.Login(ctx, LoginOptions{Addr: "127.0.0.1:1", Version: "0.0.1"}); err == nil || !strings.Contains(err.Error(), "unknown version") {
		t.Fatalf("a job with an unknown version must be rejected, got %v", err)
	}
	// The runner survives a rejected job.
	if _, err := client.Ping(ctx, PingOptions{Addr: "127.0.0.1:1", Version: "1.12.2", Timeout: 5 * time.Second}); err != nil {
		t.Fatalf("ping after a rejected job: %v", err)
	}
}

// Without node, or without npm when an install is needed, the harness says what to
// install instead of failing obscurely (and never skips).
func TestMissingToolsAreNamed(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, _, err := newHarness(); err == nil || !strings.Contains(err.Error(), "node is not on PATH") || !strings.Contains(err.Error(), "install Node.js") {
		t.Fatalf("without node: %v", err)
	}
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "package-lock.json"), map[string]any{
		"lockfileVersion": 3,
		"packages":        map[string]any{"": pkgs{}, "node_modules/a": pkgs{"version": "1.0.0"}},
	})
	writeJSON(t, filepath.Join(dir, "package.json"), pkgs{})
	ran, err := ensureInstalled(dir)
	if ran || err == nil || !strings.Contains(err.Error(), "npm is not on PATH") || !strings.Contains(err.Error(), "node_modules/a is not installed") {
		t.Fatalf("stale install without npm: ran=%v err=%v", ran, err)
	}
}

// A server run by another program (here exec, as the proxy's local manager does):
// it starts slowly, its events are followed through the file, it stops on a console
// "stop"; and logins on one runner run side by side, each reporting the world it
// entered and telling the server, tick by tick, what it received there.
func TestServerCommandAndSideBySideLogins(t *testing.T) {
	h := Setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	port := FreePort(t)
	sc := h.ServerCommand(t, ServerOptions{Version: "1.20.4", Port: port, Delay: 500 * time.Millisecond, KeepAlive: 100 * time.Millisecond, ReportAlive: true})
	if sc.Events.Addr != "127.0.0.1:"+strconv.Itoa(port) || sc.Command != h.Node {
		t.Fatalf("command %q, address %q", sc.Command, sc.Events.Addr)
	}
	cmd := exec.Command(sc.Command, sc.Args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	if ev, err := sc.Events.Wait(ctx, Match("starting", "")); err != nil || ev.DelayMS != 500 {
		t.Fatalf("want a starting event with the delay: %+v, %v", ev, err)
	}
	if ev, err := sc.Events.Wait(ctx, Match("listening", "")); err != nil || ev.Port != port {
		t.Fatalf("want it listening on %d: %+v, %v", port, ev, err)
	}
	client := h.StartClient(t)
	names := []string{"A", "B", "C"}
	results := make(chan LoginResult, len(names))
	for _, name := range names {
		go func() {
			r, err := client.Login(ctx, LoginOptions{Addr: sc.Events.Addr, Version: "1.20.4", Username: name,
				KeepAlives: 3, Stay: 2 * time.Second, Tick: 100 * time.Millisecond, KeepAliveTimeout: 5 * time.Second})
			if err != nil {
				t.Error(err)
			}
			results <- r
		}()
	}
	// All three are on the server at once: the runner does not queue them.
	for _, name := range names {
		if _, err := sc.Events.Wait(ctx, func(e Event) bool {
			return e.Event == "alive" && e.Username == name && e.Worlds == 1 && e.SeenEchoes >= 2 && e.SeenKeepAlives >= 2
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sc.Events.Wait(ctx, Match("leave", "")); err != nil {
		t.Fatal(err)
	}
	for range names {
		r := <-results
		if !r.OK || len(r.Worlds) != 1 || r.Worlds[0].KeepAlives != 0 || r.TicksEchoed == 0 || r.MaxKeepAliveGapMS <= 0 || r.MaxKeepAliveGapMS > 5000 {
			t.Errorf("want one world, ticks echoed and a keep-alive gap under 5 s: %s", r.Raw)
		}
	}
	if _, err := io.WriteString(stdin, "stop\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("server.js after stop: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("server.js did not stop on a console stop")
	}
}
