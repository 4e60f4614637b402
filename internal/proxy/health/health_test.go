package health

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/proxy/balance"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// fakeClock only moves when the test advances it; every After call is announced on registered.
type fakeClock struct {
	mu         sync.Mutex
	now        time.Time
	waiters    []waiter
	registered chan time.Duration
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, registered: make(chan time.Duration, 1024)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	if d <= 0 {
		ch <- c.now
	} else {
		c.waiters = append(c.waiters, waiter{c.now.Add(d), ch})
	}
	c.mu.Unlock()
	c.registered <- d
	return ch
}

// Advance moves time and fires due timers; it reports whether any fired.
func (c *fakeClock) Advance(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	fired := false
	keep := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
			fired = true
		} else {
			keep = append(keep, w)
		}
	}
	c.waiters = keep
	return fired
}

func (c *fakeClock) Set(now time.Time) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}

// ejectedPool builds a pool whose listed addresses are ejected at `at` with a 1ms backoff, so every
// sweep after `at` finds them due again as long as probes keep failing.
func ejectedPool(t *testing.T, at time.Time, healthy []string, ejected ...string) *balance.Pool {
	t.Helper()
	var addrs []balance.Address
	for _, a := range append(append([]string{}, ejected...), healthy...) {
		addrs = append(addrs, balance.Address{Address: a, Weight: 4})
	}
	p := balance.NewPool(balance.Options{
		Strategy:      balance.RoundRobin,
		ActiveProbing: true,
		SlowStart:     time.Minute,
		BackoffBase:   time.Millisecond,
		BackoffMax:    time.Millisecond,
	}, addrs, at)
	for _, a := range ejected {
		for range 3 {
			var tried []string
			for _, o := range addrs {
				if o.Address != a {
					tried = append(tried, o.Address)
				}
			}
			l, ok := p.Acquire(at, tried)
			if !ok || l.Address() != a {
				t.Fatalf("could not lease %s", a)
			}
			l.Failed(at, "refused")
		}
	}
	return p
}

func health(p *balance.Pool, addr string, now time.Time) balance.BackendStatus {
	for _, s := range p.Snapshot(now) {
		if s.Address == addr {
			return s
		}
	}
	return balance.BackendStatus{}
}

// countingProbe fails every address in down and counts probes per address.
type countingProbe struct {
	mu    sync.Mutex
	n     map[string]int
	down  map[string]bool
	kinds map[Kind]int
}

func newCountingProbe(down ...string) *countingProbe {
	c := &countingProbe{n: map[string]int{}, down: map[string]bool{}, kinds: map[Kind]int{}}
	for _, d := range down {
		c.down[d] = true
	}
	return c
}

func (c *countingProbe) probe(_ context.Context, _ string, kind Kind, addr string) (time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[addr]++
	c.kinds[kind]++
	if c.down[addr] {
		return 0, errors.New("connection refused")
	}
	return 2 * time.Millisecond, nil
}

func (c *countingProbe) count(addr string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[addr]
}

func TestPerServerIntervals(t *testing.T) {
	before := t0.Add(-time.Second)
	poolA := ejectedPool(t, before, nil, "a1")
	poolB := ejectedPool(t, before, nil, "b1")
	poolC := ejectedPool(t, before, []string{"c1"})
	poolD := ejectedPool(t, before, nil, "d1")
	poolE := ejectedPool(t, before, []string{"e1"}, "e2")
	cp := newCountingProbe("a1", "b1", "d1", "e2")
	clk := newFakeClock(t0)
	pr := New(cp.probe, 8, clk)
	pr.SetTargets([]Target{
		{Server: "a", Pool: poolA, Config: Config{Enabled: true, UnhealthyInterval: 2 * time.Second}},
		{Server: "b", Pool: poolB, Config: Config{Enabled: true, UnhealthyInterval: 5 * time.Second, Kind: KindStatusPing}},
		{Server: "c", Pool: poolC, Config: Config{Enabled: true, UnhealthyInterval: 10 * time.Second, ProbeHealthy: true, Interval: 3 * time.Second}},
		{Server: "d", Pool: poolD, Config: Config{Enabled: false, UnhealthyInterval: time.Second}},
		// Sub-second intervals are floored at MinWake; probe_healthy off leaves e1 alone.
		{Server: "e", Pool: poolE, Config: Config{Enabled: true, UnhealthyInterval: 100 * time.Millisecond, Interval: 100 * time.Millisecond}},
	})
	ctx := context.Background()
	for s := 0; s <= 10; s++ {
		now := t0.Add(time.Duration(s) * time.Second)
		clk.Set(now)
		pr.Tick(ctx, now)
		pr.Wait()
	}
	tests := []struct {
		addr string
		want int
	}{
		{"a1", 6}, // 0 2 4 6 8 10
		{"b1", 3}, // 0 5 10
		{"c1", 4}, // 0 3 6 9: healthy probing on its own interval
		{"d1", 0}, // disabled
		{"e1", 0}, // healthy, probe_healthy off
		{"e2", 11},
	}
	for _, tt := range tests {
		if got := cp.count(tt.addr); got != tt.want {
			t.Errorf("%s probed %d times, want %d", tt.addr, got, tt.want)
		}
	}
	if cp.kinds[KindStatusPing] != 3 {
		t.Errorf("status_ping probes = %d, want 3 (server b's kind)", cp.kinds[KindStatusPing])
	}
	if st := health(poolA, "a1", t0.Add(10*time.Second)); st.Health != balance.StateUnhealthy {
		t.Errorf("failed probes must leave a1 unhealthy, got %s", st.Health)
	}
}

