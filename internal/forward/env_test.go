package forward

import (
	"runtime"
	"strings"
	"testing"
)

// INFRARUST_FORWARDER decides what "auto" means (CI's second pass); an
// explicit kind is not overridden, and a bad value is an error.
func TestEnvChoosesAuto(t *testing.T) {
	t.Setenv(EnvKind, "goroutine")
	f, err := New(Auto)
	if err != nil || TakesFDs(f) {
		t.Fatalf("auto under %s=goroutine: %T %v", EnvKind, f, err)
	}
	f.Close()
	if runtime.GOOS == "linux" {
		t.Setenv(EnvKind, "")
		f, err := New(Auto)
		if err != nil || !TakesFDs(f) {
			t.Fatalf("auto without the variable on Linux: %T %v", f, err)
		}
		f.Close()
		t.Setenv(EnvKind, "goroutine")
		if f, err := New(Epoll); err != nil || !TakesFDs(f) {
			t.Fatalf("an explicit epoll was overridden: %T %v", f, err)
		} else {
			f.Close()
		}
	}
	t.Setenv(EnvKind, "threads")
	if _, err := New(Auto); err == nil || !strings.Contains(err.Error(), EnvKind) {
		t.Fatalf("a bad value: %v", err)
	}
}
