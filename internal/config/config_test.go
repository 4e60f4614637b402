package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeTree(t *testing.T, main string, servers map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "servers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "infrarust.toml"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range servers {
		if err := os.WriteFile(filepath.Join(dir, "servers", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "infrarust.toml")
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"10s": 10 * time.Second, "1m": time.Minute, "500ms": 500 * time.Millisecond,
		"2m30s": 150 * time.Second, "1h 30m": 90 * time.Minute, "7d": 7 * 24 * time.Hour, "0": 0, "1.5s": 1500 * time.Millisecond,
	} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10", "s", "10x", "-1s", "1h30"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) succeeded", in)
		}
	}
}

func TestEmbeddedDefault(t *testing.T) {
	cfg, err := Load(filepath.Join(t.TempDir(), "missing.toml"), false)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Bind != "0.0.0.0:25565" || cfg.ConnectTimeout.D() != 5*time.Second || cfg.ConnectMaxAttempts != 3 ||
		cfg.StatusCache.TTL.D() != 5*time.Second || cfg.RateLimit.MaxConnections != 3 || cfg.RateLimit.StatusMax != 300 ||
		!cfg.ActiveHealth.Enabled || cfg.ActiveHealth.MaxConcurrent != 8 || cfg.Web.Bind != "127.0.0.1:8080" {
		t.Fatalf("defaults wrong: %+v", cfg)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.toml"), true); err == nil {
		t.Fatal("a named missing file must be an error")
	}
}

func TestServerFile(t *testing.T) {
	path := writeTree(t, "connect_timeout = \"2s\"\n", map[string]string{
		"lobby.toml": `domains = ["Play.Example.com.", "*.example.com"]
balance = "least_conn"
slow_start = "45s"
addresses = [
  { address = "10.0.0.1:25565", weight = 3 },
  { address = "10.0.0.2", weight = 1, priority = 1 },
  "10.0.0.3:25570",
  "[::1]:25566",
]
domain_rewrite = { explicit = "mc.internal" }
[active_health]
kind = "status_ping"
[motd.offline]
text = "down"
`,
	})
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 1 {
		t.Fatalf("servers: %d", len(cfg.Servers))
	}
	s := cfg.Servers[0]
	if s.ID != "lobby" || s.Domains[0] != "play.example.com" || s.Balance != "least_conn" || s.SlowStart.D() != 45*time.Second {
		t.Fatalf("server: %+v", s)
	}
	want := []Address{{"10.0.0.1:25565", 3, 0}, {"10.0.0.2:25565", 1, 1}, {"10.0.0.3:25570", 1, 0}, {"[::1]:25566", 1, 0}}
	for i, a := range want {
		if s.Addresses[i] != a {
			t.Errorf("address %d = %+v, want %+v", i, s.Addresses[i], a)
		}
	}
	if s.DomainRewrite != (DomainRewrite{"explicit", "mc.internal"}) {
		t.Errorf("rewrite %+v", s.DomainRewrite)
	}
	ah := cfg.EffectiveActiveHealth(s)
	if ah.Kind != "status_ping" || !ah.Enabled || ah.Timeout.D() != 3*time.Second || ah.MaxConcurrent != 8 {
		t.Errorf("active_health override should inherit unset keys: %+v", ah)
	}
	if s.MOTD.Offline == nil || s.MOTD.Offline.Text != "down" {
		t.Errorf("motd %+v", s.MOTD)
	}
}

func TestErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		name, main string
		servers    map[string]string
		want       string
	}{
		{"unknown key main", "bind = \"0.0.0.0:1\"\nconect_timeout = \"1s\"\n", nil, "infrarust.toml:2: unknown key \"conect_timeout\"; did you mean connect_timeout?"},
		{"wrong type", "max_connections = \"many\"\n", nil, "infrarust.toml:1: max_connections: expected a whole number, got a string"},
		{"bad duration", "\nconnect_timeout = \"5 parsecs\"\n", nil, "infrarust.toml:2: connect_timeout: invalid duration \"5 parsecs\": unknown unit \"parsecs\""},
		{"unknown server key", "", map[string]string{"a.toml": "domains = [\"a\"]\naddresses = [\"x:1\"]\nwieght = 3\n"}, "a.toml:3: unknown key \"wieght\"; did you mean weight, a key of an address entry"},
		{"bad address", "", map[string]string{"a.toml": "domains = [\"a\"]\naddresses = [\n  \"x:1\",\n  \"bad host:99999\",\n]\n"}, "a.toml:4: addresses[1]: address \"bad host:99999\" has an invalid port"},
		{"unknown address key", "", map[string]string{"a.toml": "domains = [\"a\"]\naddresses = [{ address = \"x:1\", wieght = 2 }]\n"}, "unknown key \"wieght\" in an address table"},
		{"domain conflict", "", map[string]string{"a.toml": "domains = [\"a.com\"]\n", "b.toml": "\ndomains = [\"a.com\"]\n"}, "b.toml:2: domain \"a.com\" is already claimed by server \"a\""},
		{"admin on the players' port", "bind = \"0.0.0.0:25565\"\n[web]\nbind = \"127.0.0.1:25565\"\n", nil, "infrarust.toml:3: web.bind: \"127.0.0.1:25565\" is where players connect"},
		{"unknown mode", "", map[string]string{"a.toml": "domains = [\"a\"]\nproxy_mode = \"turbo\"\n"}, "a.toml:2: proxy_mode: \"turbo\" is not one of passthrough, zero_copy, server_only, client_only, offline"},
		{"bad strategy", "", map[string]string{"a.toml": "domains = [\"a\"]\nbalance = \"fastest\"\n"}, "a.toml:2: balance: \"fastest\" is not one of first_available"},
		{"syntax", "bind = \n", nil, "infrarust.toml:1:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeTree(t, tc.main, tc.servers), true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	path := writeTree(t, "", map[string]string{"a.toml": `domains = ["a"]
addresses = [{ address = "x:1", weight = 3 }, "y:1"]
slow_start = "10s"
[active_health]
max_concurrent = 2
`})
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings(), "\n")
	for _, want := range []string{"weights are set but balance is first_available", "slow_start is set", "max_concurrent is read from infrarust.toml only"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", w, want)
		}
	}
}

func TestParseAddress(t *testing.T) {
	for in, want := range map[string]string{"a": "a:25565", "A.com:1": "a.com:1", "10.0.0.1": "10.0.0.1:25565", "::1": "[::1]:25565", "[::1]:5": "[::1]:5"} {
		if got, err := ParseAddress(in); err != nil || got != want {
			t.Errorf("ParseAddress(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", ":1", "a:0", "a:70000", "a b:1", "a:x"} {
		if _, err := ParseAddress(in); err == nil {
			t.Errorf("ParseAddress(%q) succeeded", in)
		}
	}
}

func FuzzParseServer(f *testing.F) {
	f.Add([]byte("domains = [\"a\"]\naddresses = [\"x:1\", { address = \"y\", weight = 2 }]\n"))
	f.Add([]byte("domain_rewrite = { explicit = 3 }"))
	f.Add([]byte("[active_health]\nkind = 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseServer(data, "f.toml", Default())
		_, _ = Parse(data, "f.toml")
	})
}

func TestRelativePathsFollowTheConfigFile(t *testing.T) {
	path := writeTree(t, "servers_dir = \"servers\"\n[web]\ndata_dir = \"state\"\n", nil)
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	if cfg.ServersPath != filepath.Join(dir, "servers") || cfg.Web.DataDir != filepath.Join(dir, "state") {
		t.Fatalf("servers %q data %q; want both under %q", cfg.ServersPath, cfg.Web.DataDir, dir)
	}
}

func TestActiveHealthOverrideOnlyWhenTheTableExists(t *testing.T) {
	s, err := ParseServer([]byte("# active_health is inherited from infrarust.toml\ndomains = [\"a\"]\n"), "a.toml", Default())
	if err != nil {
		t.Fatal(err)
	}
	if s.ActiveHealth != nil {
		t.Fatalf("a comment mentioning active_health must not create an override: %+v", s.ActiveHealth)
	}
	s, err = ParseServer([]byte("domains = [\"a\"]\nactive_health = { kind = \"status_ping\" }\n"), "a.toml", Default())
	if err != nil || s.ActiveHealth == nil || s.ActiveHealth.Kind != "status_ping" || s.ActiveHealth.Timeout.D() != 3*time.Second {
		t.Fatalf("inline override: %+v, %v", s.ActiveHealth, err)
	}
}

// config check reads the servers together: fallbacks to nowhere, across
// networks or from a passthrough server, a wake with nothing to wake, and a
// manager command that is not there each get a warning naming the file; a
// sound network gets none.
func TestCrossReferenceWarnings(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "start.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644); err != nil { // not executable
		t.Fatal(err)
	}
	path := writeTree(t, "", map[string]string{
		"lobby.toml":  "domains = [\"lobby\"]\naddresses = [\"l:1\"]\nproxy_mode = \"offline\"\nnetwork = \"main\"\n",
		"games.toml":  "domains = [\"games\"]\naddresses = [\"g:1\"]\nproxy_mode = \"offline\"\nnetwork = \"main\"\nfallback_servers = [\"lobyy\", \"lobby\"]\n",
		"event.toml":  "domains = [\"event\"]\naddresses = [\"e:1\"]\nproxy_mode = \"offline\"\nnetwork = \"events\"\nfallback_servers = [\"lobby\"]\n",
		"pt.toml":     "domains = [\"pt\"]\naddresses = [\"p:1\"]\nfallback_servers = [\"lobby\"]\n",
		"tolink.toml": "domains = [\"tolink\"]\naddresses = [\"t:1\"]\nproxy_mode = \"offline\"\nnetwork = \"main\"\nfallback_servers = [\"pt\"]\n",
		"sleepy.toml": "domains = [\"sleepy\"]\naddresses = [\"s:1\"]\nproxy_mode = \"offline\"\nnetwork = \"main\"\nlimbo_handlers = [\"wake\"]\n",
		"local.toml":  "domains = [\"local\"]\naddresses = [\"127.0.0.1:25570\"]\n[server_manager]\ntype = \"local\"\ncommand = \"no-such-command-for-infrarust\"\n",
		"script.toml": fmt.Sprintf("domains = [\"script\"]\naddresses = [\"127.0.0.1:25571\"]\n[server_manager]\ntype = \"local\"\ncommand = \"./start.sh\"\nworking_dir = %q\n", dir),
	})
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings(), "\n")
	for _, want := range []string{
		`games.toml: fallback_servers: "lobyy" is no server of servers_dir; did you mean "lobby"?`,
		`event.toml: fallback_servers: "lobby" is on network "main" and this server on "events"`,
		`pt.toml: fallback_servers has no effect`,
		`tolink.toml: fallback_servers: "pt" is a passthrough server`,
		`sleepy.toml: limbo_handlers has "wake" but the server has no [server_manager]`,
		`local.toml: server_manager.command: "no-such-command-for-infrarust" is not in PATH`,
		`script.toml: server_manager.command: ` + script + ` is not executable`,
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "lobby.toml:") {
		t.Errorf("a sound server got a warning:\n%s", w)
	}
}

// One run of config check shows everything: a typo in a fixed set gets the
// closest value, and a file with errors still has its domains checked
// against the others' (the error is the broken file's).
func TestConfigErrorsSuggestAndSeeAcrossBrokenFiles(t *testing.T) {
	path := writeTree(t, "[forwarding]\nmode = \"velocty\"\n", map[string]string{
		"a.toml": "domains = [\"a\"]\naddresses = [\"a:1\"]\nproxy_mode = \"ofline\"\nbalance = \"round_robbin\"\n",
		"b.toml": "domains = [\"a\"]\naddresses = [\"b:1\"]\n",
	})
	_, err := Load(path, true)
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{
		`forwarding.mode: "velocty" is not one of none, velocity`,
		`did you mean "velocity"?`,
		`a.toml:3: proxy_mode: "ofline" is not one of`,
		`did you mean "offline"?`,
		`a.toml:4: balance: "round_robbin" is not one of`,
		`did you mean "round_robin"?`,
		`a.toml:1: domain "a" is also claimed by server "b"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors lack %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "forwarding.mode: forwarding:") {
		t.Errorf("doubled prefix:\n%s", msg)
	}
}

