package bench

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// target is a proxy under test: in this process, or the real binary as a child.
type target interface {
	Addr() string
	// RSS is the proxy process's resident set; ok is false in-process (it is ours).
	RSS() (int64, bool)
	// FDs is the proxy process's open file descriptors (-1 in-process: they are mixed with ours).
	FDs() (all, pipes int)
	// Active is the proxy's count of live connections (-1 when unknown).
	Active() int64
	Close()
}

func (ip *inProcess) Addr() string       { return ip.addr }
func (ip *inProcess) RSS() (int64, bool) { return 0, false }
func (ip *inProcess) Active() int64      { return ip.p.Counters().Active }
func (ip *inProcess) FDs() (int, int)    { return -1, -1 }
func (ip *inProcess) Close()             { ip.close() }

// binaryProxy is `infrarust serve` started with a generated configuration.
type binaryProxy struct {
	cmd  *exec.Cmd
	addr string
	dir  string
	done chan struct{}
}

func startBinary(path, backend string, cacheTTL time.Duration) (*binaryProxy, error) {
	dir, err := os.MkdirTemp("", "mcbench-binary-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	conf := fmt.Sprintf(`bind = %q
servers_dir = "servers"
connect_timeout = "5s"

[status_cache]
ttl = %q

[web]
enabled = false

[rate_limit]
enabled = false

[active_health]
enabled = false
`, addr, cacheTTL.String())
	srv := fmt.Sprintf("domains = [%q]\naddresses = [%q]\n", benchHost, backend)
	if err := os.MkdirAll(filepath.Join(dir, "servers"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "infrarust.toml"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "servers", "bench.toml"), []byte(srv), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(path, "serve", "--config", filepath.Join(dir, "infrarust.toml"), "--log-level", "warn")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	b := &binaryProxy{cmd: cmd, addr: addr, dir: dir, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(b.done) }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return b, nil
		}
		select {
		case <-b.done:
			return nil, fmt.Errorf("%s exited before listening on %s", path, addr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Close()
			return nil, fmt.Errorf("%s is not listening on %s after 10s", path, addr)
		}
	}
}

func (b *binaryProxy) Addr() string { return b.addr }
func (b *binaryProxy) RSS() (int64, bool) {
	v, err := rssOf(strconv.Itoa(b.cmd.Process.Pid))
	return v, err == nil
}
func (b *binaryProxy) Active() int64 { return -1 }
func (b *binaryProxy) FDs() (all, pipes int) {
	dir := "/proc/" + strconv.Itoa(b.cmd.Process.Pid) + "/fd/"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1, -1
	}
	for _, e := range ents {
		if l, err := os.Readlink(dir + e.Name()); err == nil && strings.HasPrefix(l, "pipe:") {
			pipes++
		}
	}
	return len(ents), pipes
}
func (b *binaryProxy) Close() {
	_ = b.cmd.Process.Signal(os.Interrupt)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
	os.RemoveAll(b.dir)
}

// rssOf reads VmRSS of a process ("self" or a pid) in bytes.
func rssOf(pid string) (int64, error) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%s/status", pid)
}
