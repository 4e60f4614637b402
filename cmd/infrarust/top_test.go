package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// fakeAdminAPI answers the snapshot route `top --once` uses, with the API's envelopes.
func fakeAdminAPI(t *testing.T, key string) *httptest.Server {
	t.Helper()
	ewma := 3.5
	failed := 12.0
	data := map[string]any{
		"/api/v1/snapshot": admin.Snapshot{
			Stats: admin.Stats{Bind: "0.0.0.0:25565", UptimeSecs: 3725, PlayersOnline: 4, ConnectionsPerSec: 1.5},
			Servers: []admin.ServerInfo{
				{ID: "survival", Domains: []string{"mc.example.com"}, Strategy: "round_robin", AddressCount: 2, HealthyCount: 1, Players: 4},
			},
			Backends: map[string]admin.Backends{
				"survival": {Server: "survival", Strategy: "round_robin", Backends: []admin.Backend{
					{Address: "10.0.0.1:25565", Weight: 10, EffectiveWeight: 2.5, State: "healthy", ActiveConnections: 4, ConnectEWMAms: &ewma},
					{Address: "10.0.0.2:25565", Weight: 10, State: "unhealthy", Ejections: 2, LastFailureSecsAgo: &failed},
				}},
			},
			Players: []admin.Player{{Name: "Notch", Server: "survival", Address: "10.0.0.1:25565", Version: "1.21.4",
				ProxyMode: "offline", ClientIP: "198.51.100.7", Switchable: true}},
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(admin.ErrorEnvelope{Error: admin.ErrorBody{Code: "UNAUTHORIZED", Message: "bad key"}})
			return
		}
		v, ok := data[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(admin.ErrorEnvelope{Error: admin.ErrorBody{Code: "NOT_FOUND", Message: r.URL.Path}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": v})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// runTop runs `infrarust top args...` the way run() does, without depending on
// the command being registered yet.
func runTop(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("INFRARUST_ADMIN_URL", "")
	t.Setenv("INFRARUST_API_KEY", "")
	var out, errb bytes.Buffer
	g := &globalFlags{configPath: "./infrarust.toml", stdout: &out, stderr: &errb}
	cmd := newTopCmd(g)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(&errb, "error:", err)
		return 1, out.String(), errb.String()
	}
	return 0, out.String(), errb.String()
}

func TestTopOncePrintsPlainTables(t *testing.T) {
	srv := fakeAdminAPI(t, "k")
	for _, args := range [][]string{
		{"--once", "--admin-url", srv.URL, "--api-key", "k"},
		// stdout is not a terminal: the same table without --once.
		{"--admin-url", srv.URL, "--api-key", "k"},
	} {
		code, out, errOut := runTop(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		for _, want := range []string{
			"proxy 0.0.0.0:25565", "players 4", "conn/s 1.5",
			"SERVER", "survival  mc.example.com  round_robin  4        1/2",
			"survival (round_robin)",
			"10.0.0.1:25565  0         healthy    10      2.5        4       0         0          -             3.5ms",
			"10.0.0.2:25565  0         unhealthy  10      0.0        0       0         2          12s ago       -",
			"players (1)", "NAME   SERVER    ADDRESS         VERSION  MODE     ONLINE  CLIENT",
			"Notch  survival  10.0.0.1:25565  1.21.4   offline  -       198.51.100.7",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out)
			}
		}
		if strings.Contains(out, "\x1b[") {
			t.Errorf("plain output has escape sequences: %q", out)
		}
	}
}

func TestTopOnceProxyAwayIsACleanError(t *testing.T) {
	addr := testutil.RefusedAddr(t)

	start := time.Now()
	code, out, errOut := runTop(t, "--once", "--admin-url", "http://"+addr, "--api-key", "k")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if !strings.HasPrefix(errOut, "error: ") || !strings.Contains(errOut, addr) || strings.Contains(errOut, "goroutine") {
		t.Fatalf("stderr %q: want one error line naming the address", errOut)
	}
	if time.Since(start) > onceTimeout {
		t.Fatal("--once waited out its timeout on a refused connection")
	}
}

func TestTopOnceWrongKeySaysSo(t *testing.T) {
	srv := fakeAdminAPI(t, "right")
	code, _, errOut := runTop(t, "--once", "--admin-url", srv.URL, "--api-key", "wrong")
	if code != 1 || !strings.Contains(errOut, "API key") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestTopRejectsBadInterval(t *testing.T) {
	code, _, errOut := runTop(t, "--interval", "0s", "--admin-url", "http://127.0.0.1:1", "--api-key", "k")
	if code != 1 || !strings.Contains(errOut, "--interval") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
