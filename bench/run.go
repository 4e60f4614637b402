package bench

import (
	"bufio"
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Options size a run; the defaults fit in a few minutes on 2 cores.
type Options struct {
	Binary    string        // path to an infrarust binary; empty = in-process proxy
	BulkTime  time.Duration // per bulk measurement
	Streams   int           // parallel streams for the "many" bulk case
	RTTCount  int           // round trips per latency measurement (upper bound)
	RTTTime   time.Duration // time bound per latency measurement
	RTTSize   int           // message size in bytes
	StormTime time.Duration // per status/login storm
	Clients   int           // concurrent storm clients
	Sessions  int           // idle sessions for the memory figures
	Rounds    int           // repeat each throughput/storm pair, keep the median
	// Modes are the proxy modes of the Minecraft-faithful workloads (relay-*,
	// mclogin-*, idle-modes, syscalls): passthrough, offline, offline-reframe,
	// client_only. Empty means all four.
	Modes []string
	// ReframeThreshold is the backend's compression threshold behind
	// offline-reframe (the proxy's stays at 256, so every frame is re-framed);
	// -1, the default, is a backend with compression off.
	ReframeThreshold int
	// RelayRate paces the relay workloads' sender (client or backend) to this
	// many MiB/s of packets, so modes compare at one arrival rate; 0 sends as
	// fast as the sender can.
	RelayRate float64
	// Syscalls is the number of logins per mode counted under perf (and strace,
	// for the per-call breakdown) at the end of a --binary run; 0 skips it.
	Syscalls int
	// Forwarders are the passthrough forwarders to compare ("goroutine", "epoll",
	// "auto"): one proxy for each, side by side in every workload that forwards
	// bytes (rows suffixed [kind]). Empty: one proxy with the configuration's default.
	Forwarders []string
	// HAProxy is an haproxy binary measured in TCP mode beside the proxy on the
	// passthrough workloads (rows suffixed [haproxy]); "" leaves it out.
	HAProxy string
	// BaselineBinary is another infrarust build (the "before" of a change)
	// measured beside Binary on the passthrough workloads, with the first
	// forwarder (rows suffixed [baseline]); "" leaves it out.
	BaselineBinary string
	// Gate is a Gate binary (github.com/minekube/gate) run in full mode beside
	// the proxy on the intercepted workloads: offline and client_only (rows
	// suffixed [gate]); "" leaves it out. Nothing in the module depends on Gate.
	Gate string
	// HandlerBinary is a build of bench/cmd/infrarust-handler (Infrarust with one
	// compiled-in Login handler) for the events workload; "" leaves that row out.
	HandlerBinary string
	// Verify decodes every relayed packet and compares it with what was sent
	// (slow; the tests turn it on).
	Verify bool
	Only   map[string]bool
	Logf   func(format string, args ...any)
	// BeforeWorkload/AfterWorkload bracket the proxied run of each workload (profiling).
	BeforeWorkload, AfterWorkload func(name string)
	// WhileOpen runs while the idle proxied sessions are open (heap profile).
	WhileOpen func()
}

// Defaults are the flag defaults of mcbench.
func Defaults() Options {
	return Options{
		BulkTime: 2 * time.Second, Streams: 16,
		RTTCount: 20000, RTTTime: 3 * time.Second, RTTSize: 32,
		StormTime: 3 * time.Second, Clients: 64,
		Sessions: 10000, Rounds: 1, ReframeThreshold: -1,
	}
}

// Row is one line of the table: the same workload direct and through the proxy.
type Row struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"`
	Direct float64 `json:"direct"`
	Proxy  float64 `json:"proxy"`
	// Ratio is proxy/direct for rates, or proxy-direct (added) for latencies.
	Ratio float64 `json:"ratio"`
	Added bool    `json:"added,omitempty"`
	// Target names the proxy of the row when a run compares several (a forwarder,
	// "haproxy", an events variant); "" when it has one.
	Target string `json:"target,omitempty"`
	// Peer marks a row of a proxy that is not Infrarust (HAProxy, Gate).
	Peer bool `json:"peer,omitempty"`
	// ProxyCPU is the proxy process's CPU per unit of work (CPUUnit), read from
	// /proc/<pid>/stat around the proxied run; 0 when not measured (in-process).
	ProxyCPU float64 `json:"proxy_cpu_per_unit,omitempty"`
	CPUUnit  string  `json:"cpu_unit,omitempty"`
	// CPULimit is what ProxyCPU cannot go below on this machine (client_only
	// relay rows: the offline row plus CFB8 at the AES-NI limit); 0 when none.
	CPULimit float64 `json:"proxy_cpu_limit_per_unit,omitempty"`
	Errors   int64   `json:"errors,omitempty"`
	Note     string  `json:"note,omitempty"`
}

