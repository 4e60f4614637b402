package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/forwarding"
)

// A reload reads the forwarding secret again: a rotated file applies to the
// next logins; a file that went away rejects the reload (the secret in force
// stays) instead of making a new secret the backends do not know.
func TestReloadRotatesTheForwardingSecret(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "forwarding.secret")
	if err := os.WriteFile(file, []byte("first-secret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := newServer("lobby", []string{"lobby.test"}, "127.0.0.1:1")
	srv.ProxyMode = config.ModeOffline
	mode := forwarding.ModeVelocity
	srv.ForwardingMode = &mode
	tp := startProxyOpts(t, func(c *config.Config) { c.Forwarding.SecretFile = file }, Options{}, srv)
	secret := func() string { s, _ := tp.icpt.forwardingSecret(); return string(s) }
	if got := secret(); got != "first-secret-0123456789" {
		t.Fatalf("at start: %q", got)
	}
	if err := os.WriteFile(file, []byte("second-secret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tp.Apply(tp.Config()); err != nil {
		t.Fatal(err)
	}
	if got := secret(); got != "second-secret-0123456789" {
		t.Fatalf("after the rotation: %q", got)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := tp.Apply(tp.Config()); err == nil || !strings.Contains(err.Error(), "forwarding needs its secret") {
		t.Fatalf("a reload without the secret file: %v", err)
	}
	if got := secret(); got != "second-secret-0123456789" {
		t.Fatalf("the secret in force changed with the file gone: %q", got)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a new secret file was made on reload")
	}
}
