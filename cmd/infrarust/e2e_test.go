package main

// End-to-end tests: the real `serve` wiring (proxy, active prober, admin API,
// metrics, drain store) runs in-process on loopback ports, fake Minecraft
// backends stand behind it, and the tests drive it the way an operator does —
// through the admin client, the CLI, the SSE stream and the `top` model.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/app"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

const e2eHost = "play.example.com"

// e2eServe is one running `serve` with the paths an operator's CLI would use.
type e2eServe struct {
	proxyAddr string
	adminURL  string
	key       string
	dataDir   string
	// configPath is an infrarust.toml whose [web] points at this instance, so the
	// CLI finds it with --config alone.
	configPath string
	client     *admin.Client

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan error
}

// e2eServer is a server config as a servers/*.toml file would give it.
func e2eServer(id string, addrs ...string) *config.Server {
	s := &config.Server{
		ID: id, File: id + ".toml", Name: id, Domains: []string{e2eHost}, Balance: "first_available",
		SlowStartAggression: 1, ProxyMode: "passthrough", DomainRewrite: config.DomainRewrite{Mode: config.RewriteNone},
		DisconnectMessage: "unreachable", FullKickPatterns: config.DefaultFullKickPatterns,
	}
	for _, a := range addrs {
		s.Addresses = append(s.Addresses, config.Address{Address: a, Weight: 1})
	}
	return s
}

// startServe runs serve on 127.0.0.1:0 (proxy and admin API) with dataDir and the
// given servers, and stops it when the test ends.
func startServe(t *testing.T, dataDir string, servers ...*config.Server) *e2eServe {
	t.Helper()
	return startServeWith(t, dataDir, nil, servers...)
}

