//go:build unix

package proxy

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system, all threads) the test process has
// used, for benchmarks that report CPU per unit of work beside their rates.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
