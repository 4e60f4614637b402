package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// child is a proxy under test running as a process of its own (the infrarust
// binary, HAProxy, Gate): what the run reads of it from /proc, and how it is
// stopped. Its targets embed it.
type child struct {
	cmd  *exec.Cmd
	dir  string // its working directory, removed on Close
	done chan struct{}
}

// childDir makes a child's working directory (prefix names it) with n free
// local addresses for it to listen on, and lets write put its configuration
// there; on any failure the directory is removed.
func childDir(prefix string, n int, write func(dir string, addrs []string) error) (string, []string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	addrs := make([]string, n)
	for i := range addrs {
		if addrs[i], err = freeAddr(); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
	}
	if err := write(dir, addrs); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, addrs, nil
}

// startChild runs path with args in dir, its output to out, and waits until
// every address in listen takes connections. On failure the process is
// stopped; dir is left for the caller (Gate's log is read there).
func startChild(dir string, out io.Writer, listen []string, path string, args ...string) (*child, error) {
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	c := &child{cmd: cmd, dir: dir, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.done) }()
	for _, a := range listen {
		if err := waitListening(a, c.done); err != nil {
			c.stop()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return c, nil
}

func (c *child) Pid() int      { return c.cmd.Process.Pid }
func (c *child) Active() int64 { return -1 }
func (c *child) RSS() (int64, bool) {
	v, err := rssOf(strconv.Itoa(c.Pid()))
	return v, err == nil
}
func (c *child) FDs() (all, pipes int) { return procFDs(c.Pid()) }
func (c *child) CPU() (time.Duration, bool) {
	d, err := procCPU(c.Pid())
	return d, err == nil
}

// Close stops the process (SIGINT, SIGKILL after 10 s) and removes its directory.
func (c *child) Close() {
	c.stop()
	os.RemoveAll(c.dir)
}

func (c *child) stop() {
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}
