package forwarding

import (
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

func TestLoadOrCreateSecretCreates(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask, whatever the test runner has
	t.Cleanup(func() { syscall.Umask(old) })

	dir := filepath.Join(t.TempDir(), "new", "dir")
	path := filepath.Join(dir, "forwarding.secret")
	secret, created, err := LoadOrCreateSecret(path)
	if err != nil || !created {
		t.Fatalf("LoadOrCreateSecret = %q, %v, %v", secret, created, err)
	}
	if !regexp.MustCompile(`^[A-Z2-7]{26}$`).Match(secret) {
		t.Fatalf("generated secret %q is not 26 base32 characters", secret)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Fatalf("secret file mode %o, want 600", perm)
	}
	dst, _ := os.Stat(dir)
	if perm := dst.Mode().Perm(); perm != 0o700 {
		t.Fatalf("created directory mode %o, want 700", perm)
	}
	onDisk, _ := os.ReadFile(path)
	if string(onDisk) != string(secret) {
		t.Fatalf("file holds %q, returned %q", onDisk, secret)
	}

	again, created, err := LoadOrCreateSecret(path)
	if err != nil || created || string(again) != string(secret) {
		t.Fatalf("second load = %q, %v, %v; want the same secret, not created", again, created, err)
	}
	other, _, _ := LoadOrCreateSecret(filepath.Join(dir, "other.secret"))
	if string(other) == string(secret) {
		t.Fatal("two generated secrets are equal")
	}
}
