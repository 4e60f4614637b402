package balance

import (
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLeaseAccounting(t *testing.T) {
	p := NewPool(Options{}, weighted(1), t0)
	check := func(step string, active, inflight int) {
		t.Helper()
		st := status(t, p, "a", t0)
		if st.Active != active || st.Inflight != inflight {
			t.Errorf("%s: active=%d inflight=%d, want %d %d", step, st.Active, st.Inflight, active, inflight)
		}
	}
	l, _ := p.Acquire(t0, nil)
	check("acquired", 0, 1)
	l.Connected(t0, 0)
	check("connected", 1, 0)
	l.Connected(t0, 0)
	check("connected twice", 1, 0)
	l.Release(t0)
	l.Release(t0)
	check("released twice", 0, 0)

	l, _ = p.Acquire(t0, nil)
	l.Failed(t0, "x")
	l.Release(t0)
	l.Failed(t0, "x") // no second failure counted
	check("failed then released", 0, 0)
	l, _ = p.Acquire(t0, nil)
	l.Failed(t0, "x")
	if st := status(t, p, "a", t0); st.Health != StateHealthy {
		t.Error("two counted failures must not eject; a repeated Failed call was counted")
	}

	for range 5 {
		l, _ = p.Acquire(t0, nil)
		l.Skipped(t0)
		l.Release(t0)
	}
	check("skipped", 0, 0)
	if st := status(t, p, "a", t0); st.Health != StateHealthy {
		t.Error("Skipped must have no health effect")
	}

	var zero Lease
	zero.Release(t0) // a zero lease is inert
	zero.Connected(t0, 0)

	var into Lease
	if !p.AcquireInto(&into, t0, nil) {
		t.Fatal("AcquireInto failed")
	}
	check("AcquireInto", 0, 1)
	p.AcquireInto(&into, t0, nil) // releases the previous lease first
	check("AcquireInto reused", 0, 1)
	into.Release(t0)
	check("released", 0, 0)
}

func TestUpdateKeepsState(t *testing.T) {
	p := NewPool(Options{Strategy: LeastConn, SlowStart: time.Minute}, weighted(1, 1, 1), t0)
	ejectNow(t, p, "a", t0)
	p.SetDrain("b", true, t0)
	lb := leaseOn(t, p, "b", t0) // drained b is only reachable as a last resort
	lb.Release(t0)
	lc := leaseOn(t, p, "c", t0)
	lc.Connected(t0, 7*time.Millisecond)
	before := status(t, p, "a", t0)

	now := t0.Add(10 * time.Second)
	p.Update(Options{Strategy: RoundRobin, SlowStart: time.Minute}, []Address{
		{Address: "a", Weight: 5},
		{Address: "b", Weight: 2},
		{Address: "d", Weight: 3, Priority: 1},
		{Address: "d", Weight: 9}, // duplicate: first wins
	}, now)
	snap := p.Snapshot(now)
	if len(snap) != 3 || snap[0].Address != "a" || snap[1].Address != "b" || snap[2].Address != "d" {
		t.Fatalf("snapshot after update = %+v", snap)
	}
	if snap[0].Health != StateUnhealthy || !snap[0].NextProbe.Equal(before.NextProbe) || snap[0].Ejections != 1 || snap[0].Weight != 5 {
		t.Errorf("a lost its health record: %+v", snap[0])
	}
	if !snap[1].Drained || snap[1].Weight != 2 {
		t.Errorf("b lost its drain: %+v", snap[1])
	}
	if snap[2].Health != StateUnknown || snap[2].EffectiveWeight != 3 || snap[2].Priority != 1 {
		t.Errorf("new address d: %+v, want unknown at full weight", snap[2])
	}
	if p.Strategy() != RoundRobin {
		t.Errorf("strategy = %s", p.Strategy())
	}
	lc.Release(now) // a lease on a removed address is harmless
	lc.Failed(now, "late")
	// Counts survive a reload.
	la := leaseOn(t, p, "d", now)
	la.Connected(now, 0)
	p.Update(Options{Strategy: RoundRobin}, []Address{{Address: "d", Weight: 3}}, now)
	if st := status(t, p, "d", now); st.Active != 1 {
		t.Errorf("active count lost across reload: %+v", st)
	}
}

func TestStatusOrder(t *testing.T) {
	rec := &recorder{}
	p := NewPool(Options{Strategy: RoundRobin, OnChange: rec.on}, weighted(1, 1, 1, 1, 1), t0)
	ejectNow(t, p, "a", t0)
	ejectNow(t, p, "b", t0.Add(10*time.Second))
	p.SetDrain("c", true, t0)
	p.ReportStatus("d", 10, 10, t0)
	rec.take()
	now := t0.Add(35 * time.Second) // a is due (30s), b is not (due at 40s)
	got := p.StatusOrder(now)
	if want := []string{"e", "d", "a", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("StatusOrder = %v, want %v (room, full, due, drained, not due)", got, want)
	}
	// Pings take no lease, advance no rotation and never steal a recovery attempt.
	for range 10 {
		p.StatusOrder(now)
	}
	if evs := rec.take(); len(evs) != 0 {
		t.Errorf("StatusOrder caused transitions %v", evs)
	}
	for _, st := range p.Snapshot(now) {
		if st.Inflight != 0 {
			t.Errorf("StatusOrder took a lease on %s", st.Address)
		}
	}
	l, _ := p.Acquire(now, nil)
	if l.Address() != "a" || !l.Recovery() {
		t.Errorf("recovery attempt stolen: got %s", l.Address())
	}

	q := NewPool(Options{Strategy: RoundRobin}, weighted(5, 1, 1), t0)
	var seq []string
	for range 7 {
		seq = append(seq, q.StatusOrder(t0)[0])
		seq = append(seq, picks(t, q, t0, 1)[0])
	}
	// Every status order starts with the address the next login gets.
	for i := 0; i < len(seq); i += 2 {
		if seq[i] != seq[i+1] {
			t.Errorf("status order head %s != next pick %s (step %d)", seq[i], seq[i+1], i/2)
		}
	}
	if got := strings.Join(oddOnly(seq), ""); got != "aabacaa" {
		t.Errorf("rotation disturbed by StatusOrder: %s", got)
	}
}

func oddOnly(s []string) []string {
	var out []string
	for i := 1; i < len(s); i += 2 {
		out = append(out, s[i])
	}
	return out
}

func TestProbeResults(t *testing.T) {
	rec := &recorder{}
	p := NewPool(Options{ActiveProbing: true, OnChange: rec.on}, weighted(1, 1), t0)
	confirmAll(p, t0)
	rec.take()
	// Healthy probing honours the interval.
	if got := p.DueForProbe(t0, true, 30*time.Second); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("first healthy sweep = %v", got)
	}
	if got := p.DueForProbe(t0.Add(29*time.Second), true, 30*time.Second); len(got) != 0 {
		t.Errorf("healthy probed before its interval: %v", got)
	}
	if got := p.DueForProbe(t0.Add(30*time.Second), true, 30*time.Second); len(got) != 2 {
		t.Errorf("healthy not probed after its interval: %v", got)
	}
	if got := p.DueForProbe(t0.Add(90*time.Second), false, 30*time.Second); len(got) != 0 {
		t.Errorf("probeHealthy=false still returned %v", got)
	}
	// A failed probe on a healthy address counts like a failed dial.
	for i := range 3 {
		p.ProbeResult("a", false, 0, t0.Add(time.Duration(i)*time.Second))
	}
	if got := rec.transitions(); !slices.Equal(got, []string{"a:healthy>unhealthy"}) {
		t.Errorf("events = %v", got)
	}
	// Ejected ones come first and the limit is honoured.
	now := t0.Add(40 * time.Second)
	if got := p.DueForProbeLimit(now, true, time.Second, 1); !slices.Equal(got, []string{"a"}) {
		t.Errorf("limited sweep = %v, want [a]", got)
	}
	p.ProbeResult("a", true, 3*time.Millisecond, now)
	st := status(t, p, "a", now)
	if st.Health != StateHealthy || st.ProbeLatency != 3*time.Millisecond {
		t.Errorf("after probe ok: %+v", st)
	}
	if got := rec.transitions(); !slices.Equal(got, []string{"a:unhealthy>probing", "a:probing>healthy"}) {
		t.Errorf("events = %v", got)
	}
	p.ProbeResult("gone", true, 0, now) // unknown addresses are ignored
}

