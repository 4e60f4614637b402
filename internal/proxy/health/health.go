// Package health runs the active prober: one goroutine for every server that probes ejected
// addresses (and, when asked, healthy ones) and feeds the results into each server's balance.Pool,
// so the recovery attempt after a backoff is paid by a probe instead of a player.
package health

import (
	"context"
	"github.com/infrarust-go/infrarust/internal/config"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// Kind selects how an address is probed (the configuration owns the vocabulary).
type Kind = config.HealthKind

// The kinds.
const (
	KindTCP        = config.HealthTCP
	KindStatusPing = config.HealthStatusPing
)

// ParseKind validates the `kind` config key; empty means tcp.
func ParseKind(s string) (Kind, error) { return config.ParseHealthKind(s) }

// Defaults used when a Config field is zero, matching the documented [active_health] block.
const (
	// DefaultUnhealthyInterval is how often ejected addresses are looked at.
	DefaultUnhealthyInterval = 10 * time.Second
	// DefaultInterval is how often healthy addresses are probed when probe_healthy is on.
	DefaultInterval = 30 * time.Second
	// DefaultTimeout bounds one probe so a black-holed address cannot hold a slot.
	DefaultTimeout = 3 * time.Second
	// DefaultMaxConcurrent caps probes in flight so a mass outage does not flood the network.
	DefaultMaxConcurrent = 8
)

// MinWake is the floor on how often the prober wakes, whatever the configured intervals.
const MinWake = time.Second

// Config is one server's effective [active_health] block (the global one or its override).
type Config struct {
	// Enabled turns probing on for this server.
	Enabled bool
	// Kind is tcp or status_ping (empty: tcp).
	Kind Kind
	// UnhealthyInterval is how often this server's ejected addresses are checked for a due recovery probe.
	UnhealthyInterval time.Duration
	// Interval is how often a healthy address is probed when ProbeHealthy is set.
	Interval time.Duration
	// Timeout bounds one probe.
	Timeout time.Duration
	// ProbeHealthy also probes healthy addresses, so a backend that dies without traffic is noticed.
	ProbeHealthy bool
}

func (c Config) normalized() Config {
	if c.Kind == "" {
		c.Kind = KindTCP
	}
	if c.UnhealthyInterval <= 0 {
		c.UnhealthyInterval = DefaultUnhealthyInterval
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// sweep is how often this server needs a look: its unhealthy interval, or its healthy interval when
// that is shorter and healthy probing is on; never below MinWake.
func (c Config) sweep() time.Duration {
	d := c.UnhealthyInterval
	if c.ProbeHealthy {
		d = min(d, c.Interval)
	}
	return max(d, MinWake)
}

// Target is one server the prober watches.
type Target struct {
	// Server is the server id; it keys the prober's per-server schedule across reloads.
	Server string
	// Pool receives the probe results.
	Pool *balance.Pool
	// Config is the server's effective probing config.
	Config Config
}

// ProbeFunc checks one address of server; err == nil means healthy. It must honour
// ctx (the probe timeout) and speak to the backend exactly as the proxy does for
// players (e.g. the PROXY header a server asks for), which is why it is told the server.
type ProbeFunc func(ctx context.Context, server string, kind Kind, addr string) (latency time.Duration, err error)

// Clock lets tests drive the prober's schedule without sleeping.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

// Now is wall-clock time.
func (realClock) Now() time.Time { return time.Now() }

// After is time.After; unreferenced timers are collected since Go 1.23, so abandoned waits do not leak.
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Prober drives every server's active health checks from one goroutine.
type Prober struct {
	probe ProbeFunc
	clock Clock
	slots chan struct{} // one token per probe in flight, across every server

	mu        sync.Mutex
	targets   []Target
	lastSweep map[string]time.Time // by server
	offset    int                  // rotates which server goes first when slots run out
	reload    chan struct{}
	onTick    func(time.Time) // test hook

	wg sync.WaitGroup // probes in flight
}

// New builds a prober. maxConcurrent caps probes in flight across all servers (<= 0: 8); a nil
// clock means real time.
func New(probe ProbeFunc, maxConcurrent int, clock Clock) *Prober {
	if maxConcurrent <= 0 {
		maxConcurrent = DefaultMaxConcurrent
	}
	if clock == nil {
		clock = realClock{}
	}
	return &Prober{
		probe:     probe,
		clock:     clock,
		slots:     make(chan struct{}, maxConcurrent),
		lastSweep: map[string]time.Time{},
		reload:    make(chan struct{}, 1),
	}
}

// SetTargets replaces the watched servers on a config reload; servers that stay keep their schedule.
func (p *Prober) SetTargets(ts []Target) {
	p.mu.Lock()
	p.targets = make([]Target, len(ts))
	keep := make(map[string]time.Time, len(ts))
	for i, t := range ts {
		t.Config = t.Config.normalized()
		p.targets[i] = t
		if last, ok := p.lastSweep[t.Server]; ok {
			keep[t.Server] = last
		}
	}
	p.lastSweep = keep
	p.mu.Unlock()
	select {
	case p.reload <- struct{}{}:
	default:
	}
}

// Run probes until ctx is done, then waits for the probes in flight. It wakes when the earliest
// server is due, never more than once per MinWake.
func (p *Prober) Run(ctx context.Context) {
	defer p.wg.Wait()
	select { // the first sweep below already sees the current targets
	case <-p.reload:
	default:
	}
	var last time.Time
	for {
		now := p.clock.Now()
		if last.IsZero() || now.Sub(last) >= MinWake {
			p.Tick(ctx, now)
			last = now
		}
		var wake <-chan time.Time
		if next, ok := p.nextDue(); ok {
			next = later(next, last.Add(MinWake))
			wake = p.clock.After(next.Sub(p.clock.Now()))
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-p.reload:
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// nextDue is when the earliest enabled server wants its next sweep; ok is false when none is enabled.
func (p *Prober) nextDue() (next time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.targets {
		if !t.Config.Enabled || t.Pool == nil {
			continue
		}
		due := p.lastSweep[t.Server].Add(t.Config.sweep()) // zero last: due long ago
		if !ok || due.Before(next) {
			next, ok = due, true
		}
	}
	return next, ok
}

// Tick runs one sweep at now: every enabled server whose sweep interval elapsed hands over its due
// addresses (balance.Pool.DueForProbeLimit) and each gets a probe, with at most maxConcurrent probes
// in flight overall. It does not wait for the probes and returns how many it started. A server cut
// short for lack of slots stays due, so the next wake (MinWake later) continues it.
func (p *Prober) Tick(ctx context.Context, now time.Time) int {
	if ctx.Err() != nil {
		return 0
	}
	p.mu.Lock()
	ts := p.targets
	start := p.offset
	if len(ts) > 0 {
		p.offset = (p.offset + 1) % len(ts)
	}
	hook := p.onTick
	p.mu.Unlock()
	if hook != nil {
		hook(now)
	}

	started := 0
	for k := range ts {
		t := ts[(start+k)%len(ts)]
		if !t.Config.Enabled || t.Pool == nil {
			continue
		}
		p.mu.Lock()
		last, seen := p.lastSweep[t.Server]
		p.mu.Unlock()
		if seen && now.Sub(last) < t.Config.sweep() {
			continue
		}
		free := p.grabSlots()
		if free == 0 {
			break
		}
		due := t.Pool.DueForProbeLimit(now, t.Config.ProbeHealthy, t.Config.Interval, free)
		for range free - len(due) {
			<-p.slots
		}
		if len(due) < free { // the server is done for this interval
			p.mu.Lock()
			p.lastSweep[t.Server] = now
			p.mu.Unlock()
		}
		for _, addr := range due {
			p.wg.Add(1)
			go p.run(ctx, t, addr)
		}
		started += len(due)
	}
	return started
}

// grabSlots takes every free probe slot without blocking.
func (p *Prober) grabSlots() int {
	n := 0
	for {
		select {
		case p.slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
}

func (p *Prober) run(ctx context.Context, t Target, addr string) {
	defer p.wg.Done()
	defer func() { <-p.slots }()
	pool := t.Pool
	kind := t.Config.Kind
	if pool.NeedsProtocolProof(addr) {
		// It failed at the Minecraft level: a TCP connect proves nothing there.
		kind = KindStatusPing
	}
	pctx, cancel := context.WithTimeout(ctx, t.Config.Timeout)
	latency, err := p.probe(pctx, t.Server, kind, addr)
	cancel()
	if ctx.Err() != nil {
		return // shutting down: the failure is ours, not the backend's
	}
	pool.ProbeResult(addr, err == nil, latency, p.clock.Now())
}

// Wait blocks until every probe started so far has reported, for tests and graceful shutdown.
func (p *Prober) Wait() { p.wg.Wait() }
