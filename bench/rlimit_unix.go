//go:build unix

package bench

import "syscall"

// RaiseFileLimit lifts RLIMIT_NOFILE to the hard limit and returns the new soft
// limit: the idle-session workload holds thousands of sockets.
func RaiseFileLimit() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return rl.Cur, err
		}
	}
	return rl.Cur, nil
}
