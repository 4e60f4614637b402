package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesLoad runs what `config check` runs on every directory under examples/,
// so a schema change that breaks a shipped example fails here. Examples must also be
// free of warnings: they are what operators copy.
func TestExamplesLoad(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*/infrarust.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"single-server": false, "balanced-lobby": false, "wildcard-network": false, "haproxy-proxy-protocol": false, "velocity-network": false}
	for _, path := range dirs {
		name := filepath.Base(filepath.Dir(path))
		t.Run(name, func(t *testing.T) {
			cfg, err := Load(path, true)
			if err != nil {
				t.Fatalf("config check fails on %s:\n%v", path, err)
			}
			if len(cfg.Servers) == 0 {
				t.Fatalf("%s loads no servers", path)
			}
			for _, w := range cfg.Warnings() {
				t.Errorf("warning: %s", w)
			}
			entries, err := os.ReadDir(filepath.Join(filepath.Dir(path), "servers"))
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(cfg.Servers) {
				t.Errorf("servers/ holds %d files but %d servers loaded", len(entries), len(cfg.Servers))
			}
		})
		if _, ok := want[name]; ok {
			want[name] = true
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("examples/%s/infrarust.toml is missing", name)
		}
	}
}

// TestExamplesShowWhatTheyClaim keeps each example about its topic.
func TestExamplesShowWhatTheyClaim(t *testing.T) {
	load := func(name string) *Config {
		t.Helper()
		cfg, err := Load(filepath.Join("../../examples", name, "infrarust.toml"), true)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	server := func(cfg *Config, id string) *Server {
		t.Helper()
		for _, s := range cfg.Servers {
			if s.ID == id {
				return s
			}
		}
		t.Fatalf("server %q not found", id)
		return nil
	}

	lobby := server(load("balanced-lobby"), "lobby")
	weighted, fallback := false, false
	for _, a := range lobby.Addresses {
		weighted = weighted || a.Weight > 1
		fallback = fallback || a.Priority > 0
	}
	if lobby.Balance != "least_conn" || lobby.SlowStart <= 0 || !weighted || !fallback {
		t.Errorf("balanced-lobby must show least_conn, slow_start, weights and a fallback priority: %+v", lobby)
	}

	wild := load("wildcard-network")
	wildcards := 0
	for _, s := range wild.Servers {
		for _, d := range s.Domains {
			if d[0] == '*' {
				wildcards++
			}
		}
	}
	if wildcards < 2 {
		t.Errorf("wildcard-network has %d wildcard domains, want at least 2", wildcards)
	}
	if dr := server(wild, "survival").DomainRewrite; dr.Mode != "explicit" || dr.Value != "survival.internal" {
		t.Errorf("wildcard-network survival domain_rewrite = %+v", dr)
	}

	hp := load("haproxy-proxy-protocol")
	if !hp.ReceiveProxyProtocol || len(hp.TrustedProxies) == 0 || !hp.RateLimit.Enabled {
		t.Errorf("haproxy-proxy-protocol must receive PROXY protocol from trusted proxies with the limiter on: %+v", hp)
	}
	if !server(hp, "survival").SendProxyProtocol {
		t.Error("haproxy-proxy-protocol survival should send PROXY protocol to its backend")
	}
	if _, err := os.Stat("../../examples/haproxy-proxy-protocol/haproxy.cfg"); err != nil {
		t.Error(err)
	}
}