func TestResultsFeedThePool(t *testing.T) {
	before := t0.Add(-time.Second)
	pool := ejectedPool(t, before, []string{"ok"}, "back")
	cp := newCountingProbe()
	pr := New(cp.probe, 0, newFakeClock(t0))
	pr.SetTargets([]Target{{Server: "s", Pool: pool, Config: Config{Enabled: true}}})
	if got := health(pool, "back", t0).Health; got != balance.StateUnhealthy {
		t.Fatalf("setup: back is %s", got)
	}
	if n := pr.Tick(context.Background(), t0); n != 1 {
		t.Fatalf("Tick started %d probes, want 1", n)
	}
	pr.Wait()
	st := health(pool, "back", t0)
	if st.Health != balance.StateHealthy || st.ProbeLatency != 2*time.Millisecond {
		t.Errorf("after a successful probe: %+v, want healthy", st)
	}
	if st.EffectiveWeight >= 4 {
		t.Errorf("recovered address must ramp up in slow start, weight %v", st.EffectiveWeight)
	}
}

func TestMaxConcurrent(t *testing.T) {
	before := t0.Add(-time.Second)
	var (
		cur, peak atomic.Int32
		release   = make(chan struct{})
		started   = make(chan string, 100)
	)
	probe := func(ctx context.Context, _ string, _ Kind, addr string) (time.Duration, error) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		started <- addr
		<-release
		return time.Millisecond, nil
	}
	p1 := ejectedPool(t, before, nil, "a", "b", "c")
	p2 := ejectedPool(t, before, nil, "d", "e", "f")
	pr := New(probe, 4, newFakeClock(t0))
	pr.SetTargets([]Target{
		{Server: "one", Pool: p1, Config: Config{Enabled: true, UnhealthyInterval: time.Second}},
		{Server: "two", Pool: p2, Config: Config{Enabled: true, UnhealthyInterval: time.Second}},
	})
	ctx := context.Background()
	if n := pr.Tick(ctx, t0); n != 4 {
		t.Fatalf("first sweep started %d, want 4 (max_concurrent)", n)
	}
	if n := pr.Tick(ctx, t0.Add(time.Second)); n != 0 {
		t.Fatalf("sweep with every slot busy started %d, want 0", n)
	}
	close(release)
	pr.Wait()
	if n := pr.Tick(ctx, t0.Add(2*time.Second)); n != 2 {
		t.Fatalf("the sweep cut short must continue: started %d, want 2", n)
	}
	pr.Wait()
	if got := peak.Load(); got > 4 {
		t.Errorf("peak concurrency %d > max_concurrent 4", got)
	}
	if len(started) != 6 {
		t.Errorf("probed %d addresses, want 6", len(started))
	}
	for _, pool := range []*balance.Pool{p1, p2} {
		for _, st := range pool.Snapshot(t0.Add(2 * time.Second)) {
			if st.Health != balance.StateHealthy {
				t.Errorf("%s is %s, want healthy after its probe", st.Address, st.Health)
			}
		}
	}
}

func TestRunWakesAtMostOncePerSecond(t *testing.T) {
	before := t0.Add(-time.Second)
	pool := ejectedPool(t, before, nil, "a")
	cp := newCountingProbe("a")
	clk := newFakeClock(t0)
	pr := New(cp.probe, 2, clk)
	var (
		mu    sync.Mutex
		ticks []time.Time
	)
	pr.onTick = func(now time.Time) {
		mu.Lock()
		ticks = append(ticks, now)
		mu.Unlock()
	}
	targets := []Target{{Server: "s", Pool: pool, Config: Config{Enabled: true, UnhealthyInterval: 100 * time.Millisecond, ProbeHealthy: true, Interval: 50 * time.Millisecond}}}
	pr.SetTargets(targets)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pr.Run(ctx)
	}()
	if d := <-clk.registered; d != MinWake {
		t.Errorf("first wait = %v, want %v", d, MinWake)
	}
	// A reload inside the second re-plans but does not sweep.
	pr.SetTargets(targets)
	<-clk.registered
	for range 50 {
		if clk.Advance(100 * time.Millisecond) {
			<-clk.registered
		}
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(ticks) != 6 {
		t.Errorf("ticks over 5s = %d (%v), want 6", len(ticks), ticks)
	}
	for i := 1; i < len(ticks); i++ {
		if gap := ticks[i].Sub(ticks[i-1]); gap < MinWake {
			t.Errorf("ticks %d and %d only %v apart", i-1, i, gap)
		}
	}
}