// Memory is the idle-session figure of one proxy.
type Memory struct {
	Target            string  `json:"target,omitempty"` // as Row.Target
	Sessions          int     `json:"sessions"`
	Note              string  `json:"note,omitempty"`
	ProxyRSSPerSess   float64 `json:"proxy_rss_bytes_per_session"`
	ProxyGoPerSess    float64 `json:"proxy_go_heap_stack_bytes_per_session"`
	DirectRSSPerSess  float64 `json:"direct_rss_bytes_per_session"`
	ProxyStackPerSess float64 `json:"proxy_stack_bytes_per_session"`
	ProxyFDsPerSess   float64 `json:"proxy_fds_per_session"`
	ProxyFDsAfter     int     `json:"proxy_non_pipe_fds_after_delta"`
	PooledPipeFDs     int     `json:"proxy_pooled_pipe_fds_after"`
	ProxyGoroutines   int     `json:"proxy_goroutines_per_session_x100"`
	GoroutinesBefore  int     `json:"goroutines_before"`
	GoroutinesOpen    int     `json:"goroutines_open"`
	GoroutinesAfter   int     `json:"goroutines_after"`
	ActiveAfter       int64   `json:"proxy_active_after"`
	HeapAfterDeltaKiB float64 `json:"heap_after_delta_kib"`
	RSSAfterDeltaKiB  float64 `json:"rss_after_delta_kib"`
}

// Result is everything a run measured.
type Result struct {
	Mode   string    `json:"mode"`
	Rows   []Row     `json:"rows"`
	Memory []*Memory `json:"memory,omitempty"` // one per proxy of the passthrough workloads
	Idle   []Idle    `json:"idle_modes,omitempty"`
	// Syscalls per login, per proxy mode (--binary with Options.Syscalls).
	Syscalls []Syscalls `json:"syscalls,omitempty"`
	// LoadStart and LoadEnd are /proc/loadavg when the run started and ended.
	LoadStart string  `json:"load_start"`
	LoadEnd   string  `json:"load_end"`
	Started   string  `json:"started"`
	Seconds   float64 `json:"seconds"`
	CPUs      int     `json:"cpus"`
}

func (o Options) want(name string) bool { return len(o.Only) == 0 || o.Only[name] }

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// measure is one run of a workload: units of work (bytes, cycles) done in
// seconds, and the proxy CPU it took when that can be read.
type measure struct {
	units, seconds float64
	errors         int64
	cpu            time.Duration
	hasCPU         bool
}

// unit says how a workload's units read as a rate and as CPU per unit.
type unit struct {
	rate    string        // the rate's name, e.g. "MiB/s"
	per     float64       // units in one of the rate's units (1<<20 bytes in a MiB)
	cpu     string        // the CPU figure's name, e.g. "ms/GiB"
	cpuPer  float64       // units in the CPU figure's denominator (1<<30 bytes in a GiB)
	cpuTime time.Duration // the CPU figure's time unit
}

var (
	mibUnit   = unit{"MiB/s", 1 << 20, "ms/GiB", 1 << 30, time.Millisecond}
	cycleUnit = unit{"cycles/s", 1, "µs/cycle", 1, time.Microsecond}
	loginUnit = unit{"logins/s", 1, "µs/login", 1, time.Microsecond}
)

func (u unit) rateOf(m measure) float64 { return m.units / u.per / m.seconds }

func (u unit) cpuOf(m measure) float64 {
	if !m.hasCPU || m.units == 0 {
		return 0
	}
	return float64(m.cpu) / float64(u.cpuTime) / (m.units / u.cpuPer)
}

// arm is one proxied variant of a workload (a proxy mode, a forwarder, HAProxy);
// label "" is the plain "via proxy" row. Its proxy's CPU is read around each run.
type arm struct {
	label string
	u     *underTest
	run   func() (measure, error)
	// anyProxy: the row does not depend on which proxy of the run served it (an
	// intercepted mode never reaches the forwarder), so it carries no [proxy].
	anyProxy bool
}

// group is a workload's direct baseline and the proxied arms compared with it.
type group struct {
	direct func() (measure, error)
	arms   []arm
}

