package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// parsedRoot declares the global flags as newRootCmd does, over a globalFlags with
// env as its environment, parses args and returns the flags and the command a RunE
// would see.
func parsedRoot(t *testing.T, env map[string]string, system string, args ...string) (*globalFlags, *cobra.Command) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globalFlags{stdout: &out, stderr: &errb, systemConfig: system, getenv: func(k string) string { return env[k] }}
	root := &cobra.Command{Use: "infrarust", SilenceUsage: true, SilenceErrors: true}
	pf := root.PersistentFlags()
	pf.StringVarP(&g.configPath, "config", "c", "", "")
	pf.StringVar(&g.logLevel, "log-level", "info", "")
	pf.StringVar(&g.logFormat, "log-format", "text", "")
	var leaf *cobra.Command
	root.AddCommand(&cobra.Command{Use: "probe", RunE: func(cmd *cobra.Command, _ []string) error { leaf = cmd; return nil }})
	root.SetArgs(append([]string{"probe"}, args...))
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g, leaf
}

func TestConfigPathPrecedence(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	system := filepath.Join(dir, "etc", "infrarust.toml")
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("bind = \"0.0.0.0:25565\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name         string
		args         []string
		env          map[string]string
		local, sys   bool
		wantPath     string
		wantExplicit bool
	}{
		{"nothing: the embedded default", nil, nil, false, false, "./infrarust.toml", false},
		{"the system file when ./infrarust.toml is absent", nil, nil, false, true, system, false},
		{"./infrarust.toml before the system file", nil, nil, true, true, "./infrarust.toml", false},
		{"INFRARUST_CONFIG before both", nil, map[string]string{envConfig: "/srv/proxy.toml"}, true, true, "/srv/proxy.toml", true},
		{"--config before the environment", []string{"--config", "/opt/x.toml"}, map[string]string{envConfig: "/srv/proxy.toml"}, true, true, "/opt/x.toml", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove("infrarust.toml")
			os.Remove(system)
			if c.local {
				write("infrarust.toml")
			}
			if c.sys {
				write(system)
			}
			g, leaf := parsedRoot(t, c.env, system, c.args...)
			explicit := g.resolveConfig(leaf)
			if g.configPath != c.wantPath || explicit != c.wantExplicit {
				t.Fatalf("config = %q (explicit %v), want %q (explicit %v)", g.configPath, explicit, c.wantPath, c.wantExplicit)
			}
		})
	}
}

func TestLogSettingsFromTheEnvironment(t *testing.T) {
	env := map[string]string{envLogLevel: "debug", envLogFormat: "json"}

	g, leaf := parsedRoot(t, env, "")
	log, err := g.logger(leaf)
	if err != nil {
		t.Fatal(err)
	}
	if !log.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("INFRARUST_LOG_LEVEL=debug did not enable debug")
	}
	log.Info("hello")
	if out := g.stderr.(*bytes.Buffer).String(); !strings.HasPrefix(out, "{") {
		t.Errorf("INFRARUST_LOG_FORMAT=json wrote %q", out)
	}

	g, leaf = parsedRoot(t, env, "", "--log-level", "warn", "--log-format", "text")
	log, err = g.logger(leaf)
	if err != nil {
		t.Fatal(err)
	}
	if log.Enabled(context.Background(), slog.LevelInfo) {
		t.Error("--log-level warn lost to the environment")
	}
	log.Warn("hello")
	if out := g.stderr.(*bytes.Buffer).String(); strings.HasPrefix(out, "{") {
		t.Errorf("--log-format text lost to the environment: %q", out)
	}

	g, leaf = parsedRoot(t, map[string]string{envLogLevel: "chatty"}, "")
	if _, err := g.logger(leaf); err == nil || !strings.Contains(err.Error(), envLogLevel) {
		t.Errorf("a bad INFRARUST_LOG_LEVEL must be named: %v", err)
	}
}

// The real binary's entry point follows INFRARUST_CONFIG.
func TestConfigCheckFollowsInfrarustConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "servers"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "proxy.toml")
	if err := os.WriteFile(path, []byte("bind = \"0.0.0.0:25599\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envConfig, path)
	out, errOut, code := runMain(t, "config", "check")
	if code != 0 || !strings.Contains(out, "ok: "+path) {
		t.Fatalf("exit %d: %q %q", code, out, errOut)
	}
	t.Setenv(envConfig, filepath.Join(dir, "missing.toml"))
	_, errOut, code = runMain(t, "config", "check")
	if code == 0 || !strings.Contains(errOut, "missing.toml does not exist") {
		t.Fatalf("a missing INFRARUST_CONFIG file must be an error: exit %d %q", code, errOut)
	}
}