// startServeWith is startServe with mutate applied to the configuration last.
func startServeWith(t *testing.T, dataDir string, mutate func(*config.Config), servers ...*config.Server) *e2eServe {
	t.Helper()
	// The key must come from the generated key file, as on a fresh machine.
	t.Setenv(envAPIKey, "")
	t.Setenv(envAdminURL, "")

	cfg := config.Default()
	cfg.Bind = "127.0.0.1:0"
	cfg.ConnectTimeout = config.Duration(time.Second)
	cfg.ShutdownTimeout = config.Duration(2 * time.Second)
	cfg.ServersPath = t.TempDir()
	cfg.Servers = servers
	cfg.Web.Bind = "127.0.0.1:0"
	cfg.Web.DataDir = dataDir
	cfg.Web.RequestsPerMinute = 1 << 20 // the tests poll; the limiter has its own tests
	cfg.ActiveHealth.UnhealthyInterval = config.Duration(time.Second)
	if mutate != nil {
		mutate(cfg)
	}

	level := slog.LevelWarn + 100
	if os.Getenv("INFRARUST_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	type addrs struct{ proxy, admin string }
	ready := make(chan addrs, 1)
	ctx, cancel := context.WithCancel(context.Background())
	s := &e2eServe{dataDir: dataDir, cancel: cancel, done: make(chan error, 1)}
	go func() {
		s.done <- app.Run(ctx, app.Options{Config: cfg, Logger: log, Version: version, Ready: func(p, a string) { ready <- addrs{p, a} }})
	}()
	select {
	case a := <-ready:
		s.proxyAddr, s.adminURL = a.proxy, "http://"+a.admin
	case err := <-s.done:
		cancel()
		t.Fatalf("serve returned before it was ready: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("serve did not become ready within 10s")
	}
	t.Cleanup(func() { s.stop(t) })

	key, err := os.ReadFile(filepath.Join(dataDir, admin.KeyFileName))
	if err != nil {
		t.Fatalf("serve on a loopback bind without a key must generate %s: %v", admin.KeyFileName, err)
	}
	s.key = strings.TrimSpace(string(key))
	s.client = admin.NewClient(s.adminURL, s.key)

	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "servers"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.configPath = filepath.Join(dir, "infrarust.toml")
	toml := fmt.Sprintf("[web]\nbind = %q\ndata_dir = %q\n", strings.TrimPrefix(s.adminURL, "http://"), filepath.ToSlash(dataDir))
	if err := os.WriteFile(s.configPath, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// stop cancels serve and waits for it to return; safe to call twice.
func (s *e2eServe) stop(t *testing.T) {
	t.Helper()
	s.stopOnce.Do(func() {
		// A connection the transport dialed but never used (it lost a race to an idle
		// one) looks new to the server, and http.Server.Shutdown waits 5 s for those.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		s.cancel()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("serve did not return within 10s of its context ending")
		}
	})
}

func startFake(t *testing.T, opts fakemc.Options) *fakemc.Server {
	t.Helper()
	b, err := fakemc.Start("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// dialLogin sends a handshake and login start through the proxy and returns the
// connection and the first frame the player gets.
func dialLogin(t *testing.T, proxyAddr, name string) (net.Conn, *bufio.Reader, mc.Frame) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxyAddr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	out := mc.Handshake{ProtocolVersion: 767, ServerAddress: e2eHost, ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	out = append(out, mc.LoginStart{Name: name, HasUUID: true}.Encode(767)...)
	if _, err := c.Write(out); err != nil {
		c.Close()
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	f, err := mc.ReadFrame(br, mc.MaxFrameSize)
	if err != nil {
		c.Close()
		t.Fatalf("login %s: no first frame: %v", name, err)
	}
	return c, br, f
}

// loginTo logs a player in and returns the disconnect text a fakemc backend
// answers with ("You reached <backend> (as <name>)").
func loginTo(t *testing.T, proxyAddr, name string) string {
	t.Helper()
	c, _, f := dialLogin(t, proxyAddr, name)
	defer c.Close()
	text, ok := mc.ParseLoginDisconnect(f)
	if !ok {
		t.Fatalf("login %s: packet 0x%02x, want a Login Disconnect", name, f.ID)
	}
	return text
}

func reached(backend, player string) string {
	return fmt.Sprintf("You reached %s (as %s)", backend, player)
}

func statusPing(t *testing.T, proxyAddr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxyAddr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := mc.QueryStatus(c, e2eHost, 25565, 767); err != nil {
		t.Fatalf("status ping: %v", err)
	}
}

// killBackend stops a backend; its port then refuses connections.
func killBackend(t *testing.T, b *fakemc.Server) {
	t.Helper()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// cli runs the real command tree (backends) with args and returns stdout.
func cli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globalFlags{stdout: &out, stderr: &errb}
	root := &cobra.Command{Use: "infrarust", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(&out)
	root.SetErr(&errb)
	root.PersistentFlags().StringVarP(&g.configPath, "config", "c", filepath.Join(t.TempDir(), "absent.toml"), "")
	root.AddCommand(newBackendsCmd(g))
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// backendState reads one address through the admin client.
func backendState(t *testing.T, c *admin.Client, server, addr string) admin.Backend {
	t.Helper()
	bs, err := c.Backends(context.Background(), server)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs.Backends {
		if b.Address == addr {
			return b
		}
	}
	t.Fatalf("server %s has no address %s in %+v", server, addr, bs.Backends)
	return admin.Backend{}
}

// eventsOf reads a stream into a channel until it ends.
func eventsOf(s *admin.EventStream) <-chan admin.StreamEvent {
	ch := make(chan admin.StreamEvent, 256)
	go func() {
		defer close(ch)
		for {
			ev, err := s.Next()
			if err != nil {
				return
			}
			ch <- ev
		}
	}()
	return ch
}

// waitHealthChange waits up to d for addr's change to `to` on ch and returns it.
func waitHealthChange(t *testing.T, ch <-chan admin.StreamEvent, addr, to string, d time.Duration) events.HealthChange {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("event stream ended before %s went %s; saw %v", addr, to, seen)
			}
			seen = append(seen, string(ev.Type)+" "+string(ev.Data))
			if ev.Type != events.BackendHealthChange {
				continue
			}
			var hc events.HealthChange
			if err := json.Unmarshal(ev.Data, &hc); err != nil {
				t.Fatalf("health_change payload %s: %v", ev.Data, err)
			}
			if hc.Address == addr && hc.To == to {
				if hc.Server != "lobby" || hc.From == "" || ev.Time.IsZero() {
					t.Fatalf("health_change %+v at %v lacks server, from or timestamp", hc, ev.Time)
				}
				return hc
			}
		case <-timer.C:
			t.Fatalf("no backend.health_change of %s to %s within %v; saw %v", addr, to, d, seen)
		}
	}
}

// An address that refuses three logins in a row is ejected, and an SSE
// subscriber hears about it within a second; `backends reset` through the CLI
// clears it.
func TestE2EEjectionReachesEventStream(t *testing.T) {
	a := startFake(t, fakemc.Options{Name: "a"})
	b := startFake(t, fakemc.Options{Name: "b"})
	c := startFake(t, fakemc.Options{Name: "c"})
	dead := a.Addr()
	s := startServe(t, t.TempDir(), e2eServer("lobby", dead, b.Addr(), c.Addr()))

	if got := loginTo(t, s.proxyAddr, "Alex"); got != reached("a", "Alex") {
		t.Fatalf("first login: %q", got)
	}
	stream, err := s.client.Events(context.Background(), "backend.health_change")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	evs := eventsOf(stream)

	killBackend(t, a)
	for i := range 3 {
		name := "Steve" + strconv.Itoa(i)
		if got := loginTo(t, s.proxyAddr, name); got != reached("b", name) {
			t.Fatalf("login %d with %s dead: %q, want the next address", i, dead, got)
		}
	}
	waitHealthChange(t, evs, dead, "unhealthy", time.Second)

	st := backendState(t, s.client, "lobby", dead)
	if st.State != "unhealthy" || st.Ejections != 1 || st.LastFailureSecsAgo == nil {
		t.Fatalf("after the ejection: %+v", st)
	}
	// Ejected addresses go to the back: the next login goes straight to b.
	if got := loginTo(t, s.proxyAddr, "Herobrine"); got != reached("b", "Herobrine") {
		t.Fatalf("login after the ejection: %q", got)
	}

	// The operator brings a back and resets it: its recovery attempt is due at once
	// instead of after the 30 s backoff.
	back, err := fakemc.Start(dead, fakemc.Options{Name: "a-again"})
	if err != nil {
		t.Fatalf("restart a on its port: %v", err)
	}
	t.Cleanup(func() { back.Close() })
	out, err := cli(t, "backends", "reset", "lobby", dead, "--config", s.configPath)
	if err != nil || !strings.Contains(out, "reset "+dead+" on lobby: now ") || !strings.Contains(out, "0 ejection(s)") {
		t.Fatalf("backends reset: %v\n%s", err, out)
	}
	// The active prober (unhealthy_interval 1s) makes the recovery attempt.
	waitHealthChange(t, evs, dead, "healthy", 5*time.Second)
	if got := loginTo(t, s.proxyAddr, "Returning"); got != reached("a-again", "Returning") {
		t.Fatalf("login after the recovery: %q", got)
	}
}

// A subscriber that never reads its stream must not slow logins down.
func TestE2EStalledSubscriberDoesNotBlockLogins(t *testing.T) {
	b := startFake(t, fakemc.Options{Name: "b"})
	s := startServe(t, t.TempDir(), e2eServer("lobby", b.Addr()))

	// A tiny receive buffer makes the stall reach the server's writer (400 join and
	// leave events are ~100 KB) instead of disappearing into loopback socket buffers.
	stalledClient := admin.NewClient(s.adminURL, s.key)
	stalledClient.SetHTTPClient(&http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(1024)
			}
			return c, err
		},
	}})
	stalled, err := stalledClient.Events(context.Background()) // every type, never read
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()

	const logins, workers = 200, 8
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, logins)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				name := "Player" + strconv.Itoa(i)
				if err := rawLogin(ctx, s.proxyAddr, name, reached("b", name)); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range logins {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ctx.Err() != nil {
		t.Fatal("200 logins did not finish within 15s while a subscriber stalled")
	}
	if n := b.Logins.Load(); n != logins {
		t.Fatalf("backend saw %d logins, want %d", n, logins)
	}
	// The proxy still streams to a subscriber that reads.
	live, err := s.client.Events(context.Background(), "backend.health_change")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	evs := eventsOf(live)
	if _, err := s.client.Drain(context.Background(), "lobby", b.Addr()); err != nil {
		t.Fatal(err)
	}
	waitHealthChange(t, evs, b.Addr(), "draining", 5*time.Second)
}

// rawLogin is loginTo for goroutines: it returns an error instead of failing.
func rawLogin(ctx context.Context, proxyAddr, name, want string) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", proxyAddr)
	if err != nil {
		return err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	out := mc.Handshake{ProtocolVersion: 767, ServerAddress: e2eHost, ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	out = append(out, mc.LoginStart{Name: name, HasUUID: true}.Encode(767)...)
	if _, err := c.Write(out); err != nil {
		return err
	}
	f, err := mc.ReadFrame(bufio.NewReader(c), mc.MaxFrameSize)
	if err != nil {
		return fmt.Errorf("login %s: %w", name, err)
	}
	if text, ok := mc.ParseLoginDisconnect(f); !ok || text != want {
		return fmt.Errorf("login %s: got %q (packet 0x%02x), want %q", name, text, f.ID, want)
	}
	return nil
}

// metricValue finds the sample name{labels...} in a Prometheus text page; every
// wanted label must match (others may be present).
func metricValue(page, name string, labels map[string]string) (float64, bool) {
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		var series, value string
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			series, value = line[:i], line[i+1:]
		} else {
			continue
		}
		got, rest, _ := strings.Cut(series, "{")
		if got != name {
			continue
		}
		have := map[string]string{}
		for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				have[k] = strings.Trim(v, `"`)
			}
		}
		match := true
		for k, v := range labels {
			if have[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		return f, true
	}
	return 0, false
}

