package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
)

// writeConfigTree writes infrarust.toml and servers/*.toml under a temp dir.
func writeConfigTree(t *testing.T, main string, servers map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "servers"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "infrarust.toml")
	if err := os.WriteFile(path, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range servers {
		if err := os.WriteFile(filepath.Join(dir, "servers", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func runConfigCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestConfigCheckRefusesWhatServeRefuses: for each file `serve` refuses at start,
// `config check` exits 1 with the same message, and serve's refusal comes before it
// listens on anything.
func TestConfigCheckRefusesWhatServeRefuses(t *testing.T) {
	server := map[string]string{"a.toml": "domains = [\"a.example\"]\naddresses = [\"127.0.0.1:25566\"]\n"}
	cases := []struct {
		name, main string
		servers    map[string]string
		env        string
		want       []string
	}{
		{"bare-number durations", "connect_timeout = 5\n", map[string]string{"a.toml": "domains = [\"a.example\"]\naddresses = [\"127.0.0.1:25566\"]\nslow_start = 30\n"}, "",
			[]string{"(2 problems)", "infrarust.toml:1: connect_timeout: duration 5 has no unit", "a.toml:3: slow_start: duration 30 has no unit"}},
		{"port out of range", "bind = \"0.0.0.0:99999\"\n", server, "", []string{"(1 problem)", "infrarust.toml:1: bind: \"0.0.0.0:99999\" has an invalid port"}},
		{"named port", "bind = \"127.0.0.1:mc\"\n", server, "", []string{"infrarust.toml:1: bind: \"127.0.0.1:mc\" has a port that is not a number"}},
		{"bad admin bind", "[web]\nbind = \"0.0.0.0\"\n", server, "", []string{"infrarust.toml:2: web.bind: \"0.0.0.0\" is not host:port"}},
		{"public admin without a key", "[web]\nbind = \"0.0.0.0:18080\"\n", server, "", []string{"infrarust.toml:2: web.bind: \"0.0.0.0:18080\" is reachable from other machines and no API key is set"}},
		{"15-character api_key", "[web]\napi_key = \"0123456789abcde\"\n", server, "", []string{"infrarust.toml:2: web.api_key: the key is 15 characters; use at least 16"}},
		{"15-character INFRARUST_API_KEY", "[web]\nbind = \"127.0.0.1:18080\"\n", server, "0123456789abcde", []string{"INFRARUST_API_KEY is 15 characters"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(config.APIKeyEnv, tc.env)
			path := writeConfigTree(t, tc.main, tc.servers)
			for _, cmd := range []string{"config check", "serve"} {
				args := append(strings.Fields(cmd), "--config", path)
				code, stdout, stderr := runConfigCmd(t, args...)
				if code != 1 {
					t.Fatalf("%s: exit %d, want 1\nstdout: %s\nstderr: %s", cmd, code, stdout, stderr)
				}
				for _, w := range tc.want {
					if cmd == "serve" && strings.HasPrefix(w, "(") {
						continue // the count is config check's
					}
					if !strings.Contains(stderr, w) {
						t.Errorf("%s: stderr lacks %q:\n%s", cmd, w, stderr)
					}
				}
			}
		})
	}
}

func TestConfigCheckPassesWithTheKeyInTheEnvironment(t *testing.T) {
	path := writeConfigTree(t, "[web]\nbind = \"0.0.0.0:18080\"\n", map[string]string{"a.toml": "domains = [\"a.example\"]\naddresses = [\"127.0.0.1:25566\"]\n"})
	t.Setenv(config.APIKeyEnv, "0123456789abcdef0123")
	code, stdout, stderr := runConfigCmd(t, "config", "check", "--config", path)
	if code != 0 || !strings.Contains(stdout, "ok: "+path+", 1 server(s)") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// The forwarding secret lives in data_dir unless a file is there from before
// beside infrarust.toml, or the environment gives it; `config check` says
// where it comes from and fails, as serve would, when it can be neither read
// nor created; checking creates nothing.
func TestConfigCheckFindsTheForwardingSecret(t *testing.T) {
	velocity := map[string]string{"a.toml": "domains = [\"a.example\"]\naddresses = [\"127.0.0.1:25566\"]\nproxy_mode = \"offline\"\nforwarding_mode = \"velocity\"\n"}
	t.Setenv(config.ForwardingSecretEnv, "")
	t.Setenv(config.ForwardingSecretEnv+"_FILE", "")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bind := fmt.Sprintf("bind = %q\n", ln.Addr().String())
	ln.Close()
	path := writeConfigTree(t, bind+"[web]\nenabled = false\ndata_dir = \"state\"\n", velocity)
	want := filepath.Join(filepath.Dir(path), "state", "forwarding.secret")
	code, stdout, stderr := runConfigCmd(t, "config", "check", "--config", path)
	if code != 0 || !strings.Contains(stdout, "forwarding secret: "+want+" (created at the first start") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if _, err := os.Stat(want); err == nil {
		t.Fatal("config check created the secret")
	}

	// A secret file from before, beside infrarust.toml, stays the secret.
	legacy := filepath.Join(filepath.Dir(path), "forwarding.secret")
	if err := os.WriteFile(legacy, []byte("old-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := runConfigCmd(t, "config", "check", "--config", path); code != 0 || !strings.Contains(stdout, "forwarding secret: "+legacy+"\n") {
		t.Fatalf("with a secret beside the config: exit %d\n%s", code, stdout)
	}

	// A secret file under a regular file can be neither read nor created.
	blocked := writeConfigTree(t, bind+"[web]\nenabled = false\n[forwarding]\nsecret_file = \"infrarust.toml/forwarding.secret\"\n", velocity)
	for _, cmd := range []string{"config check", "serve"} {
		code, stdout, stderr := runConfigCmd(t, append(strings.Fields(cmd), "--config", blocked)...)
		if code != 1 || !strings.Contains(stderr, "INFRARUST_FORWARDING_SECRET") {
			t.Fatalf("%s with an uncreatable secret: exit %d, want 1 naming the way out\nstdout: %s\nstderr: %s", cmd, code, stdout, stderr)
		}
	}

	// The environment's secret needs no file at all.
	secretFile := filepath.Join(t.TempDir(), "mounted")
	if err := os.WriteFile(secretFile, []byte("from-a-kubernetes-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(config.ForwardingSecretEnv+"_FILE", secretFile)
	if code, stdout, stderr := runConfigCmd(t, "config", "check", "--config", blocked); code != 0 || !strings.Contains(stdout, "forwarding secret: from INFRARUST_FORWARDING_SECRET") {
		t.Fatalf("with %s_FILE: exit %d\nstdout: %s\nstderr: %s", config.ForwardingSecretEnv, code, stdout, stderr)
	}
}

// serve --demo keeps a demo off the network: the configured port on loopback.
func TestDemoBindsLoopback(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:25565": "127.0.0.1:25565",
		"[::]:25570":    "127.0.0.1:25570",
		":25566":        "127.0.0.1:25566",
		"garbage":       "127.0.0.1:25565",
	} {
		if got := demoBind(in); got != want {
			t.Errorf("demoBind(%q) = %q, want %q", in, got, want)
		}
	}
}
