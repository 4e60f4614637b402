package manager

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

const panelKey = "ptlc_test_key"

// fakePanel is a Pterodactyl client API for one server with a tiny state machine:
// each resources poll moves starting->running and stopping->offline after a few reads.
type fakePanel struct {
	t          *testing.T
	srv        *httptest.Server
	mu         sync.Mutex
	state      string
	polls      int // resources reads left before a transitional state settles
	signals    []string
	ignoreStop bool
	status     int // forced HTTP status for every request, 0 = normal
	badHeaders []string
}

func newFakePanel(t *testing.T) *fakePanel {
	p := &fakePanel{t: t, state: "offline"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/client/servers/abc123/power", p.power)
	mux.HandleFunc("GET /api/client/servers/abc123/resources", p.resources)
	p.srv = httptest.NewServer(p.check(mux))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *fakePanel) check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		if got := r.Header.Get("Authorization"); got != "Bearer "+panelKey {
			p.badHeaders = append(p.badHeaders, "Authorization: "+got)
		}
		if got := r.Header.Get("Accept"); got != "Application/vnd.pterodactyl.v1+json" {
			p.badHeaders = append(p.badHeaders, "Accept: "+got)
		}
		forced := p.status
		p.mu.Unlock()
		if forced != 0 {
			w.WriteHeader(forced)
			_, _ = w.Write([]byte(`{"errors":[{"code":"AccessDeniedHttpException","status":"403","detail":"This action is unauthorized."}]}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (p *fakePanel) power(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Signal string `json:"signal"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad json", http.StatusUnprocessableEntity)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signals = append(p.signals, body.Signal)
	switch body.Signal {
	case "start":
		if p.state == "offline" {
			p.state, p.polls = "starting", 2
		}
	case "stop":
		if !p.ignoreStop && p.state != "offline" {
			p.state, p.polls = "stopping", 2
		}
	case "kill":
		p.state = "offline"
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *fakePanel) resources(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	state := p.state
	if p.polls > 0 {
		p.polls--
	} else {
		switch p.state {
		case "starting":
			p.state = "running"
		case "stopping":
			p.state = "offline"
		}
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object":     "stats",
		"attributes": map[string]any{"current_state": state, "is_suspended": false},
	})
}

func (p *fakePanel) set(state string) {
	p.mu.Lock()
	p.state = state
	p.mu.Unlock()
}

func (p *fakePanel) gotSignals() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.signals)
}

func (p *fakePanel) assertHeaders() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.badHeaders) > 0 {
		p.t.Errorf("requests with wrong headers: %q", p.badHeaders)
	}
}

func (p *fakePanel) server(id string) *config.Server {
	return &config.Server{ID: id, ServerManager: &config.ServerManager{
		Type: "pterodactyl", URL: p.srv.URL + "/", ServerID: "abc123", APIKey: "env:INFRARUST_TEST_PTERO_KEY",
		StartTimeout: config.Duration(5 * time.Second), PollInterval: config.Duration(20 * time.Millisecond),
		ShutdownTimeout: config.Duration(time.Second), // the stop polls every grace/10
	}}
}

func TestPterodactylStartStopAndPolling(t *testing.T) {
	t.Setenv("INFRARUST_TEST_PTERO_KEY", panelKey)
	panel := newFakePanel(t)
	h := newHarness(t, nil)
	h.configure(t, panel.server("smp"))

	if got := h.m.State("smp"); got != StateOffline {
		t.Fatalf("state before the first poll %q, want offline", got)
	}
	h.firstPoll()
	if got := h.m.State("smp"); got != StateSleeping {
		t.Fatalf("state after polling an offline server %q, want sleeping", got)
	}
	if err := h.m.EnsureStarted(context.Background(), "smp"); err != nil {
		t.Fatalf("EnsureStarted: %v", err)
	}
	if got := h.m.State("smp"); got != StateOnline {
		t.Fatalf("state %q, want online", got)
	}
	if err := h.m.Stop(context.Background(), "smp"); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if s := h.m.Snapshot()[0]; s.State != StateSleeping || !strings.Contains(s.Reason, "stopped cleanly") {
		t.Errorf("after stop: %s (%s)", s.State, s.Reason)
	}
	if got, want := panel.gotSignals(), []string{"start", "stop"}; !slices.Equal(got, want) {
		t.Errorf("power signals %q, want %q", got, want)
	}
	panel.assertHeaders()

	// A start made in the panel is picked up by polling.
	panel.set("running")
	h.firstPoll()
	h.waitState(t, "smp", StateOnline)
}

func TestPterodactylKillsAfterShutdownTimeout(t *testing.T) {
	t.Setenv("INFRARUST_TEST_PTERO_KEY", panelKey)
	panel := newFakePanel(t)
	panel.ignoreStop = true
	h := newHarness(t, nil)
	srv := panel.server("smp")
	srv.ServerManager.ShutdownTimeout = config.Duration(200 * time.Millisecond)
	h.configure(t, srv)
	panel.set("running")
	h.firstPoll()
	h.waitState(t, "smp", StateOnline)

	if err := h.m.Stop(context.Background(), "smp"); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if got, want := panel.gotSignals(), []string{"stop", "kill"}; !slices.Equal(got, want) {
		t.Errorf("power signals %q, want %q", got, want)
	}
	if s := h.m.Snapshot()[0]; !strings.Contains(s.Reason, "killed (panel kill signal)") {
		t.Errorf("reason %q", s.Reason)
	}
}

func TestPterodactylRefusedKeyIsExplained(t *testing.T) {
	t.Setenv("INFRARUST_TEST_PTERO_KEY", panelKey)
	panel := newFakePanel(t)
	panel.status = http.StatusForbidden
	h := newHarness(t, nil)
	h.configure(t, panel.server("smp"))
	h.firstPoll()
	s := h.m.Snapshot()[0]
	if s.State != StateOffline || !strings.Contains(s.LastError, "HTTP 403") || !strings.Contains(s.LastError, "api_key") {
		t.Errorf("snapshot %+v should explain the refused key", s)
	}
	err := h.m.EnsureStarted(context.Background(), "smp")
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "This action is unauthorized") {
		t.Errorf("login error %v", err)
	}
}

func TestPterodactylMissingEnvKey(t *testing.T) {
	panel := newFakePanel(t)
	srv := panel.server("smp")
	srv.ServerManager.APIKey = "env:INFRARUST_TEST_UNSET_KEY_VAR"
	h := newHarness(t, nil)
	err := h.m.Configure([]*config.Server{srv})
	if err == nil || !strings.Contains(err.Error(), "INFRARUST_TEST_UNSET_KEY_VAR") {
		t.Fatalf("Configure error %v should name the variable", err)
	}
	if !h.m.Managed("smp") || h.m.State("smp") != StateOffline {
		t.Errorf("misconfigured server should stay listed as offline, got %q", h.m.State("smp"))
	}
	if len(panel.gotSignals()) != 0 {
		t.Error("a misconfigured server must not call the panel")
	}
}
