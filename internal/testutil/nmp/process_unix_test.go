//go:build unix

package nmp

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func alive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// No node process outlives the test that started it.
func TestNoNodeProcessOutlivesItsTest(t *testing.T) {
	h := Setup(t)
	var pids []int
	t.Run("start", func(t *testing.T) {
		srv := h.StartServer(t, ServerOptions{Version: "1.8.8"})
		c := h.StartClient(t)
		pids = []int{srv.PID, c.PID}
		for _, pid := range pids {
			if !alive(pid) {
				t.Fatalf("process %d is not running during the test", pid)
			}
		}
	})
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("node process %d is still running after its test ended", pid)
		}
	}
}

// Both scripts exit by themselves when their stdin closes, which is what happens when
// the test binary dies without running its cleanups.
func TestScriptsExitWhenStdinCloses(t *testing.T) {
	h := Setup(t)
	for _, args := range [][]string{
		{"server.js", "--exit-with-stdin", "--version", "1.8.8"},
		{"client.js", "--serve"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, h.Node, args...)
		cmd.Dir = h.Dir
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stdin.Close()
		err = cmd.Wait()
		if ctx.Err() != nil || err != nil {
			t.Errorf("%v after stdin closed: %v (context: %v)", args, err, ctx.Err())
		}
		cancel()
	}
}
