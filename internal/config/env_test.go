package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// clearEnv unsets every variable the loader reads, so the machine's environment
// cannot leak into a case.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, o := range EnvOverrides {
		t.Setenv(o.Name, "")
		t.Setenv(o.Name+"_FILE", "")
	}
}

const envTestKey = "0123456789abcdef0123456789abcdef"

func TestEnvironmentOverridesTheFile(t *testing.T) {
	file := "bind = \"0.0.0.0:25565\"\nservers_dir = \"./servers\"\n[web]\nbind = \"127.0.0.1:8080\"\napi_key = \"ffffffffffffffffffff\"\ndata_dir = \"./data\"\n"
	cases := []struct {
		name, env, value string
		got              func(*Config) string
	}{
		{"bind", "INFRARUST_BIND", "[::]:25570", func(c *Config) string { return c.Bind }},
		{"servers_dir", "INFRARUST_SERVERS_DIR", "/etc/infrarust/servers", func(c *Config) string { return c.ServersDir }},
		{"web.bind", "INFRARUST_ADMIN_BIND", "0.0.0.0:9090", func(c *Config) string { return c.Web.Bind }},
		{"web.api_key", "INFRARUST_API_KEY", envTestKey, func(c *Config) string { return c.Web.APIKey }},
		{"web.data_dir", "INFRARUST_DATA_DIR", "/data", func(c *Config) string { return c.Web.DataDir }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(c.env, c.value)
			cfg, err := Parse([]byte(file), "f.toml")
			if err != nil {
				t.Fatal(err)
			}
			if got := c.got(cfg); got != c.value {
				t.Fatalf("%s = %q, want %q from %s", c.name, got, c.value, c.env)
			}

			clearEnv(t)
			secret := filepath.Join(t.TempDir(), "secret")
			if err := os.WriteFile(secret, []byte(c.value+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv(c.env+"_FILE", secret)
			cfg, err = Parse([]byte(file), "f.toml")
			if err != nil {
				t.Fatal(err)
			}
			if got := c.got(cfg); got != c.value {
				t.Fatalf("%s = %q, want %q from %s_FILE (trailing newline dropped)", c.name, got, c.value, c.env)
			}
		})
	}
}

func TestEnvironmentProblemsNameTheVariable(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(huge, []byte(strings.Repeat("k", maxEnvFileBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"both forms", map[string]string{"INFRARUST_API_KEY": envTestKey, "INFRARUST_API_KEY_FILE": empty}, "both INFRARUST_API_KEY and INFRARUST_API_KEY_FILE are set"},
		{"missing file", map[string]string{"INFRARUST_API_KEY_FILE": filepath.Join(dir, "nope")}, "environment: INFRARUST_API_KEY_FILE: open"},
		{"empty file", map[string]string{"INFRARUST_API_KEY_FILE": empty}, "is empty"},
		{"oversized file", map[string]string{"INFRARUST_API_KEY_FILE": huge}, "should hold one value"},
		{"bad bind", map[string]string{"INFRARUST_BIND": "0.0.0.0"}, "environment: INFRARUST_BIND: \"0.0.0.0\" is not host:port"},
		{"bad admin bind", map[string]string{"INFRARUST_ADMIN_BIND": "10.0.0.1:0"}, "environment: INFRARUST_ADMIN_BIND: \"10.0.0.1:0\" has port 0"},
		{"public admin bind needs a key", map[string]string{"INFRARUST_ADMIN_BIND": "0.0.0.0:8080"}, "is reachable from other machines and no API key is set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			_, err := Parse([]byte("[web]\nenabled = true\n"), "f.toml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if strings.Count(err.Error(), "\n") > 0 && c.name != "public admin bind needs a key" {
				t.Errorf("one bad variable gave several problems:\n%v", err)
			}
		})
	}
	// A public admin bind from the environment with the key from a secret file starts.
	clearEnv(t)
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte(envTestKey), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INFRARUST_ADMIN_BIND", "0.0.0.0:8080")
	t.Setenv("INFRARUST_API_KEY_FILE", key)
	if _, err := Parse([]byte(""), "f.toml"); err != nil {
		t.Fatalf("public bind with a key file: %v", err)
	}
}

// Relative paths from the environment are resolved like the file's own: next to
// infrarust.toml, so serve and the CLI find the same folders.
func TestEnvironmentPathsResolveNextToTheFile(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "more-servers"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "infrarust.toml")
	if err := os.WriteFile(path, []byte("[web]\ndata_dir = \"./data\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INFRARUST_SERVERS_DIR", "more-servers")
	t.Setenv("INFRARUST_DATA_DIR", "state")
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ServersPath != filepath.Join(dir, "more-servers") || cfg.Web.DataDir != filepath.Join(dir, "state") {
		t.Fatalf("servers %q, data %q: want both under %s", cfg.ServersPath, cfg.Web.DataDir, dir)
	}
}

// Discovery can be switched from the environment (a container with no config
// file), over the file either way, and a bad switch names its variable.
func TestEnvironmentSwitchesDiscovery(t *testing.T) {
	clearEnv(t)
	t.Setenv("INFRARUST_DOCKER", "true")
	t.Setenv("INFRARUST_DOCKER_ENDPOINT", "tcp://socket-proxy:2375")
	t.Setenv("INFRARUST_KUBERNETES", "1")
	cfg, err := Parse([]byte(""), "f.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Docker.Enabled || cfg.Docker.Endpoint != "tcp://socket-proxy:2375" || !cfg.Kubernetes.Enabled {
		t.Fatalf("docker %+v, kubernetes enabled %v", cfg.Docker, cfg.Kubernetes.Enabled)
	}
	clearEnv(t)
	t.Setenv("INFRARUST_DOCKER", "off")
	cfg, err = Parse([]byte("[docker]\nnetwork = \"mc\"\n"), "f.toml") // a written table turns it on...
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Docker.Enabled {
		t.Fatal("INFRARUST_DOCKER=off did not win over the file") // ...the environment wins
	}
	clearEnv(t)
	t.Setenv("INFRARUST_KUBERNETES", "maybe")
	if _, err := Parse([]byte(""), "f.toml"); err == nil || !strings.Contains(err.Error(), `INFRARUST_KUBERNETES: "maybe" is not a switch`) {
		t.Fatalf("err = %v", err)
	}
}
