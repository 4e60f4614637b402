package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/mc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testApp is a running App on loopback ports with its servers_dir in a temp folder.
type testApp struct {
	*App
	proxyAddr string
	adminAddr string
	dir       string
	reload    chan os.Signal
}

// startApp runs the composition root the way serve does (minus cobra), and at
// cleanup checks that Run returned: every goroutine it started has ended.
func startApp(t *testing.T, files map[string]string, mutate ...func(*config.Config)) *testApp {
	t.Helper()
	return startAppWithData(t, files, nil, mutate...)
}

// startAppWithData is startApp with files already in the data dir (state a
// previous run left).
func startAppWithData(t *testing.T, files, data map[string]string, mutate ...func(*config.Config)) *testApp {
	t.Helper()
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers")
	if err := os.Mkdir(servers, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		writeServerFile(t, servers, name, body)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range data {
		writeServerFile(t, filepath.Join(dir, "data"), name, body)
	}
	cfg := config.Default()
	cfg.Bind = "127.0.0.1:0"
	cfg.Web.Bind = "127.0.0.1:0"
	cfg.Web.DataDir = filepath.Join(dir, "data")
	cfg.ServersPath = servers
	cfg.StatusCache.TTL = 0
	cfg.ShutdownTimeout = config.Duration(2 * time.Second)
	loaded, errs := config.LoadServersDir(servers, cfg)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cfg.Servers = loaded
	for _, m := range mutate {
		m(cfg)
	}
	level := slog.LevelError + 100
	if os.Getenv("INFRARUST_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	opts := Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})), Version: "test"}
	a, err := build(opts)
	if err != nil {
		t.Fatal(err)
	}
	reload := make(chan os.Signal, 1)
	opts.Reload = reload
	ready := make(chan string, 1)
	var adminAddr string
	opts.Ready = func(p, ad string) { adminAddr = ad; ready <- p }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.run(ctx, opts) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("app stopped before it was ready: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return within 10s of its context ending")
		}
	})
	return &testApp{App: a, proxyAddr: addr, adminAddr: adminAddr, dir: servers, reload: reload}
}

