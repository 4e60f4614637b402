package admin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A serve's hint is read back (with an absolute key file) while its process
// lives, removed by the remover, and a hint of a process that is gone is none.
func TestRuntimeHint(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if _, err := ReadRuntimeHint(); err == nil {
		t.Fatal("a hint where none was written")
	}
	remove, err := WriteRuntimeHint(RuntimeHint{URL: "http://127.0.0.1:8080", KeyFile: "data/admin.key"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := ReadRuntimeHint()
	if err != nil || h.URL != "http://127.0.0.1:8080" || !filepath.IsAbs(h.KeyFile) || h.PID != os.Getpid() {
		t.Fatalf("read back: %+v %v", h, err)
	}
	st, err := os.Stat(runtimeHintPath())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("hint file mode: %v %v", st.Mode(), err)
	}
	remove()
	if _, err := os.Stat(runtimeHintPath()); !os.IsNotExist(err) {
		t.Fatalf("not removed: %v", err)
	}
	// A hint that sends the CLI off this machine, or that others may write, is
	// not followed.
	pid := fmt.Sprint(os.Getpid())
	if err := os.WriteFile(runtimeHintPath(), []byte(`{"url":"http://203.0.113.7:8080","pid":`+pid+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRuntimeHint(); err == nil {
		t.Fatal("a hint naming another machine was followed")
	}
	if err := os.WriteFile(runtimeHintPath(), []byte(`{"url":"http://127.0.0.1:8080","pid":`+pid+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(runtimeHintPath(), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRuntimeHint(); err == nil {
		t.Fatal("a hint others may write was followed")
	}
	os.Remove(runtimeHintPath())
	// A hint left by a process that is gone (a crash) is not followed.
	if err := os.WriteFile(runtimeHintPath(), []byte(`{"url":"http://127.0.0.1:1","pid":2147483000}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRuntimeHint(); err == nil {
		t.Fatal("a dead process's hint was followed")
	}
}
