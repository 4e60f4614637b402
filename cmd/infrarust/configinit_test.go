package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
)

func runConfigInit(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	g := &globalFlags{stdout: &out, stderr: &out}
	cmd := newConfigInitCmd(g)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestConfigInitWritesFilesThatLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "etc")
	out, err := runConfigInit(t, dir)
	if err != nil {
		t.Fatalf("config init: %v\n%s", err, out)
	}
	main := filepath.Join(dir, "infrarust.toml")
	server := filepath.Join(dir, "servers", "example.toml")
	if got := readFile(t, main); got != config.DefaultTOML {
		t.Errorf("infrarust.toml differs from config.DefaultTOML")
	}
	if got := readFile(t, server); got != config.ExampleServerTOML {
		t.Errorf("servers/example.toml differs from config.ExampleServerTOML")
	}
	cfg, err := config.Load(main, true)
	if err != nil {
		t.Fatalf("the starter files do not pass config.Load: %v", err)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].ID != "example" || len(cfg.Servers[0].Addresses) == 0 {
		t.Fatalf("want one server \"example\" with addresses, got %+v", cfg.Servers)
	}
	for _, want := range []string{"wrote " + main, "wrote " + server, "infrarust config check --config " + main, "infrarust serve --config " + main} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestConfigInitRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	if out, err := runConfigInit(t, dir); err != nil {
		t.Fatalf("first init: %v\n%s", err, out)
	}
	main := filepath.Join(dir, "infrarust.toml")
	server := filepath.Join(dir, "servers", "example.toml")
	if err := os.WriteFile(main, []byte("bind = \"0.0.0.0:25577\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runConfigInit(t, dir)
	want := main + " and " + server + " already exist; nothing was written"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second init without --force: want %q ... --force, got %v", want, err)
	}
	if got := readFile(t, main); got != "bind = \"0.0.0.0:25577\"\n" {
		t.Fatalf("the operator's file was overwritten: %q", got)
	}

	if out, err := runConfigInit(t, "--force", dir); err != nil {
		t.Fatalf("init --force: %v\n%s", err, out)
	}
	if readFile(t, main) != config.DefaultTOML || readFile(t, server) != config.ExampleServerTOML {
		t.Fatal("--force did not rewrite both files")
	}
}

func TestConfigInitWritesNothingWhenOneFileExists(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "servers", "example.toml")
	if err := os.MkdirAll(filepath.Dir(server), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(server, []byte("domains = [\"mine\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runConfigInit(t, dir)
	if err == nil || !strings.Contains(err.Error(), server+" already exists;") {
		t.Fatalf("want \"%s already exists;\", got %v", server, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "infrarust.toml")); !os.IsNotExist(err) {
		t.Fatalf("infrarust.toml was written although init refused: %v", err)
	}
}

func TestConfigInitDefaultsToCurrentDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	out, err := runConfigInit(t)
	if err != nil {
		t.Fatalf("config init: %v\n%s", err, out)
	}
	if _, err := config.Load(filepath.Join(dir, "infrarust.toml"), true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "  infrarust config check\n") || !strings.Contains(out, "  infrarust serve\n") {
		t.Errorf("in the current directory the next commands need no --config:\n%s", out)
	}
}

func TestConfigInitRejectsTwoArgs(t *testing.T) {
	if _, err := runConfigInit(t, "a", "b"); err == nil {
		t.Fatal("two directories must be refused")
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/etc/infrarust/infrarust.toml": "/etc/infrarust/infrarust.toml",
		"my dir/infrarust.toml":         "'my dir/infrarust.toml'",
		"it's/infrarust.toml":           `'it'\''s/infrarust.toml'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
