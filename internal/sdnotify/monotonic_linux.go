package sdnotify

import (
	"time"

	"golang.org/x/sys/unix"
)

// monotonicNow reads CLOCK_MONOTONIC, the clock systemd compares MONOTONIC_USEC with.
func monotonicNow() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
