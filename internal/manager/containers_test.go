package manager

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery/docker/dockertest"
	"github.com/infrarust-go/infrarust/internal/discovery/kubernetes/kubetest"
)

// The container providers against fakes of their APIs: the Docker Engine API on a
// unix socket, a Kubernetes API server, and Crafty Controller's API v2.

func dockerServer(id, container string) *config.Server {
	return &config.Server{ID: id, ServerManager: &config.ServerManager{
		Type: "docker", Container: container,
		StartTimeout: config.Duration(5 * time.Second), PollInterval: config.Duration(20 * time.Millisecond),
		ShutdownTimeout: config.Duration(7 * time.Second),
	}}
}

func withDocker(t *testing.T, h *harness) *dockertest.Daemon {
	t.Helper()
	d, err := dockertest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	conn := config.DefaultDocker()
	conn.Endpoint = d.Endpoint()
	h.m.providers["docker"] = dockerProviders(conn)
	return d
}

func TestDockerStartStopAndCrash(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	d := withDocker(t, h)
	d.Add(dockertest.Container{Name: "mc-survival", State: "exited"})
	h.configure(t, dockerServer("survival", "mc-survival"))
	h.firstPoll()
	if got := h.m.State("survival"); got != StateSleeping {
		t.Fatalf("an exited container: %s, want sleeping", got)
	}

	// A login starts it.
	if err := h.m.EnsureStarted(context.Background(), "survival"); err != nil {
		t.Fatalf("EnsureStarted: %v", err)
	}
	if d.State("mc-survival") != "running" || h.m.State("survival") != StateOnline {
		t.Fatalf("container %s, server %s", d.State("mc-survival"), h.m.State("survival"))
	}

	// A stop is `docker stop` with shutdown_timeout as its grace.
	if err := h.m.Stop(context.Background(), "survival"); err != nil {
		t.Fatal(err)
	}
	if s := h.m.Snapshot()[0]; s.State != StateSleeping || !strings.Contains(s.Reason, "stopped cleanly (docker stop)") {
		t.Errorf("after stop: %s (%s)", s.State, s.Reason)
	}
	var stop dockertest.Call
	for _, c := range d.Calls() {
		if c.Method == "POST" && strings.HasSuffix(c.Path, "/stop") {
			stop = c
		}
	}
	if stop.Path != "/containers/mc-survival/stop" || stop.Query != "t=7" {
		t.Errorf("stop call %+v, want /containers/mc-survival/stop?t=7", stop)
	}

	// Started again, then it exits by itself with an error: crashed, with the code.
	if err := h.m.EnsureStarted(context.Background(), "survival"); err != nil {
		t.Fatal(err)
	}
	if err := d.Exit("mc-survival", 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	h.firstPoll()
	if s := h.m.Snapshot()[0]; s.State != StateCrashed || !strings.Contains(s.Reason, "exited with code 1") {
		t.Fatalf("after exit 1: %s (%s)", s.State, s.Reason)
	}
	// A login tries again.
	if err := h.m.EnsureStarted(context.Background(), "survival"); err != nil || d.State("mc-survival") != "running" {
		t.Fatalf("restart after a crash: %v, container %s", err, d.State("mc-survival"))
	}
}

func TestDockerUnpausesAndExplains(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	d := withDocker(t, h)
	d.Add(dockertest.Container{Name: "paused-one", State: "paused"})
	h.configure(t, dockerServer("p", "paused-one"), dockerServer("ghost", "no-such-container"))
	h.firstPoll()
	if err := h.m.EnsureStarted(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	if d.State("paused-one") != "running" || d.Count("POST", "/containers/paused-one/unpause") != 1 || d.Count("POST", "/containers/paused-one/start") != 0 {
		t.Errorf("a paused container must be unpaused, not started: %+v", d.Calls())
	}

	var ghost ServerState
	for _, s := range h.m.Snapshot() {
		if s.ID == "ghost" {
			ghost = s
		}
	}
	if ghost.State != StateOffline || !strings.Contains(ghost.LastError, "docker ps -a") {
		t.Errorf("a missing container must say where to look: %+v", ghost)
	}
	err := h.m.EnsureStarted(context.Background(), "ghost")
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "no such container") {
		t.Errorf("login to a missing container: %v", err)
	}

	// The daemon goes away: the server keeps its state (the container runs on),
	// the poll's error says why, and clears when the daemon is back.
	d.Down()
	clock.Advance(time.Second)
	h.firstPoll()
	lastErr := func() string {
		for _, s := range h.m.Snapshot() {
			if s.ID == "p" {
				return s.LastError
			}
		}
		return "?"
	}
	if e := lastErr(); !strings.Contains(e, "unreachable") || h.m.State("p") != StateOnline {
		t.Errorf("daemon down: state %s, last error %q", h.m.State("p"), e)
	}
	if err := d.Up(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	h.firstPoll()
	if e := lastErr(); e != "" || h.m.State("p") != StateOnline {
		t.Errorf("daemon back: state %s, last error %q", h.m.State("p"), e)
	}
}

// kubeFake is a fake API server and the [kubernetes] that reaches it.
func kubeFake(t *testing.T) (*kubetest.Server, config.Kubernetes) {
	t.Helper()
	api := kubetest.Start()
	t.Cleanup(api.Close)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(kubetest.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	k := config.DefaultKubernetes()
	k.APIServer, k.TokenFile = api.URL(), tok
	return api, k
}

func kubeServer(id, workload string) *config.Server {
	return &config.Server{ID: id, ServerManager: &config.ServerManager{
		Type: "kubernetes", Namespace: "mc", Workload: workload, Replicas: 1,
		StartTimeout: config.Duration(5 * time.Second), PollInterval: config.Duration(20 * time.Millisecond),
		ShutdownTimeout: config.Duration(2 * time.Second), ShutdownAfter: config.Duration(10 * time.Minute),
	}}
}

func replicas(t *testing.T, api *kubetest.Server, kind, name string) float64 {
	t.Helper()
	o := api.Object(kind, "mc", name)
	if o == nil {
		t.Fatalf("%s %s is gone", kind, name)
	}
	return o["spec"].(map[string]any)["replicas"].(float64)
}

// Scale to zero: a login scales the StatefulSet 0 -> 1, shutdown_after of no
// players scales it back to 0.
func TestKubernetesScaleToZero(t *testing.T) {
	api, k := kubeFake(t)
	api.Apply("statefulsets", kubetest.Workload("mc", "survival", 0))
	clock := newManualClock()
	h := newHarness(t, clock)
	h.m.providers["kubernetes"] = kubeProviders(k)
	h.configure(t, kubeServer("survival", "statefulset/survival"))
	h.firstPoll()
	if got := h.m.State("survival"); got != StateSleeping {
		t.Fatalf("at 0 replicas: %s, want sleeping", got)
	}
	if err := h.m.EnsureStarted(context.Background(), "survival"); err != nil {
		t.Fatalf("EnsureStarted: %v", err)
	}
	if n := replicas(t, api, "statefulsets", "survival"); n != 1 {
		t.Fatalf("a login scaled to %v, want 1", n)
	}
	h.waitState(t, "survival", StateOnline)
	clock.Advance(10*time.Minute + time.Second)
	h.m.check()
	h.waitState(t, "survival", StateSleeping)
	if n := replicas(t, api, "statefulsets", "survival"); n != 0 {
		t.Fatalf("idle scaled to %v, want 0", n)
	}
	if s := h.m.Snapshot()[0]; !strings.Contains(s.Reason, "scaled to 0") {
		t.Errorf("reason %q", s.Reason)
	}
	var patches []string
	for _, c := range api.Calls() {
		if strings.HasPrefix(c, "PATCH ") {
			patches = append(patches, c)
		}
	}
	want := []string{"PATCH /apis/apps/v1/namespaces/mc/statefulsets/survival/scale", "PATCH /apis/apps/v1/namespaces/mc/statefulsets/survival/scale"}
	if !slices.Equal(patches, want) {
		t.Errorf("scale calls %q, want %q", patches, want)
	}
}

func TestKubernetesStatesAndErrors(t *testing.T) {
	api, k := kubeFake(t)
	api.AutoReady = false
	api.Apply("deployments", kubetest.Workload("mc", "lobby", 0))
	h := newHarness(t, nil)
	h.m.providers["kubernetes"] = kubeProviders(k)
	srv := kubeServer("lobby", "deployment/lobby")
	srv.ServerManager.Replicas = 3
	h.configure(t, srv, kubeServer("ghost", "statefulset/ghost"))
	h.firstPoll()

	// Scaled to 3, no pod ready yet: starting; one ready: online.
	if err := h.m.Start(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); replicas(t, api, "deployments", "lobby") != 3; {
		if time.Now().After(deadline) {
			t.Fatalf("scaled to %v, want replicas = 3", replicas(t, api, "deployments", "lobby"))
		}
		time.Sleep(time.Millisecond) // the start request is on its way, not a window
	}
	if got := h.m.State("lobby"); got != StateStarting {
		t.Fatalf("no pod ready: %s, want starting", got)
	}
	api.SetStatus("deployments", "mc", "lobby", 3, 1)
	h.waitState(t, "lobby", StateOnline)

	// Pods that outlive the grace: the stop fails with the likely cause.
	api.SetStatus("deployments", "mc", "lobby", 3, 3)
	stopErr := h.m.Stop(context.Background(), "lobby")
	if stopErr == nil || !strings.Contains(stopErr.Error(), "terminationGracePeriodSeconds") {
		t.Errorf("stop with pods left: %v", stopErr)
	}

	var ghost ServerState
	for _, s := range h.m.Snapshot() {
		if s.ID == "ghost" {
			ghost = s
		}
	}
	if ghost.State != StateOffline || !strings.Contains(ghost.LastError, "HTTP 404") {
		t.Errorf("a missing StatefulSet: %+v", ghost)
	}
	api.Forbid("PATCH", "/apis/apps/v1/namespaces/mc/statefulsets", true)
	api.Apply("statefulsets", kubetest.Workload("mc", "ghost", 0))
	h.firstPoll()
	err := h.m.EnsureStarted(context.Background(), "ghost")
	if err == nil || !strings.Contains(err.Error(), "lacks this right") {
		t.Errorf("a refused scale must point at RBAC: %v", err)
	}
}

// fakeCrafty is Crafty Controller's API v2 for one server.
type fakeCrafty struct {
	srv     *httptest.Server
	mu      sync.Mutex
	running bool
	crashed bool
	actions []string
	ignore  bool // ignore stop_server
}

func newFakeCrafty(t *testing.T) *fakeCrafty {
	c := &fakeCrafty{}
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, data any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "data": data})
	}
	mux.HandleFunc("POST /api/v2/servers/7/action/{action}", func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		a := r.PathValue("action")
		c.actions = append(c.actions, a)
		switch a {
		case "start_server":
			c.running, c.crashed = true, false
		case "stop_server":
			if !c.ignore {
				c.running = false
			}
		case "kill_server":
			c.running = false
		}
		ok(w, nil)
	})
	mux.HandleFunc("GET /api/v2/servers/7/stats", func(w http.ResponseWriter, _ *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		ok(w, map[string]any{"running": c.running, "crashed": c.crashed, "waiting_start": false, "online": 0})
	})
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer crafty-token" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"status":"error","error":"NOT_AUTHORIZED","error_data":"Not authorized"}`))
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *fakeCrafty) server(key string) *config.Server {
	return &config.Server{ID: "crafty", ServerManager: &config.ServerManager{
		Type: "crafty", URL: c.srv.URL, ServerID: "7", APIKey: key,
		StartTimeout: config.Duration(5 * time.Second), PollInterval: config.Duration(20 * time.Millisecond),
		ShutdownTimeout: config.Duration(200 * time.Millisecond),
	}}
}

