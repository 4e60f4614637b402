package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// fakeServersAPI answers the server routes of the admin API as the proxy will.
type fakeServersAPI struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeServersAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+cliTestKey {
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(admin.ErrorEnvelope{Error: admin.ErrorBody{Code: "UNAUTHORIZED", Message: "bad key"}})
		return
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /api/v1/servers":
		_ = json.NewEncoder(w).Encode(admin.Envelope[[]admin.ServerInfo]{Data: []admin.ServerInfo{
			{ID: "lobby", Domains: []string{"mc.example.com"}, AddressCount: 1, HealthyCount: 1, Players: 3, ProxyMode: "client_only"},
			{ID: "survival", Domains: []string{"smp.example.com"}, AddressCount: 1, State: "sleeping", ManagerType: "local", ProxyMode: "passthrough"},
		}})
	case "POST /api/v1/servers/survival/start":
		_ = json.NewEncoder(w).Encode(admin.Envelope[map[string]string]{Data: map[string]string{"id": "survival", "state": "starting", "state_reason": "started by an operator"}})
	case "POST /api/v1/servers/lobby/stop":
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(admin.ErrorEnvelope{Error: admin.ErrorBody{Code: "BAD_REQUEST", Message: `server "lobby" has no [server_manager] block`}})
	default:
		http.NotFound(w, r)
	}
}

func runServers(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globalFlags{configPath: "/nonexistent/infrarust.toml", stdout: &out, stderr: &errb}
	cmd := newServersCmd(g)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(append(args, "--admin-url", url, "--api-key", cliTestKey))
	err := cmd.Execute()
	return out.String(), err
}

func TestServersCLI(t *testing.T) {
	api := &fakeServersAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()

	out, err := runServers(t, srv.URL, "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"survival  passthrough  sleeping  local", "lobby     client_only", "smp.example.com", "1/1 healthy"} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}

	out, err = runServers(t, srv.URL, "start", "survival")
	if err != nil {
		t.Fatal(err)
	}
	if want := "start requested for survival: now starting (started by an operator)\n"; out != want {
		t.Errorf("start printed %q, want %q", out, want)
	}

	_, err = runServers(t, srv.URL, "stop", "lobby")
	if err == nil || !strings.Contains(err.Error(), "has no [server_manager]") {
		t.Errorf("stop of an unmanaged server: %v", err)
	}

	_, err = runServers(t, srv.URL, "stop", "nosuch")
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("route missing: %v", err)
	}

	api.mu.Lock()
	defer api.mu.Unlock()
	want := []string{"GET /api/v1/servers", "POST /api/v1/servers/survival/start", "POST /api/v1/servers/lobby/stop", "POST /api/v1/servers/nosuch/stop"}
	if strings.Join(api.calls, ",") != strings.Join(want, ",") {
		t.Errorf("calls %q, want %q", api.calls, want)
	}
}

func TestServersCompletionOffersOnlyManagedServers(t *testing.T) {
	srv := httptest.NewServer(&fakeServersAPI{})
	defer srv.Close()
	for _, sub := range []string{"start", "stop"} {
		var out bytes.Buffer
		cmd := newServersCmd(&globalFlags{configPath: "/nonexistent/infrarust.toml", stdout: &out, stderr: &out})
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{"__complete", sub, "--admin-url", srv.URL, "--api-key", cliTestKey, ""})
		err := cmd.Execute()
		if got := out.String(); !strings.Contains(got, "survival\tlocal, sleeping") || strings.Contains(got, "lobby") {
			t.Errorf("servers %s completion: %v\n%s\nwant survival only (lobby has no manager)", sub, err, got)
		}
	}
}

func TestServersMaintenanceCLI(t *testing.T) {
	url, dir := startTestAdmin(t)
	conn := []string{"--admin-url", url, "--api-key", cliTestKey}
	run := func(args ...string) (string, error) {
		return runCLI(t, append(append([]string{"servers"}, args...), conn...)...)
	}

	out, err := run("maintenance", "survival", "on")
	if err != nil || out != "survival is in maintenance: only its maintenance_staff join\n" {
		t.Fatalf("on: %q, %v", out, err)
	}
	stored, err := os.ReadFile(filepath.Join(dir, admin.MaintenanceFileName))
	if err != nil || strings.TrimSpace(string(stored)) != `["survival"]` {
		t.Fatalf("stored %q, %v", stored, err)
	}
	out, err = run("list")
	if err != nil || !strings.Contains(out, "survival  passthrough  maintenance") || strings.Contains(out, "lobby     offline      maintenance") {
		t.Fatalf("list after on:\n%s%v", out, err)
	}
	out, err = run("maintenance", "survival", "off", "-o", "json")
	if err != nil || strings.Contains(out, `"maintenance"`) || !strings.Contains(out, `"id": "survival"`) {
		t.Fatalf("off: %q, %v", out, err)
	}
	if stored, _ := os.ReadFile(filepath.Join(dir, admin.MaintenanceFileName)); strings.TrimSpace(string(stored)) != "[]" {
		t.Fatalf("stored after off %q", stored)
	}
	if _, err := run("maintenance", "survival", "maybe"); err == nil || !strings.Contains(err.Error(), "say on or off") {
		t.Errorf("bad word: %v", err)
	}
	if _, err := run("maintenance", "nosuch", "on"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown server: %v", err)
	}
	if stored, _ := os.ReadFile(filepath.Join(dir, admin.MaintenanceFileName)); strings.TrimSpace(string(stored)) != "[]" {
		t.Fatalf("an unknown server was stored: %q", stored)
	}
}