func writeServerFile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func startBackend(t *testing.T, name string) *fakemc.Server {
	t.Helper()
	b, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: name, MOTD: "motd " + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func (ta *testApp) motd(t *testing.T, host string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", ta.proxyAddr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	body, _, err := mc.QueryStatus(c, host, 25565, 767)
	if err != nil {
		t.Fatalf("status via proxy for %q: %v", host, err)
	}
	st, err := mc.ParseStatusResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	return mc.DescriptionText(st.Description)
}

func serverFile(addr string, domains ...string) string {
	return "domains = [\"" + strings.Join(domains, "\", \"") + "\"]\naddresses = [\"" + addr + "\"]\n"
}

// Reload adds, changes and removes servers; a broken file keeps its previous
// version; a domain conflict rejects the whole reload.
func TestReloadServers(t *testing.T) {
	a, b := startBackend(t, "a"), startBackend(t, "b")
	ta := startApp(t, map[string]string{"lobby.toml": serverFile(a.Addr(), "lobby.com")})
	if got := ta.motd(t, "lobby.com"); got != "motd a" {
		t.Fatalf("before reload: %q", got)
	}

	writeServerFile(t, ta.dir, "lobby.toml", serverFile(b.Addr(), "lobby.com"))
	writeServerFile(t, ta.dir, "survival.toml", serverFile(a.Addr(), "smp.com"))
	if err := ta.ReloadServers("test"); err != nil {
		t.Fatal(err)
	}
	if got := ta.motd(t, "lobby.com"); got != "motd b" {
		t.Fatalf("changed server: %q", got)
	}
	if got := ta.motd(t, "smp.com"); got != "motd a" {
		t.Fatalf("added server: %q", got)
	}

	writeServerFile(t, ta.dir, "lobby.toml", "domains = [\"lobby.com\"]\nadresses = [\"x\"]\n")
	err := ta.ReloadServers("test")
	if err == nil || !strings.Contains(err.Error(), "lobby.toml:2") {
		t.Fatalf("broken file error should name file and line: %v", err)
	}
	if got := ta.motd(t, "lobby.com"); got != "motd b" {
		t.Fatalf("broken file must keep the old version: %q", got)
	}

	// A file that claims a domain another server holds is rejected and named; the
	// holder keeps it, and the other files of the same reload still apply.
	writeServerFile(t, ta.dir, "lobby.toml", serverFile(b.Addr(), "lobby.com"))
	writeServerFile(t, ta.dir, "thief.toml", serverFile(b.Addr(), "smp.com"))
	writeServerFile(t, ta.dir, "fresh.toml", serverFile(b.Addr(), "fresh.com"))
	err = ta.ReloadServers("test")
	if err == nil || !strings.Contains(err.Error(), "thief.toml") || !strings.Contains(err.Error(), "already claimed by server \"survival\"") {
		t.Fatalf("conflict must name the claiming file and the holder: %v", err)
	}
	if got := ta.motd(t, "smp.com"); got != "motd a" {
		t.Fatalf("the holder keeps its domain: %q", got)
	}
	if got := ta.motd(t, "fresh.com"); got != "motd b" {
		t.Fatalf("another file of the same reload must still apply: %q", got)
	}
	// An edit of an unrelated file is applied while the conflict stands (it used
	// to freeze every later reload).
	writeServerFile(t, ta.dir, "fresh.toml", serverFile(a.Addr(), "fresh.com"))
	if err := ta.ReloadServers("test"); err == nil || !strings.Contains(err.Error(), "thief.toml") {
		t.Fatalf("the standing conflict is reported again: %v", err)
	}
	if got := ta.motd(t, "fresh.com"); got != "motd a" {
		t.Fatalf("an edit made while a conflict stands was not applied: %q", got)
	}
	// An edited file that takes over a domain from a server whose file still has it
	// is the one rejected, and keeps its previous version.
	writeServerFile(t, ta.dir, "fresh.toml", serverFile(a.Addr(), "fresh.com", "lobby.com"))
	if err := ta.ReloadServers("test"); err == nil || !strings.Contains(err.Error(), "fresh.toml") || !strings.Contains(err.Error(), "keeps its previous version") {
		t.Fatalf("conflicting edit: %v", err)
	}
	if got := ta.motd(t, "lobby.com"); got != "motd b" {
		t.Fatalf("lobby.com moved to the conflicting file: %q", got)
	}
	os.Remove(filepath.Join(ta.dir, "fresh.toml"))

	os.Remove(filepath.Join(ta.dir, "thief.toml"))
	os.Remove(filepath.Join(ta.dir, "survival.toml"))
	if err := ta.ReloadServers("test"); err != nil {
		t.Fatal(err)
	}
	if _, ok := ta.proxy.Server("survival", time.Now()); ok {
		t.Fatal("removed server still routed")
	}
	if got := ta.motd(t, "smp.com"); !strings.Contains(got, "no server is configured") {
		t.Fatalf("removed server's domain: %q", got)
	}
}

// The reload signal goes through the Reload channel (SIGHUP in serve).
func TestReloadOnSignal(t *testing.T) {
	a := startBackend(t, "a")
	ta := startApp(t, nil)
	writeServerFile(t, ta.dir, "lobby.toml", serverFile(a.Addr(), "lobby.com"))
	ta.reload <- syscall.SIGHUP
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := ta.proxy.Server("lobby", time.Now()); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reload signal did not add the server within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A drain survives a reload that removes the address and adds it back (and a
// server file moved away and back): the store is reconciled on every reload, not
// only at start.
func TestDrainHoldsAcrossReloads(t *testing.T) {
	a, b := startBackend(t, "a"), startBackend(t, "b")
	two := "domains = [\"lobby.com\"]\nbalance = \"round_robin\"\naddresses = [\"" + a.Addr() + "\", \"" + b.Addr() + "\"]\n"
	ta := startApp(t, map[string]string{"lobby.toml": two})
	rt := ta.runtime("test")
	if err := ta.drains.Set("lobby", a.Addr(), true); err != nil {
		t.Fatal(err)
	}
	if err := rt.SetDrain("lobby", a.Addr(), true, time.Now()); err != nil {
		t.Fatal(err)
	}
	drained := func() bool {
		v, ok := ta.proxy.Server("lobby", time.Now())
		if !ok {
			return false
		}
		for _, be := range v.Backends {
			if be.Address == a.Addr() {
				return be.Drained
			}
		}
		return false
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"address removed", func() { writeServerFile(t, ta.dir, "lobby.toml", serverFile(b.Addr(), "lobby.com")) }},
		{"address back", func() { writeServerFile(t, ta.dir, "lobby.toml", two) }},
		{"file moved away", func() {
			if err := os.Rename(filepath.Join(ta.dir, "lobby.toml"), filepath.Join(ta.dir, "lobby.toml.off")); err != nil {
				t.Fatal(err)
			}
		}},
		{"file moved back", func() {
			if err := os.Rename(filepath.Join(ta.dir, "lobby.toml.off"), filepath.Join(ta.dir, "lobby.toml")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, s := range steps {
		s.do()
		if err := ta.ReloadServers(s.name); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	if !drained() {
		t.Fatal("the drained address came back undrained after a reload")
	}
	// New logins all go to b.
	for i := 0; i < 4; i++ {
		c, err := net.Dial("tcp", ta.proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(mc.Handshake{ProtocolVersion: 767, ServerAddress: "lobby.com", ServerPort: 25565, NextState: mc.StateLogin}.Encode())
		_, _ = c.Write(mc.LoginStart{Name: "Player"}.Encode(767))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 1)
		_, _ = c.Read(buf)
		c.Close()
	}
	if n := a.Logins.Load(); n != 0 {
		t.Fatalf("the drained address got %d logins after the reloads", n)
	}
	if n := b.Logins.Load(); n != 4 {
		t.Fatalf("the other address got %d logins, want 4", n)
	}
}

// Maintenance an operator set survives a restart (the store is replayed before
// the first player), a reload that drops the server and brings it back, and
// holds for a stored server that only appears at a later reload.
func TestMaintenanceSurvivesRestartAndReload(t *testing.T) {
	b := startBackend(t, "b")
	ta := startAppWithData(t, map[string]string{"lobby.toml": serverFile(b.Addr(), "lobby.com")},
		map[string]string{admin.MaintenanceFileName: `["gone", "lobby"]` + "\n"})
	login := func() string {
		c, err := net.Dial("tcp", ta.proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = c.Write(mc.Handshake{ProtocolVersion: 767, ServerAddress: "lobby.com", ServerPort: 25565, NextState: mc.StateLogin}.Encode())
		_, _ = c.Write(mc.LoginStart{Name: "Player"}.Encode(767))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, _ := io.ReadAll(io.LimitReader(c, 4096))
		return string(got)
	}
	if got := login(); !strings.Contains(got, "lobby is under maintenance") {
		t.Fatalf("a stored maintenance was not replayed at start: %q", got)
	}
	if !slices.Equal(ta.proxy.Maintenance(), []string{"lobby"}) {
		t.Fatalf("proxy maintenance %v", ta.proxy.Maintenance())
	}
	if err := os.Rename(filepath.Join(ta.dir, "lobby.toml"), filepath.Join(ta.dir, "lobby.toml.off")); err != nil {
		t.Fatal(err)
	}
	if err := ta.ReloadServers("away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ta.dir, "lobby.toml.off"), filepath.Join(ta.dir, "lobby.toml")); err != nil {
		t.Fatal(err)
	}
	if err := ta.ReloadServers("back"); err != nil {
		t.Fatal(err)
	}
	if got := login(); !strings.Contains(got, "lobby is under maintenance") {
		t.Fatalf("maintenance lost across a reload: %q", got)
	}
	// A stored server that was not configured at start is closed when it appears.
	writeServerFile(t, ta.dir, "gone.toml", serverFile(b.Addr(), "gone.com"))
	if err := ta.ReloadServers("gone added"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ta.proxy.Maintenance(), []string{"gone", "lobby"}) {
		t.Fatalf("proxy maintenance after gone came %v", ta.proxy.Maintenance())
	}
	if n := b.Logins.Load(); n != 0 {
		t.Fatalf("the backend got %d logins during maintenance", n)
	}
	if err := ta.runtime("test").SetMaintenance("lobby", false); err != nil {
		t.Fatal(err)
	}
	login()
	if n := b.Logins.Load(); n != 1 {
		t.Fatalf("after maintenance ended the backend got %d logins, want 1", n)
	}
}

// A managed server has an infrarust_server_state series for every state from the
// moment it is configured (1 for the current one), before any state change.
func TestServerStateSeriesFromStart(t *testing.T) {
	ta := startApp(t, map[string]string{
		"survival.toml": "domains = [\"survival.test\"]\naddresses = [\"127.0.0.1:1\"]\n[server_manager]\ntype = \"local\"\ncommand = \"/bin/false\"\n",
	}, func(c *config.Config) { c.Web.MetricsPublic = true })
	resp, err := http.Get("http://" + ta.adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	ones := 0
	for _, st := range manager.States {
		re := regexp.MustCompile(`(?m)^infrarust_server_state\{server="survival",state="` + string(st) + `"\} ([01])$`)
		m := re.FindSubmatch(body)
		if m == nil {
			t.Errorf("no infrarust_server_state series for state %s in:\n%s", st, body)
			continue
		}
		if string(m[1]) == "1" {
			ones++
		}
	}
	if ones != 1 {
		t.Errorf("%d states read 1; want exactly the current one", ones)
	}
	// The failure series its alerts read are there at 0 before any failure.
	for _, want := range []string{
		`infrarust_server_wake_failures_total{server="survival"} 0`,
		`infrarust_fallback_exhausted_total{server="survival"} 0`,
		`infrarust_backend_health_transitions_total{address="127.0.0.1:1",server="survival",state="unhealthy"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("a fresh proxy's scrape lacks %s", want)
		}
	}
}