func TestRunWakesOnShortestInterval(t *testing.T) {
	clk := newFakeClock(t0)
	pr := New(newCountingProbe().probe, 2, clk)
	pool := balance.NewPool(balance.Options{ActiveProbing: true}, []balance.Address{{Address: "x", Weight: 1}}, t0)
	pr.SetTargets([]Target{
		{Server: "slow", Pool: pool, Config: Config{Enabled: true, UnhealthyInterval: 30 * time.Second}},
		{Server: "fast", Pool: pool, Config: Config{Enabled: true, UnhealthyInterval: 7 * time.Second}},
		{Server: "off", Pool: pool, Config: Config{Enabled: false, UnhealthyInterval: 2 * time.Second}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pr.Run(ctx)
	}()
	if d := <-clk.registered; d != 7*time.Second {
		t.Errorf("wait = %v, want 7s (shortest enabled interval)", d)
	}
	cancel()
	<-done

	// With nothing enabled the prober sleeps until a reload.
	idle := New(newCountingProbe().probe, 1, newFakeClock(t0))
	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() {
		defer close(done)
		idle.Run(ctx)
	}()
	cancel()
	<-done
}

func TestRunWaitsForProbesOnShutdown(t *testing.T) {
	pool := ejectedPool(t, t0.Add(-time.Second), nil, "a")
	inProbe := make(chan struct{})
	var finished atomic.Bool
	probe := func(ctx context.Context, _ string, _ Kind, _ string) (time.Duration, error) {
		close(inProbe)
		<-ctx.Done()
		finished.Store(true)
		return 0, ctx.Err()
	}
	pr := New(probe, 1, newFakeClock(t0))
	pr.SetTargets([]Target{{Server: "s", Pool: pool, Config: Config{Enabled: true, Timeout: time.Hour}}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pr.Run(ctx)
	}()
	<-inProbe
	cancel()
	<-done
	if !finished.Load() {
		t.Error("Run returned before its probe finished")
	}
	// A probe cut short by shutdown is not held against the backend.
	if st := health(pool, "a", t0); st.Health != balance.StateProbing || st.Ejections != 1 {
		t.Errorf("shutdown probe was fed back: %+v", st)
	}
	if n := pr.Tick(ctx, t0); n != 0 {
		t.Errorf("Tick after shutdown started %d probes", n)
	}
}

var errAny = errors.New("any error")

// An address that failed at the Minecraft level (accepted TCP, never answered a
// login) is probed with a status ping even when the server's probe kind is tcp:
// a TCP connect would readmit a frozen server at every backoff window.
func TestProtocolFailureIsProbedWithStatusPing(t *testing.T) {
	before := t0.Add(-time.Second)
	pool := ejectedPool(t, before, []string{"ok"}, "refused")
	frozen := balance.Address{Address: "frozen", Weight: 1}
	pool.Update(balance.Options{Strategy: balance.FirstAvailable, ActiveProbing: true, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond},
		[]balance.Address{{Address: "refused", Weight: 4}, {Address: "ok", Weight: 4}, frozen}, before)
	l, ok := pool.Acquire(before, []string{"refused", "ok"})
	if !ok || l.Address() != "frozen" {
		t.Fatalf("could not lease frozen: %v", ok)
	}
	l.Unresponsive(before, "no login answer")
	if got := health(pool, "frozen", t0).Health; got != balance.StateUnhealthy {
		t.Fatalf("one unresponsive login must eject at once; frozen is %s", got)
	}
	var mu sync.Mutex
	kinds := map[string]Kind{}
	probe := func(_ context.Context, _ string, kind Kind, addr string) (time.Duration, error) {
		mu.Lock()
		kinds[addr] = kind
		mu.Unlock()
		return time.Millisecond, nil
	}
	pr := New(probe, 0, newFakeClock(t0))
	pr.SetTargets([]Target{{Server: "s", Pool: pool, Config: Config{Enabled: true, Kind: KindTCP}}})
	pr.Tick(context.Background(), t0)
	pr.Wait()
	if kinds["frozen"] != KindStatusPing || kinds["refused"] != KindTCP {
		t.Fatalf("probe kinds %v: the frozen address needs a status ping, the refused one a tcp probe", kinds)
	}
	if pool.NeedsProtocolProof("frozen") {
		t.Fatal("a successful status ping must clear the need for proof")
	}
}

func TestParseKind(t *testing.T) {
	for in, want := range map[string]Kind{"": KindTCP, "tcp": KindTCP, "STATUS_PING": KindStatusPing} {
		if got, err := ParseKind(in); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseKind("http"); err == nil {
		t.Error("ParseKind(http) should fail")
	}
}
