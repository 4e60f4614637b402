package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHealthCommand(t *testing.T) {
	s := startServe(t, t.TempDir())

	out, errOut, code := runMain(t, "health", "--config", s.configPath)
	if code != 0 || strings.TrimSpace(out) != "ready" {
		t.Fatalf("health of a serving proxy: exit %d, %q %q", code, out, errOut)
	}
	out, _, code = runMain(t, "health", "--admin-url", s.adminURL)
	if code != 0 || strings.TrimSpace(out) != "ready" {
		t.Fatalf("health --admin-url: exit %d, %q", code, out)
	}

	s.stop(t)
	_, errOut, code = runMain(t, "health", "--config", s.configPath, "--timeout", "1s")
	if code != 1 || !strings.Contains(errOut, "not ready") {
		t.Fatalf("health of a stopped proxy: exit %d, %q", code, errOut)
	}
}

// With [web] disabled the check is whether the proxy's bind accepts connections.
func TestHealthWithoutAdminAPI(t *testing.T) {
	t.Setenv(envAdminURL, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "servers"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "infrarust.toml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf("bind = %q\n[web]\nenabled = false\n", ln.Addr().String())), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runMain(t, "health", "--config", path)
	if code != 0 || !strings.Contains(out, "accepting connections on "+ln.Addr().String()) {
		t.Fatalf("listening proxy: exit %d, %q %q", code, out, errOut)
	}
	ln.Close()
	_, errOut, code = runMain(t, "health", "--config", path, "--timeout", "1s")
	if code != 1 || !strings.Contains(errOut, "does not accept connections") {
		t.Fatalf("closed proxy: exit %d, %q", code, errOut)
	}
}

// A server file broken after start does not make the proxy unhealthy: serve keeps
// its previous version.
func TestHealthIgnoresServerFiles(t *testing.T) {
	s := startServe(t, t.TempDir())
	dir := filepath.Dir(s.configPath)
	if err := os.WriteFile(filepath.Join(dir, "servers", "broken.toml"), []byte("domains = [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runMain(t, "config", "check", "--config", s.configPath); code == 0 {
		t.Fatalf("config check must see the broken file: %s", errOut)
	}
	out, errOut, code := runMain(t, "health", "--config", s.configPath)
	if code != 0 || strings.TrimSpace(out) != "ready" {
		t.Fatalf("health with a broken server file: exit %d %q %q", code, out, errOut)
	}
}
