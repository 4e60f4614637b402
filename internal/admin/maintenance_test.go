package admin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMaintenanceRoute(t *testing.T) {
	env := newTestEnv(t)
	status, _, body := env.call(t, "POST", "/api/v1/servers/survival/maintenance", testKey, `{"on": true}`)
	if status != 200 || !strings.Contains(body, `"maintenance":true`) || !strings.Contains(body, `"id":"survival"`) {
		t.Fatalf("on: %d %s", status, body)
	}
	reopened, err := OpenMaintenanceStore(env.dir)
	if err != nil || !slices.Equal(reopened.All(), []string{"survival"}) {
		t.Fatalf("stored %v, %v", reopened.All(), err)
	}
	if !strings.Contains(env.logs.String(), "server.maintenance") {
		t.Errorf("no audit log line:\n%s", env.logs.String())
	}

	for _, tc := range []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"unknown server", "/api/v1/servers/nosuch/maintenance", `{"on": true}`, 404, "NOT_FOUND"},
		{"no body", "/api/v1/servers/lobby/maintenance", "", 400, "BAD_REQUEST"},
		{"unknown key", "/api/v1/servers/lobby/maintenance", `{"on": true, "reason": "x"}`, 400, "BAD_REQUEST"},
		{"not a bool", "/api/v1/servers/lobby/maintenance", `{"on": "yes"}`, 400, "BAD_REQUEST"},
	} {
		status, _, body := env.call(t, "POST", tc.path, testKey, tc.body)
		if status != tc.status || !strings.Contains(body, tc.code) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, body, tc.status, tc.code)
		}
	}
	if got := env.rt.maint; got["nosuch"] || got["lobby"] {
		t.Errorf("a refused request changed the runtime: %v", got)
	}

	status, _, body = env.call(t, "POST", "/api/v1/servers/survival/maintenance", testKey, `{"on": false}`)
	if status != 200 || strings.Contains(body, `"maintenance"`) {
		t.Fatalf("off: %d %s", status, body)
	}
	if reopened, _ := OpenMaintenanceStore(env.dir); len(reopened.All()) != 0 {
		t.Fatalf("still stored after off: %v", reopened.All())
	}
}

func TestMaintenanceStoreRefusesCorruptFile(t *testing.T) {
	for _, content := range []string{`{"survival": true}`, `null`, `["surv`, ``} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, MaintenanceFileName), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenMaintenanceStore(dir)
		if err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("%q: %v, want a corrupt-file error (maintenance is never lifted silently)", content, err)
		}
	}
}

func TestMaintenanceStoreKeepsOrderAndRemovesTempFiles(t *testing.T) {
	dir := t.TempDir()
	leftover := filepath.Join(dir, "."+MaintenanceFileName+".tmp-42")
	if err := os.WriteFile(leftover, []byte(`["hal`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenMaintenanceStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("temp file left by a crash is still there: %v", err)
	}
	for _, st := range []struct {
		id string
		on bool
	}{{"survival", true}, {"lobby", true}, {"lobby", true}, {"hub", false}, {"survival", false}, {"creative", true}} {
		if err := s.Set(st.id, st.on); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenMaintenanceStore(dir)
	if err != nil || !slices.Equal(r.All(), []string{"creative", "lobby"}) {
		t.Fatalf("reopened %v, %v", r.All(), err)
	}
}
