package config

import (
	"strings"
	"testing"
	"time"
)

func TestAuthLimboConfig(t *testing.T) {
	path := writeTree(t, "[auth_limbo]\ntimeout = \"2m\"\nremember = \"0\"\n[auth_limbo.argon2]\nmemory_kib = 47104\niterations = 1\n", map[string]string{
		"lobby.toml": "domains = [\"lobby\"]\naddresses = [\"l:1\"]\nproxy_mode = \"offline\"\nlimbo_handlers = [\"auth\", \"wake\"]\n",
	})
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.AuthLimbo
	if a.Timeout.D() != 2*time.Minute || a.Remember != 0 || a.MaxAttempts != 5 || a.MinPasswordLength != 8 ||
		a.Argon2.MemoryKiB != 47104 || a.Argon2.Iterations != 1 || a.Argon2.Parallelism != 1 {
		t.Fatalf("[auth_limbo] = %+v", a)
	}
	if !cfg.UsesAuthLimbo() {
		t.Fatal("UsesAuthLimbo is false with an \"auth\" server")
	}
}

func TestAuthLimboConfigErrors(t *testing.T) {
	for _, tc := range []struct{ main, server, want string }{
		{"", "proxy_mode = \"client_only\"\nlimbo_handlers = [\"auth\"]\n", `"auth" is the password login of offline servers`},
		{"", "limbo_handlers = [\"auht\"]\n", `did you mean "auth"`},
		{"[auth_limbo]\ntimeout = \"1s\"\n", "", "auth_limbo.timeout"},
		{"[auth_limbo]\nmax_attempts = 0\n", "", "auth_limbo.max_attempts"},
		{"[auth_limbo]\nmin_password_length = 10\nmax_password_length = 9\n", "", "auth_limbo.max_password_length"},
		{"[auth_limbo.argon2]\nmemory_kib = 4\n", "", "auth_limbo.argon2.memory_kib"},
		{"[auth_limbo.argon2]\nparallelism = 0\n", "", "auth_limbo.argon2.parallelism"},
		{"[auth_limbo.argon2]\nmemroy_kib = 4\n", "", "memroy_kib"},
	} {
		server := "domains = [\"x\"]\naddresses = [\"x:1\"]\n"
		if tc.server != "" {
			server += tc.server
		}
		path := writeTree(t, tc.main, map[string]string{"x.toml": server})
		_, err := Load(path, true)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q / %q: %v, want an error with %q", tc.main, tc.server, err, tc.want)
		}
	}
}

func TestVerifyConfigErrors(t *testing.T) {
	for _, tc := range []struct{ main, want string }{
		{"[verify]\nmode = \"alwyas\"\n", `did you mean "always"`},
		{"[verify]\ntimeout = \"1s\"\n", "verify.timeout"},
		{"[verify]\nattack_threshold = 0\n", "verify.attack_threshold"},
		{"[verify]\nmax_concurrent = 0\n", "verify.max_concurrent"},
	} {
		path := writeTree(t, tc.main, map[string]string{"x.toml": "domains = [\"x\"]\naddresses = [\"x:1\"]\nproxy_mode = \"offline\"\nlimbo_handlers = [\"verify\"]\n"})
		if _, err := Load(path, true); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.main, err, tc.want)
		}
	}
	path := writeTree(t, "[verify]\nmode = \"always\"\n", map[string]string{"x.toml": "domains = [\"x\"]\naddresses = [\"x:1\"]\nproxy_mode = \"client_only\"\nlimbo_handlers = [\"verify\"]\n"})
	cfg, err := Load(path, true)
	if err != nil || cfg.Verify.Mode != VerifyAlways || cfg.Verify.TTL.D() != 24*time.Hour {
		t.Fatalf("verify on a client_only server: %v %+v", err, cfg.Verify)
	}
}
