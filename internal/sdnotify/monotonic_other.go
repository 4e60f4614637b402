//go:build !linux

package sdnotify

import "time"

// monotonicNow has nothing to read off Linux; systemd does not run there either.
func monotonicNow() (time.Duration, bool) { return 0, false }