// runner carries a run's state: the options, the result, the proxies under test.
type runner struct {
	o    Options
	res  *Result
	spec proxySpec
	// pts are the proxies of the passthrough workloads: one Infrarust per
	// forwarder, then HAProxy. pts[0] also serves the intercepted modes.
	pts []*underTest
}

// underTest is one proxy of a run and what makes it differ from the others.
type underTest struct {
	name      string // "" when the run has a single proxy; else the forwarder, "haproxy", an events variant
	haproxy   bool
	gate      string // the mode a Gate process serves ("" for the others)
	binary    string // the infrarust binary ("" in-process); bench/cmd/infrarust-handler's for the handler variant
	forwarder string
	webhook   string // a deciding webhook's URL
	telemetry string // an OTLP/HTTP endpoint
	t         target
}

// peer reports a proxy that is not Infrarust (HAProxy, Gate): its rows are
// references, held to no target of ours.
func (u *underTest) peer() bool { return u.haproxy || u.gate != "" }

// named says whether rows of mode measured through u carry u's name: the
// passthrough rows (one per forwarder and HAProxy) and a peer's; the other
// intercepted rows come from the one Infrarust whatever its forwarder.
func (u *underTest) named(mode string) bool { return mode == modePassthrough || u.gate != "" }

// label is the suffix of the rows measured through u.
func (u *underTest) label() string {
	if u.name == "" {
		return ""
	}
	return "[" + u.name + "]"
}

// fdsPerSession is what one idle passthrough session costs u's process in file
// descriptors: its two sockets, plus two splice pipes (4 fds) under the goroutine
// forwarder, whose io.Copy holds a pipe per direction for the session's life.
func (u *underTest) fdsPerSession() int {
	if u.haproxy {
		return 2
	}
	switch u.forwarder {
	case "goroutine":
		return 6
	case "epoll":
		return 2
	}
	if runtime.GOOS == "linux" {
		return 2 // auto is epoll on Linux
	}
	return 6
}

// plainTargets are the proxies that relay the plain workloads' fakemc bytes
// (all but Gate's full mode, which speaks Minecraft to its backend).
func (r *runner) plainTargets() []*underTest {
	var out []*underTest
	for _, u := range r.pts {
		if u.t.Addr() != "" {
			out = append(out, u)
		}
	}
	return out
}

// px is the proxy of the single-proxy workloads (the intercepted modes).
func (r *runner) px() target { return r.pts[0].t }

// start opens u's proxy with the run's current spec.
func (r *runner) start(u *underTest) error {
	spec := r.spec
	spec.forwarder, spec.webhook, spec.telemetry = u.forwarder, u.webhook, u.telemetry
	var t target
	var err error
	switch {
	case u.gate != "":
		t, err = startGate(r.o.Gate, u.gate, spec)
	case u.haproxy:
		limit, _ := RaiseFileLimit()
		t, err = startHAProxy(r.o.HAProxy, spec, limit)
	case u.binary != "":
		t, err = startBinary(u.binary, spec)
	default:
		t, err = startInProcess(spec)
	}
	if err != nil {
		return fmt.Errorf("proxy %s: %w", cmp.Or(u.name, "infrarust"), err)
	}
	u.t = t
	return nil
}

// reopen replaces u's proxy with a fresh one of the same configuration.
func (r *runner) reopen(u *underTest) error {
	if u.t != nil {
		u.t.Close()
		u.t = nil
	}
	return r.start(u)
}

func (r *runner) closeAll() {
	for _, u := range r.pts {
		if u.t != nil {
			u.t.Close()
			u.t = nil
		}
	}
}

// timed runs f through u's proxy with the hooks around it and the proxy's CPU read before and after.
func (r *runner) timed(name string, u *underTest, f func() (measure, error)) (measure, error) {
	if r.o.BeforeWorkload != nil {
		r.o.BeforeWorkload(name)
	}
	c0, ok := u.t.CPU()
	m, err := f()
	c1, ok1 := u.t.CPU()
	if r.o.AfterWorkload != nil {
		r.o.AfterWorkload(name)
	}
	m.cpu, m.hasCPU = c1-c0, ok && ok1
	return m, err
}

// compare runs each group's baseline and arms Rounds times, interleaved, and
// adds one row per arm with the medians.
func (r *runner) compare(name string, u unit, groups ...group) error {
	if !r.o.want(name) {
		return nil
	}
	return r.measure(name, u, groups...)
}