func (c *fakeCrafty) gotActions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.actions)
}

func TestCraftyStartStopKillAndCrash(t *testing.T) {
	c := newFakeCrafty(t)
	clock := newManualClock()
	h := newHarness(t, clock)
	h.m.providers["crafty"] = craftyProviders(&http.Client{Timeout: 5 * time.Second})
	t.Setenv("INFRARUST_TEST_CRAFTY", "crafty-token")
	h.configure(t, c.server("env:INFRARUST_TEST_CRAFTY"))
	h.firstPoll()
	if got := h.m.State("crafty"); got != StateSleeping {
		t.Fatalf("stopped in Crafty: %s", got)
	}
	if err := h.m.EnsureStarted(context.Background(), "crafty"); err != nil {
		t.Fatal(err)
	}
	if err := h.m.Stop(context.Background(), "crafty"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.ignore = true
	c.mu.Unlock()
	if err := h.m.EnsureStarted(context.Background(), "crafty"); err != nil {
		t.Fatal(err)
	}
	if err := h.m.Stop(context.Background(), "crafty"); err != nil {
		t.Fatal(err)
	}
	if s := h.m.Snapshot()[0]; !strings.Contains(s.Reason, "killed (kill_server)") {
		t.Errorf("reason %q", s.Reason)
	}
	want := []string{"start_server", "stop_server", "start_server", "stop_server", "kill_server"}
	if got := c.gotActions(); !slices.Equal(got, want) {
		t.Errorf("actions %q, want %q", got, want)
	}
	c.mu.Lock()
	c.crashed = true
	c.mu.Unlock()
	clock.Advance(time.Second)
	h.firstPoll()
	if got := h.m.State("crafty"); got != StateCrashed {
		t.Errorf("crashed in Crafty: %s", got)
	}
}

func TestCraftyRefusedTokenIsExplained(t *testing.T) {
	c := newFakeCrafty(t)
	h := newHarness(t, nil)
	h.m.providers["crafty"] = craftyProviders(&http.Client{Timeout: 5 * time.Second})
	h.configure(t, c.server("wrong-token"))
	h.firstPoll()
	s := h.m.Snapshot()[0]
	if s.State != StateOffline || !strings.Contains(s.LastError, "HTTP 403: NOT_AUTHORIZED (Not authorized)") || !strings.Contains(s.LastError, "API token of a Crafty user") {
		t.Errorf("snapshot %+v should explain the refused token", s)
	}
}

// The built-in table has every documented type.
func TestBuiltinProviderTypes(t *testing.T) {
	m := New(Options{})
	for _, typ := range config.ManagerTypes {
		if _, ok := m.providers[typ]; !ok {
			t.Errorf("type %q has no built-in provider", typ)
		}
	}
}