func TestOnChangeOutsideLock(t *testing.T) {
	var (
		p      *Pool
		seen   []string
		states []State
	)
	p = NewPool(Options{OnChange: func(c Change) {
		// Would deadlock if called under the pool lock.
		states = append(states, p.Snapshot(c.At)[0].State)
		seen = append(seen, string(c.From)+">"+string(c.To))
		if c.To == StateUnhealthy {
			// Re-entrant state change from inside the callback: delivered after this one, in order.
			if err := p.SetDrain("a", true, c.At); err != nil {
				t.Error(err)
			}
		}
	}}, weighted(1, 1), t0)
	confirmAll(p, t0)
	seen, states = nil, nil
	done := make(chan struct{})
	go func() {
		defer close(done)
		ejectNow(t, p, "a", t0)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("OnChange deadlocked: it runs under the pool lock")
	}
	if want := []string{"healthy>unhealthy", "unhealthy>draining"}; !slices.Equal(seen, want) {
		t.Errorf("events = %v, want %v", seen, want)
	}
	if want := []State{StateUnhealthy, StateDraining}; !slices.Equal(states, want) {
		t.Errorf("states seen from the callback = %v, want %v", states, want)
	}
}

func TestConcurrentUse(t *testing.T) {
	var events sync.Map
	p := NewPool(Options{Strategy: LeastConn, SlowStart: time.Second, OnChange: func(c Change) { events.Store(c.At, c) }}, weighted(3, 2, 1, 1), t0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				now := t0.Add(time.Duration(i) * 100 * time.Millisecond)
				l, ok := p.Acquire(now, nil)
				if !ok {
					continue
				}
				switch (i + g) % 5 {
				case 0:
					l.Failed(now, "x")
				case 1:
					l.Skipped(now)
				default:
					l.Connected(now, time.Duration(i%7)*time.Millisecond)
				}
				l.Release(now)
				if i%50 == 0 {
					p.StatusOrder(now)
					p.Snapshot(now)
					p.DueForProbe(now, true, time.Second)
					p.ProbeResult("b", i%100 == 0, time.Millisecond, now)
				}
			}
		})
	}
	wg.Wait()
	for _, st := range p.Snapshot(t0.Add(time.Hour)) {
		if st.Active != 0 || st.Inflight != 0 {
			t.Errorf("%s leaked counts: active=%d inflight=%d", st.Address, st.Active, st.Inflight)
		}
		if math.IsNaN(st.EffectiveWeight) {
			t.Errorf("%s NaN weight", st.Address)
		}
	}
}