// measure is compare for a workload whose caller already decided it runs.
func (r *runner) measure(name string, u unit, groups ...group) error {
	type acc struct {
		rates, cpus []float64
		errs        int64
	}
	directs := make([]acc, len(groups))
	arms := make([][]acc, len(groups))
	for gi, g := range groups {
		arms[gi] = make([]acc, len(g.arms))
	}
	for range max(r.o.Rounds, 1) {
		for gi, g := range groups {
			d, err := g.direct()
			if err != nil {
				return fmt.Errorf("%s direct: %w", name, err)
			}
			directs[gi].rates = append(directs[gi].rates, u.rateOf(d))
			directs[gi].errs += d.errors
			for ai, a := range g.arms {
				m, err := r.timed(name, a.u, a.run)
				if err != nil {
					return fmt.Errorf("%s via proxy %s: %w", name, strings.TrimSpace(a.label+" "+a.u.label()), err)
				}
				x := &arms[gi][ai]
				x.rates = append(x.rates, u.rateOf(m))
				x.cpus = append(x.cpus, u.cpuOf(m))
				x.errs += m.errors
			}
		}
	}
	for gi, g := range groups {
		d := median(directs[gi].rates)
		for ai, a := range g.arms {
			x := arms[gi][ai]
			row := Row{Name: name, Unit: u.rate, Direct: d, Proxy: median(x.rates), Errors: directs[gi].errs + x.errs}
			if a.label != "" {
				row.Name += " " + a.label
			}
			if l := a.u.label(); l != "" && !a.anyProxy {
				row.Name += " " + l
				row.Target, row.Peer = a.u.name, a.u.peer()
			}
			row.Ratio = row.Proxy / d
			if c := median(x.cpus); c > 0 {
				row.ProxyCPU, row.CPUUnit = c, u.cpu
			}
			r.res.Rows = append(r.res.Rows, row)
			r.o.logf("%-32s direct %12.1f  proxy %12.1f %s  ratio %.3f  proxy CPU %.1f %s",
				row.Name, row.Direct, row.Proxy, row.Unit, row.Ratio, row.ProxyCPU, row.CPUUnit)
		}
	}
	return nil
}

// Run measures every selected workload, baseline first, then through each proxy.
func Run(o Options) (*Result, error) {
	start := time.Now()
	res := &Result{Mode: "in-process", Started: start.UTC().Format(time.RFC3339), LoadStart: loadAverage(), CPUs: runtime.NumCPU()}
	defer func() { res.LoadEnd, res.Seconds = loadAverage(), time.Since(start).Seconds() }()
	if o.Binary != "" {
		res.Mode = "binary " + o.Binary
	}
	be, err := startBackend()
	if err != nil {
		return nil, err
	}
	defer be.Close()
	env, err := startMCEnv(o)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	r := &runner{o: o, res: res, pts: proxiesUnderTest(o),
		spec: proxySpec{backend: be.Addr(), cacheTTL: 5 * time.Second, routes: env.routes(), sessionServer: env.ss.URL, threshold: 256}}
	defer r.closeAll()
	for _, u := range r.pts {
		if err := r.start(u); err != nil {
			return nil, err
		}
	}
	direct := be.Addr()
	// plain is a workload of the fakemc backend: direct, then through every proxy.
	plain := func(f func(addr string) (measure, error)) group {
		g := group{direct: func() (measure, error) { return f(direct) }}
		for _, u := range r.plainTargets() {
			g.arms = append(g.arms, arm{u: u, run: func() (measure, error) { return f(u.t.Addr()) }})
		}
		return g
	}

	bulk := []struct {
		name string
		f    func(string) (measure, error)
	}{
		{"bulk-up-1", func(a string) (measure, error) { return bulkUp(a, 1, o.BulkTime) }},
		{"bulk-down-1", func(a string) (measure, error) { return bulkDown(a, 1, o.BulkTime) }},
		{fmt.Sprintf("bulk-up-%d", o.Streams), func(a string) (measure, error) { return bulkUp(a, o.Streams, o.BulkTime) }},
		{fmt.Sprintf("bulk-down-%d", o.Streams), func(a string) (measure, error) { return bulkDown(a, o.Streams, o.BulkTime) }},
	}
	for _, s := range bulk {
		if err := r.compare(s.name, mibUnit, plain(s.f)); err != nil {
			return res, err
		}
	}

	if o.want("rtt") {
		if err := r.rtt(direct); err != nil {
			return res, err
		}
	}

	stormOf := func(cycle func(string) func(int, *bufio.Reader) error) func(string) (measure, error) {
		return func(a string) (measure, error) { return storm(o.Clients, o.StormTime, 0, cycle(a)) }
	}
	if err := r.compare(fmt.Sprintf("status-cache-on-%d", o.Clients), cycleUnit, plain(stormOf(statusCycle))); err != nil {
		return res, err
	}
	if o.want(fmt.Sprintf("status-cache-off-%d", o.Clients)) {
		r.spec.cacheTTL = 0
		for _, u := range r.plainTargets() {
			if u.haproxy {
				continue // it caches nothing
			}
			if err := r.reopen(u); err != nil {
				return res, err
			}
		}
		if err := r.compare(fmt.Sprintf("status-cache-off-%d", o.Clients), cycleUnit, plain(stormOf(statusCycle))); err != nil {
			return res, err
		}
	}
	if err := r.compare(fmt.Sprintf("login-%d", o.Clients), cycleUnit, plain(stormOf(loginCycle))); err != nil {
		return res, err
	}

	if err := env.workloads(r); err != nil {
		return res, err
	}

	if o.want("memory") && o.Sessions > 0 {
		for _, u := range r.plainTargets() {
			m, err := memory(o, direct, u)
			if m != nil {
				res.Memory = append(res.Memory, m)
			}
			if err != nil {
				return res, fmt.Errorf("memory %s: %w", u.name, err)
			}
		}
	}
	if o.want("idle-modes") && o.Sessions > 0 {
		if err := env.idle(r); err != nil {
			return res, fmt.Errorf("idle-modes: %w", err)
		}
	}
	if o.want("syscalls") && o.Syscalls > 0 {
		if err := env.syscalls(r); err != nil {
			return res, fmt.Errorf("syscalls: %w", err)
		}
	}
	if o.want("events") {
		if err := env.events(r, direct); err != nil {
			return res, fmt.Errorf("events: %w", err)
		}
	}
	return res, nil
}

