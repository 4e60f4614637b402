package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/admin/admintest"
	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
)

const cliTestKey = "cli-test-key-0123456789abcdef"

// cliRuntime is a three-server proxy for the CLI tests. Its players (from
// admintest) are really moved and kicked: lobby (offline) and hub (client_only)
// are one network, lobby falling back to hub; survival is passthrough.
type cliRuntime struct {
	*admintest.Roster
	mu      sync.Mutex
	servers map[string][]admin.Backend
	maint   map[string]bool
}

// cliPlayersSince is when the CLI tests' players joined.
var cliPlayersSince = time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)

func newCLIRuntime() *cliRuntime {
	roster := admintest.NewRoster(
		admintest.Server{ID: "lobby", ProxyMode: "offline", Network: "main", Addresses: []string{"10.0.0.1:25565", "10.0.0.2:25565"}, Fallbacks: []string{"hub"}},
		admintest.Server{ID: "hub", ProxyMode: "client_only", Network: "main", Addresses: []string{"10.0.5.1:25565"}},
		admintest.Server{ID: "survival", ProxyMode: "passthrough", Addresses: []string{"[2001:db8::1]:25565"}},
	)
	for _, p := range []admin.Player{
		{Name: "Notch", Server: "lobby", Address: "10.0.0.1:25565", ClientIP: "198.51.100.7", Protocol: 769, Version: "1.21.4"},
		{Name: "Dinnerbone", Server: "lobby", Address: "10.0.0.1:25565", ClientIP: "198.51.100.8", Protocol: 999},
		{Name: "jeb_", Server: "survival", Address: "[2001:db8::1]:25565", ClientIP: "2001:db8::7", Protocol: 47, Version: "1.8.9"},
	} {
		p.Since = cliPlayersSince
		roster.Join(p)
	}
	return &cliRuntime{Roster: roster, servers: map[string][]admin.Backend{
		"lobby": {
			{Address: "10.0.0.1:25565", Weight: 1, EffectiveWeight: 1, State: "healthy", Health: "healthy"},
			{Address: "10.0.0.2:25565", Weight: 2, EffectiveWeight: 0.5, State: "unhealthy", Health: "unhealthy", Ejections: 3},
		},
		"hub":      {{Address: "10.0.5.1:25565", Weight: 1, EffectiveWeight: 1, State: "healthy", Health: "healthy"}},
		"survival": {{Address: "[2001:db8::1]:25565", Weight: 1, EffectiveWeight: 1, State: "healthy", Health: "healthy"}},
	}}
}

