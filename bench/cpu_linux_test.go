package bench

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// procCPU must agree with the kernel's own account of this process
// (getrusage), to the 10 ms tick /proc/<pid>/stat counts in.
func TestProcCPUMatchesRusage(t *testing.T) {
	for x, end := 0, time.Now().Add(50*time.Millisecond); time.Now().Before(end); x++ {
		_ = x * x // spend CPU so neither figure is zero
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	before := cpu()
	got, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	after := cpu()
	const tick = 2 * time.Second / userHZ
	if got < before-tick || got > after+tick {
		t.Errorf("/proc says %v; getrusage says %v..%v", got, before, after)
	}
	if got <= 0 {
		t.Errorf("/proc says %v after a busy loop", got)
	}
}

// procSched's run time, in nanoseconds, agrees with the process's own account
// (getrusage) of a busy loop, within 5 ms.
func TestProcSchedSeesABusyLoop(t *testing.T) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	r0, _, err := procSched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	c0 := cpu()
	for x, end := 0, time.Now().Add(30*time.Millisecond); time.Now().Before(end); x++ {
		_ = x * x
	}
	c1 := cpu()
	r1, _, err := procSched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d, want := r1-r0, c1-c0; want < 5*time.Millisecond || d < want-5*time.Millisecond || d > want+5*time.Millisecond {
		t.Errorf("a 30 ms busy loop: schedstat grew %v, getrusage %v", d, c1-c0)
	}
}

// procSched counts a thread's every wake-up: one that sleeps 20 times was put
// on a CPU at least 20 times more.
func TestProcSchedCountsWakeUps(t *testing.T) {
	_, s0, err := procSched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // the sleeps are this thread's, not another's spin
		defer runtime.UnlockOSThread()
		for range 20 {
			time.Sleep(2 * time.Millisecond)
		}
	}()
	<-done
	_, s1, err := procSched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s1-s0 < 20 {
		t.Errorf("20 sleeps: %d more times on a CPU", s1-s0)
	}
}
