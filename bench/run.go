package bench

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Options size a run; the defaults fit in about a minute on 2 cores.
type Options struct {
	Binary    string        // path to an infrarust binary; empty = in-process proxy
	BulkTime  time.Duration // per bulk measurement
	Streams   int           // parallel streams for the "many" bulk case
	RTTCount  int           // round trips per latency measurement (upper bound)
	RTTTime   time.Duration // time bound per latency measurement
	RTTSize   int           // message size in bytes
	StormTime time.Duration // per status/login storm
	Clients   int           // concurrent storm clients
	Sessions  int           // idle sessions for the memory figure
	Rounds    int           // repeat each throughput/storm pair, keep the median
	Only      map[string]bool
	Logf      func(format string, args ...any)
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
		Sessions: 10000, Rounds: 1,
	}
}

// Row is one line of the table: the same workload direct and through the proxy.
type Row struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"`
	Direct float64 `json:"direct"`
	Proxy  float64 `json:"proxy"`
	// Ratio is proxy/direct for rates, or proxy-direct (added) for latencies.
	Ratio  float64 `json:"ratio"`
	Added  bool    `json:"added,omitempty"`
	Errors int64   `json:"errors,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// Memory is the idle-session figure.
type Memory struct {
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
	Mode    string  `json:"mode"`
	Rows    []Row   `json:"rows"`
	Memory  *Memory `json:"memory,omitempty"`
	Started string  `json:"started"`
	Seconds float64 `json:"seconds"`
}

func (o Options) want(name string) bool { return len(o.Only) == 0 || o.Only[name] }

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// Run measures every selected workload, baseline first, then through the proxy.
func Run(o Options) (*Result, error) {
	start := time.Now()
	res := &Result{Mode: "in-process", Started: start.UTC().Format(time.RFC3339)}
	if o.Binary != "" {
		res.Mode = "binary " + o.Binary
	}
	be, err := startBackend()
	if err != nil {
		return nil, err
	}
	defer be.Close()
	open := func(cacheTTL time.Duration) (target, error) {
		if o.Binary != "" {
			return startBinary(o.Binary, be.Addr(), cacheTTL)
		}
		return startInProcess(be.Addr(), cacheTTL)
	}
	px, err := open(5 * time.Second)
	if err != nil {
		return nil, err
	}
	defer func() { px.Close() }()
	direct, via := be.Addr(), px.Addr()

	rate := func(name, unit string, f func(addr string) (float64, int64, error)) error {
		if !o.want(name) {
			return nil
		}
		var ds, ps []float64
		var errs int64
		for r := 0; r < max(o.Rounds, 1); r++ {
			d, e1, err := f(direct)
			if err != nil {
				return fmt.Errorf("%s direct: %w", name, err)
			}
			if o.BeforeWorkload != nil {
				o.BeforeWorkload(name)
			}
			p, e2, err := f(via)
			if o.AfterWorkload != nil {
				o.AfterWorkload(name)
			}
			if err != nil {
				return fmt.Errorf("%s via proxy: %w", name, err)
			}
			ds, ps, errs = append(ds, d), append(ps, p), errs+e1+e2
		}
		d, p := median(ds), median(ps)
		res.Rows = append(res.Rows, Row{Name: name, Unit: unit, Direct: d, Proxy: p, Ratio: p / d, Errors: errs})
		o.logf("%-24s direct %12.1f  proxy %12.1f %s  ratio %.3f", name, d, p, unit, p/d)
		return nil
	}
	mib := func(f func(string) (float64, error)) func(string) (float64, int64, error) {
		return func(a string) (float64, int64, error) {
			v, err := f(a)
			return v / (1 << 20), 0, err
		}
	}
	steps := []struct {
		name, unit string
		f          func(string) (float64, int64, error)
	}{
		{"bulk-up-1", "MiB/s", mib(func(a string) (float64, error) { return bulkUp(a, 1, o.BulkTime) })},
		{"bulk-down-1", "MiB/s", mib(func(a string) (float64, error) { return bulkDown(a, 1, o.BulkTime) })},
		{fmt.Sprintf("bulk-up-%d", o.Streams), "MiB/s", mib(func(a string) (float64, error) { return bulkUp(a, o.Streams, o.BulkTime) })},
		{fmt.Sprintf("bulk-down-%d", o.Streams), "MiB/s", mib(func(a string) (float64, error) { return bulkDown(a, o.Streams, o.BulkTime) })},
	}
	for _, s := range steps {
		if err := rate(s.name, s.unit, s.f); err != nil {
			return res, err
		}
	}

	if o.want("rtt") {
		d, err := rtt(direct, o.RTTSize, o.RTTCount, o.RTTTime)
		if err != nil {
			return res, fmt.Errorf("rtt direct: %w", err)
		}
		p, err := rtt(via, o.RTTSize, o.RTTCount, o.RTTTime)
		if err != nil {
			return res, fmt.Errorf("rtt via proxy: %w", err)
		}
		for _, x := range []struct {
			n    string
			d, p float64
		}{{"rtt-p50", d.P50, p.P50}, {"rtt-p99", d.P99, p.P99}, {"rtt-p99.9", d.P999, p.P999}} {
			res.Rows = append(res.Rows, Row{Name: x.n, Unit: "µs", Direct: x.d, Proxy: x.p, Ratio: x.p - x.d, Added: true,
				Note: fmt.Sprintf("%d-byte echo, %d/%d samples", o.RTTSize, d.Samples, p.Samples)})
			o.logf("%-24s direct %10.1f  proxy %10.1f µs  added %+.1f µs", x.n, x.d, x.p, x.p-x.d)
		}
	}

	stormRate := func(cycle func(string) func(*bufio.Reader) error) func(string) (float64, int64, error) {
		return func(a string) (float64, int64, error) { return storm(o.Clients, o.StormTime, cycle(a)) }
	}
	if err := rate(fmt.Sprintf("status-cache-on-%d", o.Clients), "cycles/s", stormRate(statusCycle)); err != nil {
		return res, err
	}
	if o.want(fmt.Sprintf("status-cache-off-%d", o.Clients)) {
		px.Close()
		if px, err = open(0); err != nil {
			return res, err
		}
		via = px.Addr()
		if err := rate(fmt.Sprintf("status-cache-off-%d", o.Clients), "cycles/s", stormRate(statusCycle)); err != nil {
			return res, err
		}
	}
	if err := rate(fmt.Sprintf("login-%d", o.Clients), "cycles/s", stormRate(loginCycle)); err != nil {
		return res, err
	}

	if o.want("memory") && o.Sessions > 0 {
		m, err := memory(o, direct, px)
		res.Memory = m
		if err != nil {
			return res, fmt.Errorf("memory: %w", err)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

type snapshot struct {
	rss, goMem, stack int64
	goroutines, fds   int
}

func snap() snapshot {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, _ := rssOf("self")
	return snapshot{rss: rss, goMem: int64(ms.HeapInuse + ms.StackInuse), stack: int64(ms.StackInuse), goroutines: runtime.NumGoroutine(), fds: countFDs()}
}

// openIdle opens n idle sessions to addr with 64 dialers.
func openIdle(addr string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr errOnce
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.get() != nil {
					return
				}
				c, err := openSession(addr, cmdIdle)
				if err != nil {
					firstErr.set(err)
					return
				}
				conns[i] = c
			}
		}()
	}
	wg.Wait()
	if err := firstErr.get(); err != nil {
		closeAll(conns)
		return nil, err
	}
	return conns, nil
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// settle waits (bounded) until the goroutine count is back to at most want.
func settle(want int, limit time.Duration) int {
	end := time.Now().Add(limit)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(end) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func memory(o Options, direct string, px target) (*Memory, error) {
	m := &Memory{Sessions: o.Sessions}
	limit, err := RaiseFileLimit()
	if err != nil {
		m.Note = "could not raise RLIMIT_NOFILE: " + err.Error() + "; "
	}
	// client, backend, the proxy's two sockets and its two splice pipes (4 fds):
	// all in this process.
	perSession := uint64(8)
	if o.Binary != "" {
		perSession = 6 // the child inherits our limit and needs 2 sockets + 2 pipes per session
	}
	if fit := int((limit - 512) / perSession); limit > 512 && fit < m.Sessions {
		m.Note += fmt.Sprintf("RLIMIT_NOFILE hard limit %d allows %d fds per session × %d sessions; scaled down from %d. ", limit, perSession, fit, m.Sessions)
		m.Sessions = fit
	}
	n := m.Sessions

	// Baseline: the same idle sessions straight to the backend (client + backend cost).
	base := snap()
	baseDirect := base
	conns, err := openIdle(direct, n)
	if err != nil {
		return m, fmt.Errorf("direct sessions: %w", err)
	}
	withDirect := snap()
	closeAll(conns)
	settle(base.goroutines, 10*time.Second)

	base = snap()
	var pxBase int64
	pxBase, hasRSS := px.RSS()
	fdBase, _ := px.FDs()
	conns, err = openIdle(px.Addr(), n)
	if err != nil {
		return m, fmt.Errorf("proxied sessions: %w", err)
	}
	open := snap()
	pxOpen, _ := px.RSS()
	if o.WhileOpen != nil {
		o.WhileOpen()
	}
	m.GoroutinesBefore, m.GoroutinesOpen = base.goroutines, open.goroutines
	directRSS := float64(withDirect.rss-base.rss) / float64(n)
	directGo := float64(withDirect.goMem-base.goMem) / float64(n)
	directG := withDirect.goroutines - base.goroutines
	m.DirectRSSPerSess = directRSS
	if hasRSS {
		m.ProxyRSSPerSess = float64(pxOpen-pxBase) / float64(n)
		fdOpen, _ := px.FDs()
		m.ProxyFDsPerSess = float64(fdOpen-fdBase) / float64(n)
	} else {
		// In-process: the proxy's share is what proxied sessions cost beyond direct ones.
		m.ProxyRSSPerSess = float64(open.rss-base.rss)/float64(n) - directRSS
		m.ProxyGoPerSess = float64(open.goMem-base.goMem)/float64(n) - directGo
		m.ProxyStackPerSess = float64(open.stack-base.stack)/float64(n) - float64(withDirect.stack-baseDirect.stack)/float64(n)
		m.ProxyFDsPerSess = float64(open.fds-base.fds-(withDirect.fds-baseDirect.fds)) / float64(n)
		m.ProxyGoroutines = (open.goroutines - base.goroutines - directG) * 100 / n
	}
	closeAll(conns)
	m.GoroutinesAfter = settle(base.goroutines, 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	after := snap()
	m.GoroutinesAfter = after.goroutines
	m.ActiveAfter = px.Active()
	m.HeapAfterDeltaKiB = float64(after.goMem-base.goMem) / 1024
	m.RSSAfterDeltaKiB = float64(after.rss-base.rss) / 1024
	if hasRSS {
		pxAfter, _ := px.RSS()
		m.RSSAfterDeltaKiB = float64(pxAfter-pxBase) / 1024
		// Go's splice pipe pool keeps idle pipes until two GCs; they are not sessions.
		all, pipes := px.FDs()
		m.ProxyFDsAfter = all - pipes - fdBase
		m.PooledPipeFDs = pipes
	}
	o.logf("memory: %d sessions, proxy %.0f B/session RSS, %.0f B/session Go heap+stack (%.0f stack), goroutines %d -> %d -> %d",
		n, m.ProxyRSSPerSess, m.ProxyGoPerSess, m.ProxyStackPerSess, m.GoroutinesBefore, m.GoroutinesOpen, m.GoroutinesAfter)
	return m, nil
}

func countFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}
