package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// target is a proxy under test: in this process, or the real binary as a child.
type target interface {
	// Addr relays to the fakemc backend (bench.local for an Infrarust).
	Addr() string
	// ModeAddr is where a client of the Minecraft-faithful workloads connects for
	// mode ("" when the target cannot serve it); an Infrarust routes them all by
	// hostname on Addr.
	ModeAddr(mode string) string
	// RSS is the proxy process's resident set; ok is false in-process (it is ours).
	RSS() (int64, bool)
	// FDs is the proxy process's open file descriptors (-1 in-process: they are mixed with ours).
	FDs() (all, pipes int)
	// Active is the proxy's count of live connections (-1 when unknown).
	Active() int64
	// CPU is the proxy process's CPU time so far; ok is false in-process, where
	// the load generator's CPU cannot be told apart from the proxy's.
	CPU() (time.Duration, bool)
	// Goroutines is the proxy's goroutine count (-1 when unknown).
	Goroutines() int
	// Pid is the proxy's process id when it runs apart from the load (0 in-process).
	Pid() int
	Close()
}

func (ip *inProcess) Addr() string               { return ip.addr }
func (ip *inProcess) ModeAddr(string) string     { return ip.addr }
func (ip *inProcess) RSS() (int64, bool)         { return 0, false }
func (ip *inProcess) Active() int64              { return ip.p.Counters().Active }
func (ip *inProcess) FDs() (int, int)            { return -1, -1 }
func (ip *inProcess) Close()                     { ip.close() }
func (ip *inProcess) CPU() (time.Duration, bool) { return 0, false }
func (ip *inProcess) Goroutines() int            { return runtime.NumGoroutine() }
func (ip *inProcess) Pid() int                   { return 0 }

// binaryProxy is `infrarust serve` started with a generated configuration.
type binaryProxy struct {
	*child
	addr    string
	metrics string // the admin API's /metrics URL (goroutine count)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func startBinary(path string, spec proxySpec) (*binaryProxy, error) {
	// Two addresses: the proxy's and the admin API's.
	dir, addrs, err := childDir("mcbench-binary-", 2, func(dir string, addrs []string) error {
		return writeBinaryConfig(dir, spec, addrs[0], addrs[1])
	})
	if err != nil {
		return nil, err
	}
	addr, web := addrs[0], addrs[1]
	// The listener defers accept until bytes arrive, so a bare connect proves it
	// listens without costing the proxy a connection.
	c, err := startChild(dir, os.Stderr, []string{addr}, path, "serve", "--config", filepath.Join(dir, "infrarust.toml"), "--log-level", "warn")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &binaryProxy{child: c, addr: addr, metrics: "http://" + web + "/metrics"}, nil
}

// writeBinaryConfig writes infrarust.toml and servers/*.toml for spec into dir:
// the proxy on addr, the admin API on web.
func writeBinaryConfig(dir string, spec proxySpec, addr, web string) error {
	// The admin API is on only for its public /metrics (go_goroutines).
	conf := fmt.Sprintf(`bind = %q
servers_dir = "servers"
connect_timeout = "5s"
compression_threshold = %d

[status_cache]
ttl = %q

[web]
enabled = true
bind = %q
data_dir = "data"
metrics_public = true

[rate_limit]
enabled = false

[active_health]
enabled = false
`, addr, spec.threshold, spec.cacheTTL.String(), web)
	if spec.forwarder != "" {
		// A top-level key: it must come before the first table.
		conf = fmt.Sprintf("forwarder = %q\n", spec.forwarder) + conf
	}
	if spec.sessionServer != "" {
		conf += fmt.Sprintf("\n[auth]\nsession_server = %q\n", spec.sessionServer)
	}
	if spec.webhook != "" {
		conf += fmt.Sprintf("\n[[webhooks]]\nurl = %q\nevents = [%q]\ndecide = true\ntimeout = \"2s\"\n", spec.webhook, webhookEvent)
	}
	if spec.telemetry != "" {
		conf += fmt.Sprintf("\n[telemetry]\nenabled = true\nendpoint = %q\nsample_ratio = 1.0\n", spec.telemetry)
	}
	if err := os.MkdirAll(filepath.Join(dir, "servers"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "infrarust.toml"), []byte(conf), 0o644); err != nil {
		return err
	}
	for _, r := range spec.servers() {
		srv := fmt.Sprintf("domains = [%q]\naddresses = [%q]\nproxy_mode = %q\n", r.host, r.backend, r.mode)
		if err := os.WriteFile(filepath.Join(dir, "servers", r.id+".toml"), []byte(srv), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (b *binaryProxy) Addr() string           { return b.addr }
func (b *binaryProxy) ModeAddr(string) string { return b.addr }

// Goroutines reads go_goroutines from the proxy's /metrics.
func (b *binaryProxy) Goroutines() int {
	m := b.scrape("go_goroutines")
	if v, ok := m["go_goroutines"]; ok {
		return int(v)
	}
	return -1
}

// GoMemory is the proxy's Go heap in use plus its goroutine stacks, from its
// /metrics; ok is false when they cannot be read.
func (b *binaryProxy) GoMemory() (heap, stacks int64, ok bool) {
	m := b.scrape("go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes")
	h, ok1 := m["go_memstats_heap_inuse_bytes"]
	s, ok2 := m["go_memstats_stack_inuse_bytes"]
	return int64(h), int64(s), ok1 && ok2
}

// scrape reads the named unlabelled metrics from the proxy's /metrics.
func (b *binaryProxy) scrape(names ...string) map[string]float64 {
	out := map[string]float64{}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(b.metrics)
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 4<<20))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		for _, name := range names {
			if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
				if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					out[name] = n
				}
			}
		}
	}
	return out
}

// procFDs counts a process's open file descriptors and, among them, pipes.
func procFDs(pid int) (all, pipes int) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
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
