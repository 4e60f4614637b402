//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat (USER_HZ,
// 100 on every Linux the tool runs on).
const clockTicks = 100

// proxyTarget is `infrarust serve` holding the players: its one server,
// "limbo", is in maintenance with the maintenance limbo handler, so every
// login is held in the limbo by a whole intercepted session.
type proxyTarget struct {
	cmd     *exec.Cmd
	dir     string
	addr    string
	metrics string
	done    chan struct{}
}

func startProxy(binary string) (*proxyTarget, error) {
	dir, err := os.MkdirTemp("", "limbomem-proxy-")
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	web, err := freeAddr()
	if err != nil {
		return nil, err
	}
	// The admin API is on for its public /metrics (heap, stacks, goroutines);
	// the server's address is never dialled while it is in maintenance.
	conf := fmt.Sprintf(`bind = %q
servers_dir = "servers"
compression_threshold = 256

[web]
enabled = true
bind = %q
data_dir = "data"
metrics_public = true

[rate_limit]
enabled = false

[active_health]
enabled = false
`, addr, web)
	files := map[string]string{
		"infrarust.toml":        conf,
		"servers/limbo.toml":    "domains = [\"limbo\"]\naddresses = [\"127.0.0.1:9\"]\nproxy_mode = \"offline\"\nlimbo_handlers = [\"maintenance\"]\n",
		"data/maintenance.json": "[\"limbo\"]\n",
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(binary, "serve", "--config", filepath.Join(dir, "infrarust.toml"), "--log-level", "warn")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	t := &proxyTarget{cmd: cmd, dir: dir, addr: addr, metrics: "http://" + web + "/metrics", done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(t.done) }()
	// Both listeners: the admin API may come up after the proxy's.
	for _, a := range []string{addr, web} {
		if err := t.awaitListening(a); err != nil {
			t.Close()
			return nil, fmt.Errorf("%s: %w", binary, err)
		}
	}
	return t, nil
}

// awaitListening waits until the proxy accepts connections on addr.
func (t *proxyTarget) awaitListening(addr string) error {
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-t.done:
			return fmt.Errorf("exited before listening on %s", addr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after 10s", addr)
		}
	}
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (t *proxyTarget) Addr() string { return t.addr }

// Settle: the proxy's garbage collection is its own; it is measured as it runs.
func (t *proxyTarget) Settle() bool { return false }

func (t *proxyTarget) Profile(bool) {}

func (t *proxyTarget) Close() {
	_ = t.cmd.Process.Signal(os.Interrupt)
	select {
	case <-t.done:
	case <-time.After(40 * time.Second):
		_ = t.cmd.Process.Kill()
		<-t.done
	}
	os.RemoveAll(t.dir)
}

func (t *proxyTarget) Stats() (stats, error) {
	pid := strconv.Itoa(t.cmd.Process.Pid)
	s := stats{Held: -1}
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			s.RSSKiB, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return s, err
	}
	// The fields after the command name (which may hold spaces), from field 3.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return s, errors.New("unexpected /proc/<pid>/stat")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return s, errors.New("unexpected /proc/<pid>/stat")
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	s.CPUSeconds = float64(utime+stime) / clockTicks
	m, err := t.scrape("go_goroutines", "go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes")
	if err != nil {
		return s, err
	}
	s.Goroutines = int(m["go_goroutines"])
	s.HeapKiB = uint64(m["go_memstats_heap_inuse_bytes"]) >> 10
	s.StackKiB = uint64(m["go_memstats_stack_inuse_bytes"]) >> 10
	return s, nil
}

// scrape reads the named gauges from the proxy's /metrics.
func (t *proxyTarget) scrape(names ...string) (map[string]float64, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(t.metrics)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		for _, n := range names {
			if v, ok := strings.CutPrefix(sc.Text(), n+" "); ok {
				out[n], _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
			}
		}
	}
	return out, sc.Err()
}