func (r *cliRuntime) Servers(time.Time) []admin.ServerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	modes := map[string]string{"lobby": "offline", "hub": "client_only", "survival": "passthrough"}
	var out []admin.ServerInfo
	for id, bs := range r.servers {
		out = append(out, admin.ServerInfo{ID: id, Strategy: "least_conn", AddressCount: len(bs), ProxyMode: modes[id], Players: r.Count(id, ""), Maintenance: r.maint[id]})
	}
	slices.SortFunc(out, func(a, b admin.ServerInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (r *cliRuntime) Backends(server string, _ time.Time) (admin.Backends, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	bs, ok := r.servers[server]
	if !ok {
		return admin.Backends{}, admin.ErrUnknownServer
	}
	out := admin.Backends{Server: server, Strategy: "least_conn", Backends: slices.Clone(bs)}
	for i := range out.Backends {
		out.Backends[i].ActiveConnections = r.Count(server, out.Backends[i].Address)
	}
	return out, nil
}

func (r *cliRuntime) find(server, addr string) (*admin.Backend, error) {
	bs, ok := r.servers[server]
	if !ok {
		return nil, admin.ErrUnknownServer
	}
	for i := range bs {
		if bs[i].Address == addr {
			return &bs[i], nil
		}
	}
	return nil, admin.ErrUnknownAddress
}

func (r *cliRuntime) SetDrain(server, addr string, drained bool, _ time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := r.find(server, addr)
	if err != nil {
		return err
	}
	b.State = b.Health
	if drained {
		b.State = "draining"
	}
	r.SetDrained(server, addr, drained)
	return nil
}

func (r *cliRuntime) Reset(server, addr string, _ time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := r.find(server, addr)
	if err != nil {
		return err
	}
	b.Ejections, b.Health, b.State = 0, "healthy", "healthy"
	return nil
}

func (r *cliRuntime) Stats(time.Time) admin.Stats { return admin.Stats{} }

// startTestAdmin runs a real admin Server (with a drain store and a ban list in a temp
// data dir) on httptest and returns its URL and data dir.
func startTestAdmin(t *testing.T) (url, dataDir string) {
	t.Helper()
	return startTestAdminWith(t, newCLIRuntime())
}

// startTestAdminWith is startTestAdmin over rt, for tests that look at the
// runtime afterwards.
func startTestAdminWith(t *testing.T, rt admin.Runtime) (url, dataDir string) {
	t.Helper()
	dir := t.TempDir()
	drains, err := admin.OpenDrainStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := bans.Open(filepath.Join(dir, "bans.json"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	maint, err := admin.OpenMaintenanceStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := admin.NewServer(admin.ServerOptions{
		Maintenance: maint,
		Web:         config.Web{Bind: "127.0.0.1:0", DataDir: dir, RequestsPerMinute: 100000},
		APIKey:      cliTestKey,
		Runtime:     rt,
		Bans:        store,
		Drains:      drains,
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs.URL, dir
}

// runCLI executes the command tree with args and returns stdout and the error.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runCLIStderr(t, args...)
	return out, err
}

// runCLIStderr is runCLI that also returns what the command wrote on stderr.
func runCLIStderr(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globalFlags{stdout: &out, stderr: &errb}
	root := &cobra.Command{Use: "infrarust", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(&out)
	root.SetErr(&errb)
	root.PersistentFlags().StringVarP(&g.configPath, "config", "c", filepath.Join(t.TempDir(), "absent.toml"), "")
	root.AddCommand(newBackendsCmd(g), newBansCmd(g), newPlayersCmd(g), newServersCmd(g))
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

func TestBackendsCommands(t *testing.T) {
	url, dir := startTestAdmin(t)
	conn := []string{"--admin-url", url, "--api-key", cliTestKey}
	tests := []struct {
		name string
		args []string
		want []string // substrings of stdout, in order
	}{
		{"list all", []string{"backends", "list"}, []string{
			"SERVER", "ADDRESS", "STATE", "EJECTIONS",
			"lobby", "10.0.0.1:25565", "healthy", "2",
			"lobby", "10.0.0.2:25565", "unhealthy", "0.50",
			"survival", "[2001:db8::1]:25565"}},
		{"list one", []string{"backends", "list", "survival"}, []string{"survival", "[2001:db8::1]:25565", "healthy"}},
		{"drain", []string{"backends", "drain", "lobby", "10.0.0.1:25565"}, []string{"drained 10.0.0.1:25565 on lobby: now draining, 2 active connection(s)"}},
		{"drain v6", []string{"backends", "drain", "survival", "[2001:db8::1]:25565"}, []string{"drained [2001:db8::1]:25565 on survival: now draining"}},
		{"enable", []string{"backends", "enable", "survival", "[2001:db8::1]:25565"}, []string{"enabled [2001:db8::1]:25565 on survival: now healthy"}},
		{"reset", []string{"backends", "reset", "lobby", "10.0.0.2"}, []string{"reset 10.0.0.2:25565 on lobby: now healthy", "0 ejection(s)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCLI(t, append(tc.args, conn...)...)
			if err != nil {
				t.Fatal(err)
			}
			rest := out
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}
	store, err := admin.OpenDrainStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := store.All(); len(got) != 1 || len(got["lobby"]) != 1 || got["lobby"][0] != "10.0.0.1:25565" {
		t.Fatalf("drain store %v", got)
	}
}

func TestBackendsJSON(t *testing.T) {
	url, _ := startTestAdmin(t)
	conn := []string{"--admin-url", url, "--api-key", cliTestKey, "-o", "json"}

	out, err := runCLI(t, append([]string{"backends", "list"}, conn...)...)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]admin.Backends
	if err := json.Unmarshal([]byte(out), &all); err != nil || len(all["lobby"].Backends) != 2 {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	out, err = runCLI(t, append([]string{"backends", "list", "lobby"}, conn...)...)
	if err != nil {
		t.Fatal(err)
	}
	var one admin.Backends
	if err := json.Unmarshal([]byte(out), &one); err != nil || one.Strategy != "least_conn" || one.Backends[1].Ejections != 3 {
		t.Fatalf("list lobby -o json: %v\n%s", err, out)
	}
	out, err = runCLI(t, append([]string{"backends", "drain", "lobby", "10.0.0.2:25565"}, conn...)...)
	if err != nil {
		t.Fatal(err)
	}
	var res admin.ActionResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Action != "drain" || res.Backend.State != "draining" {
		t.Fatalf("drain -o json: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "backends", "list", "--admin-url", url, "-o", "yaml"); err == nil || !strings.Contains(err.Error(), "use table or json") {
		t.Fatalf("-o yaml: %v", err)
	}
}

func TestBackendsErrorMessages(t *testing.T) {
	url, _ := startTestAdmin(t)
	refused := "http://" + testutil.RefusedAddr(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"refused", []string{"backends", "list", "--admin-url", refused, "--api-key", cliTestKey},
			"no admin API at " + refused + " — is `infrarust serve` running?"},
		{"wrong key", []string{"backends", "list", "--admin-url", url, "--api-key", "nope-nope-nope-nope"},
			"wrong or missing API key; set INFRARUST_API_KEY or pass --api-key"},
		{"unknown address", []string{"backends", "drain", "lobby", "10.0.0.9:25565", "--admin-url", url, "--api-key", cliTestKey},
			"server lobby has no address 10.0.0.9:25565; addresses are: 10.0.0.1:25565, 10.0.0.2:25565"},
		{"unknown server", []string{"backends", "list", "nether", "--admin-url", url, "--api-key", cliTestKey},
			`no server "nether"; servers are: hub, lobby, survival`},
		{"missing address", []string{"backends", "drain", "lobby", "--admin-url", url}, "takes SERVER ADDRESS (got 1 argument(s))"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCLI(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// With no flag, the CLI finds the API through the config's [web] bind and the key
// file in its data_dir, as on the proxy's own machine.
func TestAdminConnFromConfigAndEnv(t *testing.T) {
	url, dataDir := startTestAdmin(t)
	hostport := strings.TrimPrefix(url, "http://")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "servers"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "infrarust.toml")
	toml := "[web]\nbind = \"" + hostport + "\"\ndata_dir = \"" + filepath.ToSlash(dataDir) + "\"\n"
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dataDir, admin.KeyFileName)

	t.Run("key file", func(t *testing.T) {
		t.Setenv(envAdminURL, "")
		t.Setenv(envAPIKey, "")
		if err := os.WriteFile(keyFile, []byte(cliTestKey+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := runCLI(t, "backends", "list", "--config", cfg)
		if err != nil || !strings.Contains(out, "10.0.0.1:25565") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("wrong key file names its path", func(t *testing.T) {
		t.Setenv(envAdminURL, "")
		t.Setenv(envAPIKey, "")
		if err := os.WriteFile(keyFile, []byte("stale-key-stale-key-stale\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := runCLI(t, "backends", "list", "--config", cfg)
		if err == nil || !strings.Contains(err.Error(), "(the key is in "+keyFile+")") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv(envAdminURL, url)
		t.Setenv(envAPIKey, cliTestKey)
		out, err := runCLI(t, "backends", "list", "survival")
		if err != nil || !strings.Contains(out, "[2001:db8::1]:25565") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("flag beats environment", func(t *testing.T) {
		t.Setenv(envAdminURL, "http://127.0.0.1:1")
		t.Setenv(envAPIKey, "wrong-wrong-wrong-wrong")
		if _, err := runCLI(t, "backends", "list", "--admin-url", url, "--api-key", cliTestKey); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("broken config", func(t *testing.T) {
		t.Setenv(envAdminURL, "")
		t.Setenv(envAPIKey, "")
		bad := filepath.Join(dir, "bad.toml")
		_ = os.WriteFile(bad, []byte("[web]\nbind = 12\n"), 0o600)
		_, err := runCLI(t, "backends", "list", "--config", bad)
		if err == nil || !strings.Contains(err.Error(), "or pass --admin-url and --api-key") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestDialableBind(t *testing.T) {
	for in, want := range map[string]string{
		"":               "127.0.0.1:8080",
		"127.0.0.1:8080": "127.0.0.1:8080",
		"0.0.0.0:9000":   "127.0.0.1:9000",
		"[::]:9000":      "[::1]:9000",
		":9000":          "127.0.0.1:9000",
		"10.1.2.3:8080":  "10.1.2.3:8080",
	} {
		if got := dialableBind(in); got != want {
			t.Errorf("dialableBind(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBackendsCompletion(t *testing.T) {
	url, _ := startTestAdmin(t)
	refused := "http://" + testutil.RefusedAddr(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"server ids", []string{"backends", "drain", ""}, []string{"hub", "lobby", "survival"}},
		{"addresses of the server", []string{"backends", "drain", "lobby", ""}, []string{"10.0.0.1:25565", "10.0.0.2:25565"}},
		{"list takes one server", []string{"backends", "list", "lobby", ""}, nil},
		{"nothing after the address", []string{"backends", "reset", "lobby", "10.0.0.1:25565", ""}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{cobra.ShellCompNoDescRequestCmd}, tc.args[:len(tc.args)-1]...)
			args = append(args, "--admin-url", url, "--api-key", cliTestKey, tc.args[len(tc.args)-1])
			out, err := runCLI(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := completionCandidates(out); !slices.Equal(got, tc.want) {
				t.Fatalf("candidates %q, want %q\n%s", got, tc.want, out)
			}
		})
	}
	t.Run("unreachable completes nothing", func(t *testing.T) {
		out, err := runCLI(t, cobra.ShellCompNoDescRequestCmd, "backends", "drain", "--admin-url", refused, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := completionCandidates(out); len(got) != 0 {
			t.Fatalf("candidates %q", got)
		}
	})
}

// completionCandidates strips cobra's trailing ":directive" line.
func completionCandidates(out string) []string {
	var c []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		c = append(c, line)
	}
	return c
}

func (f *cliRuntime) StartServer(context.Context, string) error { return admin.ErrNotManaged }
func (f *cliRuntime) StopServer(context.Context, string) error  { return admin.ErrNotManaged }

func (f *cliRuntime) SetMaintenance(server string, on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.servers[server]; !ok {
		return admin.ErrUnknownServer
	}
	if f.maint == nil {
		f.maint = map[string]bool{}
	}
	f.maint[server] = on
	return nil
}
