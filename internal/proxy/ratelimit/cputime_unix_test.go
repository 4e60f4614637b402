//go:build unix

package ratelimit

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used, so a
// benchmark can report CPU per operation, which machine load does not inflate
// the way it inflates wall time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