// Setups that start and then fail every login get a warning: an empty
// [fleet] (the proxy runs alone), and a passthrough server under a global
// forwarding it cannot carry. A server that says forwarding_mode = "none",
// or an intercepted one, gets none.
func TestWarningsOfSilentFailures(t *testing.T) {
	path := writeTree(t, "[fleet]\n# redis to be filled in\n[forwarding]\nmode = \"velocity\"\n", map[string]string{
		"pass.toml":    "domains = [\"pass\"]\naddresses = [\"x:1\"]\n",
		"plain.toml":   "domains = [\"plain\"]\naddresses = [\"x:1\"]\nforwarding_mode = \"none\"\n",
		"offline.toml": "domains = [\"offline\"]\naddresses = [\"x:1\"]\nproxy_mode = \"offline\"\n",
	})
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings(), "\n")
	for _, want := range []string{"[fleet] is written but has no redis", "pass.toml: proxy_mode \"passthrough\" forwards the player's bytes as they are, so [forwarding] mode = \"velocity\""} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "plain.toml") || strings.Contains(w, "offline.toml") {
		t.Errorf("a server that carries or refuses the forwarding is warned of:\n%s", w)
	}
	cfg, err = Load(writeTree(t, "", nil), true)
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Warnings(); len(w) > 0 {
		t.Errorf("a plain configuration has warnings: %q", w)
	}
}