func scrape(t *testing.T, s *e2eServe, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.adminURL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// /metrics carries the backend series with server and address labels after a few
// logins, pings and failures.
func TestE2EMetrics(t *testing.T) {
	a := startFake(t, fakemc.Options{Name: "a"})
	b := startFake(t, fakemc.Options{Name: "b"})
	dead, live := a.Addr(), b.Addr()
	s := startServe(t, t.TempDir(), e2eServer("lobby", dead, live))

	if code, _ := scrape(t, s, ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without the key: %d, want 401", code)
	}
	killBackend(t, a)
	for i := range 3 {
		name := "Metric" + strconv.Itoa(i)
		if got := loginTo(t, s.proxyAddr, name); got != reached("b", name) {
			t.Fatalf("login %d: %q", i, got)
		}
	}
	statusPing(t, s.proxyAddr)
	statusPing(t, s.proxyAddr) // inside the status cache's TTL: a hit

	type want struct {
		name   string
		labels map[string]string
		min    float64
	}
	wants := []want{
		{"infrarust_backend_connect_duration_seconds_count", map[string]string{"server": "lobby", "address": live}, 3},
		{"infrarust_backend_connect_duration_seconds_bucket", map[string]string{"server": "lobby", "address": live, "le": "+Inf"}, 3},
		{"infrarust_backend_connect_failures_total", map[string]string{"server": "lobby", "address": dead}, 3},
		{"infrarust_backend_health_transitions_total", map[string]string{"server": "lobby", "address": dead, "state": "unhealthy"}, 1},
		{"infrarust_connections_accepted_total", nil, 5},
		{"infrarust_players_online", map[string]string{"server": "lobby"}, 0},
		{"infrarust_status_cache_hits_total", nil, 1},
		{"infrarust_logins_total", map[string]string{"server": "lobby", "outcome": "success"}, 3},
		{"infrarust_backend_state", map[string]string{"server": "lobby", "address": dead, "state": "unhealthy"}, 1},
		{"infrarust_build_info", nil, 1},
	}
	// The transition counter is fed from the event bus: poll for it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, page := scrape(t, s, s.key)
		if code != http.StatusOK {
			t.Fatalf("/metrics with the key: %d\n%s", code, page)
		}
		var missing []string
		for _, w := range wants {
			if v, ok := metricValue(page, w.name, w.labels); !ok || v < w.min {
				missing = append(missing, fmt.Sprintf("%s%v >= %v (have %v, present %v)", w.name, w.labels, w.min, v, ok))
			}
		}
		if len(missing) == 0 {
			// Cardinality is bounded by the configured addresses: no failure series for the live one.
			if v, ok := metricValue(page, "infrarust_backend_connect_failures_total", map[string]string{"address": live}); ok && v != 0 {
				t.Errorf("failures counted against the live address: %v", v)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks:\n  %s\n\n%s", strings.Join(missing, "\n  "), page)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
