package forwarding

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadOrCreateSecretReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "forwarding.secret")
	if err := os.WriteFile(path, []byte("  my-secret \r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret, created, err := LoadOrCreateSecret(path)
	if err != nil || created || string(secret) != "my-secret" {
		t.Fatalf("LoadOrCreateSecret = %q, %v, %v", secret, created, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Fatalf("an existing file's mode was changed to %o", st.Mode().Perm())
	}
}

func TestLoadOrCreateSecretRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, content := range []string{"", " \n\t\n"} {
		path := write("empty.secret", content)
		_, _, err := LoadOrCreateSecret(path)
		if !errors.Is(err, ErrEmptySecret) {
			t.Fatalf("%q: err = %v, want ErrEmptySecret", content, err)
		}
		for _, hint := range []string{path, "paper-global.yml", "delete the file"} {
			if !strings.Contains(err.Error(), hint) {
				t.Errorf("error %q does not say %q", err, hint)
			}
		}
		// The file is left alone: an operator's mistake is not papered over.
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Fatalf("empty secret file was rewritten to %q", b)
		}
	}
	if _, _, err := LoadOrCreateSecret(""); err == nil || !strings.Contains(err.Error(), "secret_file") {
		t.Errorf("empty path: err = %v", err)
	}
	if _, _, err := LoadOrCreateSecret(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: err = %v", err)
	}
	big := write("big.secret", strings.Repeat("x", maxSecretFile+1))
	if _, _, err := LoadOrCreateSecret(big); err == nil || !strings.Contains(err.Error(), "KiB") {
		t.Errorf("oversized file: err = %v", err)
	}
	// A parent that is a file cannot get a directory made under it.
	notDir := write("plain", "x")
	if _, _, err := LoadOrCreateSecret(filepath.Join(notDir, "forwarding.secret")); err == nil {
		t.Error("secret under a regular file was created")
	}
}