// proxiesUnderTest lists the proxies of the passthrough workloads: one Infrarust
// per forwarder (or one with the default), then HAProxy.
func proxiesUnderTest(o Options) []*underTest {
	var pts []*underTest
	for _, f := range o.Forwarders {
		pts = append(pts, &underTest{name: f, binary: o.Binary, forwarder: f})
	}
	if len(pts) == 0 {
		pts = append(pts, &underTest{binary: o.Binary})
	}
	if o.BaselineBinary != "" {
		pts = append(pts, &underTest{name: "baseline", binary: o.BaselineBinary, forwarder: pts[0].forwarder})
	}
	if o.HAProxy != "" {
		pts = append(pts, &underTest{name: "haproxy", haproxy: true})
	}
	if o.Gate != "" {
		for _, m := range []string{modeOffline, modeClientOnly} {
			if len(o.Modes) == 0 || slices.Contains(o.Modes, m) {
				pts = append(pts, &underTest{name: "gate", gate: m})
			}
		}
	}
	if len(pts) > 1 && pts[0].name == "" {
		pts[0].name = "infrarust"
	}
	return pts
}

// rtt measures the echo round trip direct and through every proxy, the samples
// taken in turn so all of them see the same load.
func (r *runner) rtt(direct string) error {
	o := r.o
	addrs := []string{direct}
	pts := r.plainTargets()
	for _, u := range pts {
		addrs = append(addrs, u.t.Addr())
	}
	lat, err := rtt(addrs, o.RTTSize, o.RTTCount, o.RTTTime)
	if err != nil {
		return fmt.Errorf("rtt: %w", err)
	}
	d := lat[0]
	for i, u := range pts {
		p := lat[i+1]
		for _, x := range []struct {
			n    string
			d, p float64
		}{{"rtt-p50", d.P50, p.P50}, {"rtt-p99", d.P99, p.P99}, {"rtt-p99.9", d.P999, p.P999}} {
			name := x.n
			if l := u.label(); l != "" {
				name += " " + l
			}
			r.res.Rows = append(r.res.Rows, Row{Name: name, Unit: "µs", Direct: x.d, Proxy: x.p, Ratio: x.p - x.d, Added: true, Target: u.name, Peer: u.peer(),
				Note: fmt.Sprintf("%d-byte echo, %d/%d samples, taken in turn with the direct ones", o.RTTSize, d.Samples, p.Samples)})
			o.logf("%-24s direct %10.1f  proxy %10.1f µs  added %+.1f µs", name, x.d, x.p, x.p-x.d)
		}
	}
	return nil
}
