//go:build !unix

package bench

import "math"

// RaiseFileLimit has nothing to raise where there is no RLIMIT_NOFILE (Windows
// limits sockets by memory): it reports no limit.
func RaiseFileLimit() (uint64, error) { return math.MaxUint64, nil }
