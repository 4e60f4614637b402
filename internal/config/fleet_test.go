package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFleetConfig(t *testing.T) {
	cases := []struct {
		name, toml, err string
	}{
		{"absent", "", ""},
		{"url", "[fleet]\nredis = \"redis://:pw@10.0.0.5:6379/0\"\n", ""},
		{"tls", "[fleet]\nredis = \"rediss://h:6380\"\nid = \"eu-1\"\n", ""},
		{"env", "[fleet]\nredis = \"env:INFRARUST_REDIS_URL\"\n", ""},
		{"empty env", "[fleet]\nredis = \"env:\"\n", "fleet.redis"},
		{"empty file", "[fleet]\nredis = \"file:\"\n", "fleet.redis"},
		{"scheme", "[fleet]\nredis = \"http://h:6379\"\n", "redis:// or rediss://"},
		{"no host", "[fleet]\nredis = \"redis://\"\n", "no host"},
		{"id with space", "[fleet]\nredis = \"redis://h\"\nid = \"a b\"\n", "fleet.id"},
		{"prefix", "[fleet]\nredis = \"redis://h\"\nkey_prefix = \"\"\n", "fleet.key_prefix"},
		{"timeout short", "[fleet]\nredis = \"redis://h\"\nheartbeat_timeout = \"1s\"\n", "two heartbeats"},
		{"lock ttl", "[fleet]\nredis = \"redis://h\"\nwake_lock_ttl = \"100ms\"\n", "fleet.wake_lock_ttl"},
		{"zero timeout", "[fleet]\nredis = \"redis://h\"\ntimeout = \"0s\"\n", "fleet.timeout"},
		{"unknown key", "[fleet]\nredis = \"redis://h\"\nreddis = \"x\"\n", "reddis"},
		// Without redis the table is inert: nothing else is checked.
		{"off", "[fleet]\nkey_prefix = \"\"\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.toml), "f.toml")
			if c.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want one mentioning %q", err, c.err)
			}
			if strings.Contains(err.Error(), ":pw@") {
				t.Fatalf("the error shows the password: %v", err)
			}
			_ = cfg
		})
	}
	if _, err := Parse([]byte("[fleet]\nredis = \"http://:secret@h\"\n"), "f.toml"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a bad URL's error must not show its password: %v", err)
	}
}

// A relative "file:" path is relative to infrarust.toml, like the other paths.
func TestFleetRedisFileIsRelativeToTheConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "infrarust.toml")
	if err := os.WriteFile(path, []byte("[fleet]\nredis = \"file:secrets/redis-url\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "servers"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "file:" + filepath.Join(dir, "secrets/redis-url"); cfg.Fleet.Redis != want {
		t.Fatalf("redis = %q, want %q", cfg.Fleet.Redis, want)
	}
	if !cfg.Fleet.Enabled() {
		t.Fatal("not enabled")
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"redis://:s3cret@h:6379/0": "redis://:xxxxx@h:6379/0",
		"rediss://user:pw@h:6380":  "rediss://user:xxxxx@h:6380",
		"redis://h:6379":           "redis://h:6379",
		"redis://user@h":           "redis://user@h",
		"redis://:pa%zz@h":         "<unparsable URL>",
		"env:INFRARUST_REDIS_URL":  "env:INFRARUST_REDIS_URL",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
