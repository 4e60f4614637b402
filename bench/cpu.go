package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ, which
// Linux fixes at 100 on every architecture Go supports.
const userHZ = 100

// procCPU is the CPU time (user + system, every thread, live and exited) a
// process has used so far, read from /proc/<pid>/stat: the proxy's own cost,
// free of the load generator's.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces and parentheses; fields resume after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')' in %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(ut+st) * time.Second / userHZ, nil
}

// loadAverage is /proc/loadavg's first three fields ("" where there is none):
// the machine's load when a figure was taken, printed with every run.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// procSched is what the scheduler counted for a process's live threads (the
// sum of /proc/<pid>/task/*/schedstat): the CPU time they ran, to the
// nanosecond (/proc/<pid>/stat counts in 10 ms ticks, too coarse for a batch
// of a few dozen logins), and how many times a thread was put on a CPU: each
// wake-up of a sleeping thread is one, so the count shows the hand-offs that
// cost the most on a quiet machine. A thread that exits takes its counts with
// it; the Go runtime keeps its threads.
func procSched(pid int) (run time.Duration, slices int64, err error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // exited meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			return 0, 0, fmt.Errorf("%s/%s/schedstat: %q", dir, t.Name(), b)
		}
		ns, err1 := strconv.ParseInt(f[0], 10, 64)
		n, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("%s/%s/schedstat: %q", dir, t.Name(), b)
		}
		run += time.Duration(ns)
		slices += n
	}
	return run, slices, nil
}
