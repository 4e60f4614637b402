//go:build unix

package proxy

import (
	"syscall"
	"testing"
)

// raiseNoFile lifts the soft open-files limit to the hard one and returns how many
// descriptors the test may use.
func raiseNoFile(t *testing.T) uint64 {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		old := lim.Cur
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Logf("raising RLIMIT_NOFILE: %v", err)
			lim.Cur = old
		}
	}
	return lim.Cur
}
