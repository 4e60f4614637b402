package bench

import (
	"bufio"
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// TestSmoke runs every workload at a tiny size with every relayed packet
// decoded and checked, through one proxy per forwarder: it proves the tool still
// works, that each proxy mode delivers the play traffic intact and that the
// forwarders compare side by side (CI runs it); it asserts no timing.
func TestSmoke(t *testing.T) {
	forwarders := []string{"goroutine"}
	if runtime.GOOS == "linux" {
		forwarders = append(forwarders, "epoll")
	}
	o := Options{
		BulkTime: 50 * time.Millisecond, Streams: 2,
		RTTCount: 200, RTTTime: 200 * time.Millisecond, RTTSize: 32,
		StormTime: 200 * time.Millisecond, Clients: 4,
		Sessions: 50, Rounds: 1, ReframeThreshold: -1, Verify: true,
		Forwarders: forwarders,
		Logf:       t.Logf,
	}
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	// Per forwarder: 4 bulk, 3 rtt, 2 status, 1 login, and the passthrough rows of
	// relay up, relay down and mclogin; the other 3 modes' 3 rows once.
	if want := len(forwarders)*(10+3) + 3*(len(AllModes)-1); len(res.Rows) != want {
		t.Errorf("%d rows, want %d", len(res.Rows), want)
	}
	names := map[string]bool{}
	for _, r := range res.Rows {
		names[r.Name] = true
		if r.Direct <= 0 || r.Proxy <= 0 {
			t.Errorf("%s: direct %v proxy %v; both must have measured something", r.Name, r.Direct, r.Proxy)
		}
		if r.ProxyCPU != 0 {
			t.Errorf("%s: in-process run reports proxy CPU %v; it cannot be told apart from the load's", r.Name, r.ProxyCPU)
		}
	}
	for _, m := range AllModes {
		for _, w := range []string{"relay-up-1 ", "relay-down-1 ", "mclogin-4 "} {
			want := []string{w + m} // an intercepted mode's row names no forwarder
			if m == modePassthrough {
				want = nil
				for _, f := range forwarders {
					want = append(want, w+m+" ["+f+"]")
				}
			}
			for _, n := range want {
				if !names[n] {
					t.Errorf("no row %q", n)
				}
			}
		}
	}
	for _, f := range forwarders {
		for _, w := range []string{"bulk-up-1", "rtt-p99", "status-cache-on-4", "login-4"} {
			if n := w + " [" + f + "]"; !names[n] {
				t.Errorf("no row %q", n)
			}
		}
	}
	if len(res.Memory) != len(forwarders) {
		t.Fatalf("memory figures for %d proxies, want %d: %+v", len(res.Memory), len(forwarders), res.Memory)
	}
	for i, m := range res.Memory {
		if m.Target != forwarders[i] || m.Sessions != 50 || m.ActiveAfter != 0 {
			t.Errorf("memory %+v: want %s, 50 sessions, no active connection after every session closed", m, forwarders[i])
		}
	}
	if want := len(forwarders) + 2; len(res.Idle) != want {
		t.Fatalf("idle figures for %d mode/proxy pairs, want %d (passthrough per forwarder, offline, client_only): %+v", len(res.Idle), want, res.Idle)
	}
	for _, id := range res.Idle {
		if id.Sessions != 50 || id.GoroutinesLeft > 2 {
			t.Errorf("idle %s [%s]: %+v; want 50 sessions, no goroutine left after close", id.Mode, id.Target, id)
		}
		// The epoll forwarder's idle player is its two sockets and no goroutine; the
		// goroutine forwarder and the intercepted relays park goroutines.
		if epoll := id.Mode == modePassthrough && id.Target == "epoll"; epoll != (id.GoroutinesPerSess < 0.5) {
			t.Errorf("idle %s [%s]: %.2f goroutines per session", id.Mode, id.Target, id.GoroutinesPerSess)
		}
	}
	if res.LoadStart == "" || res.LoadEnd == "" {
		t.Errorf("load average not recorded: %q, %q", res.LoadStart, res.LoadEnd)
	}
	var buf bytes.Buffer
	WriteTable(&buf, res)
	for _, want := range []string{"status-cache-on-4 [goroutine]", "relay-down-1 client_only |", "| offline | 50 |", "| passthrough [goroutine] | 50 |", "load average"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

// The configuration mcbench gives the real binary must load: every mode's
// server, the stand-in session server and the compression threshold.
func TestBinaryConfigLoads(t *testing.T) {
	dir := t.TempDir()
	spec := proxySpec{backend: "127.0.0.1:1", cacheTTL: time.Second, sessionServer: "http://127.0.0.1:2", threshold: 256,
		routes: modeRoutes("127.0.0.1:3", "127.0.0.1:4"), forwarder: "goroutine",
		webhook: "http://127.0.0.1:7/hook", telemetry: "http://127.0.0.1:8"}
	if err := writeBinaryConfig(dir, spec, "127.0.0.1:5", "127.0.0.1:6"); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(filepath.Join(dir, "infrarust.toml"), true)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CompressionThreshold != 256 || cfg.Auth.SessionServer != "http://127.0.0.1:2" || cfg.RateLimit.Enabled {
		t.Errorf("threshold %d, session server %q, rate limit %v", cfg.CompressionThreshold, cfg.Auth.SessionServer, cfg.RateLimit.Enabled)
	}
	if cfg.Forwarder != "goroutine" {
		t.Errorf("forwarder %q, want goroutine", cfg.Forwarder)
	}
	if len(cfg.Webhooks) != 1 || cfg.Webhooks[0].URL != "http://127.0.0.1:7/hook" || !cfg.Webhooks[0].Decide || len(cfg.Webhooks[0].Events) != 1 || cfg.Webhooks[0].Events[0] != webhookEvent {
		t.Errorf("webhooks %+v, want one deciding webhook on %s", cfg.Webhooks, webhookEvent)
	}
	if !cfg.Telemetry.Enabled || cfg.Telemetry.Endpoint != "http://127.0.0.1:8" || cfg.Telemetry.SampleRatio != 1 {
		t.Errorf("telemetry %+v, want every session traced to the sink", cfg.Telemetry)
	}
	servers, errs := config.LoadServersDir(cfg.ServersPath, cfg)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := map[string]string{}
	for _, s := range servers {
		got[s.Domains[0]] = string(s.ProxyMode) + " " + s.Addresses[0].Address
	}
	want := map[string]string{
		benchHost:               "passthrough 127.0.0.1:1",
		hostOf(modePassthrough): "passthrough 127.0.0.1:3",
		hostOf(modeOffline):     "offline 127.0.0.1:3",
		hostOf(modeReframe):     "offline 127.0.0.1:4",
		hostOf(modeClientOnly):  "client_only 127.0.0.1:3",
	}
	for h, w := range want {
		if got[h] != w {
			t.Errorf("%s: %q, want %q", h, got[h], w)
		}
	}
}

func TestParseSyscallCounts(t *testing.T) {
	strace := `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 40.10    0.004000           2      2000           write
 30.00    0.003000           1      3000       500 read
  9.90    0.000990           1       640           setsockopt
------ ----------- ----------- --------- --------- ----------------
100.00    0.009990                  5640       500 total
`
	got := parseStraceSummary(strace)
	want := []SyscallCount{{"write", 2000, 0}, {"read", 3000, 500}, {"setsockopt", 640, 0}, {"total", 5640, 500}}
	if len(got) != len(want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	n, err := parsePerfCount("# started on Mon\n\n123456,,raw_syscalls:sys_enter,2003939129,100.00,,\n")
	if err != nil || n != 123456 {
		t.Errorf("perf: %v %v", n, err)
	}
	if n, err := parsePerfCount("<not counted>,,raw_syscalls:sys_enter,0,0.00,,\n"); err != nil || n != 0 {
		t.Errorf("a counter that never ran: %v %v, want 0", n, err)
	}
	if _, err := parsePerfCount("<not supported>,,raw_syscalls:sys_enter,0,0.00,,\n"); err == nil {
		t.Error("an unsupported counter parsed")
	}
	if _, err := parsePerfCount("# started on Mon\n"); err == nil {
		t.Error("output without the counter parsed")
	}
}

// skipFrame must count exactly the packet bytes of every frame in a batch,
// compressed or not, which is what the relay rows divide by.
func TestSkipFrameCountsBatches(t *testing.T) {
	for _, th := range []int{-1, 0, 256, 1 << 20} {
		b := buildBatch(th)
		br := bufio.NewReader(bytes.NewReader(b.wire))
		var total int64
		for range b.frames {
			n, id, err := skipFrame(br, th)
			if err != nil {
				t.Fatalf("threshold %d: %v", th, err)
			}
			if id == idEnd {
				t.Fatalf("threshold %d: a play packet read as the end marker", th)
			}
			total += int64(n)
		}
		if total != b.packetBytes {
			t.Errorf("threshold %d: counted %d packet bytes, want %d", th, total, b.packetBytes)
		}
		if _, err := br.ReadByte(); err == nil {
			t.Errorf("threshold %d: bytes left after %d frames", th, b.frames)
		}
		// The end marker is told apart without inflating anything.
		var end bytes.Buffer
		c := mc.NewConn(nil, &end, clientZlib)
		_ = c.SetCompression(th)
		if err := c.WritePacket(idEnd, nil); err != nil {
			t.Fatal(err)
		}
		if _, id, err := skipFrame(bufio.NewReader(&end), th); err != nil || id != idEnd {
			t.Errorf("threshold %d: end marker read as id %d, %v", th, id, err)
		}
	}
}
