package balance

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder collects OnChange events.
type recorder struct {
	mu  sync.Mutex
	evs []Change
}

func (r *recorder) on(c Change) {
	r.mu.Lock()
	r.evs = append(r.evs, c)
	r.mu.Unlock()
}

func (r *recorder) take() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.evs
	r.evs = nil
	return out
}

func (r *recorder) transitions() []string {
	var out []string
	for _, e := range r.take() {
		out = append(out, e.Address+":"+string(e.From)+">"+string(e.To))
	}
	return out
}

func TestEjectionWindow(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	tests := []struct {
		name     string
		failures []time.Duration // offsets from t0
		ejected  bool
	}{
		{"three quick failures", []time.Duration{0, sec(1), sec(2)}, true},
		{"three inside 10s", []time.Duration{0, sec(5), sec(9.9)}, true},
		{"third exactly at the window edge", []time.Duration{0, sec(5), sec(10)}, false},
		{"two failures", []time.Duration{0, sec(1)}, false},
		{"three spread over 30s", []time.Duration{0, sec(15), sec(30)}, false},
		{"old failure forgotten, then three new", []time.Duration{0, sec(20), sec(21), sec(22)}, true},
		{"four spread, never three in a window", []time.Duration{0, sec(6), sec(12), sec(18)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			p := NewPool(Options{OnChange: rec.on}, weighted(1, 1), t0)
			for _, off := range tt.failures {
				now := t0.Add(off)
				l := leaseOn(t, p, "a", now)
				l.Failed(now, "connection refused")
			}
			last := t0.Add(tt.failures[len(tt.failures)-1])
			st := status(t, p, "a", last)
			if got := st.Health == StateUnhealthy; got != tt.ejected {
				t.Fatalf("ejected = %v, want %v (state %s)", got, tt.ejected, st.Health)
			}
			evs := rec.take()
			if !tt.ejected {
				if len(evs) != 0 {
					t.Errorf("unexpected events %v", evs)
				}
				return
			}
			if st.Ejections != 1 || !st.NextProbe.Equal(last.Add(30*time.Second)) || !st.LastFailure.Equal(last) {
				t.Errorf("status = %+v, want 1 ejection, next probe in 30s", st)
			}
			want := Change{Address: "a", From: StateUnknown, To: StateUnhealthy, Reason: "3 failures in 10s: connection refused", At: last}
			if len(evs) != 1 || evs[0] != want {
				t.Errorf("events = %+v, want [%+v]", evs, want)
			}
		})
	}
}

func TestBackoffGrowthAndCap(t *testing.T) {
	for _, active := range []bool{false, true} {
		t.Run(map[bool]string{false: "passive", true: "active"}[active], func(t *testing.T) {
			p := NewPool(Options{ActiveProbing: active}, weighted(1, 1), t0)
			confirmAll(p, t0)
			ejectNow(t, p, "a", t0)
			now := t0
			wantBackoffs := []time.Duration{30, 60, 120, 240, 300, 300}
			for i, want := range wantBackoffs {
				want *= time.Second
				st := status(t, p, "a", now)
				if st.Ejections != i+1 || st.NextProbe.Sub(now) != want {
					t.Fatalf("ejection %d: ejections=%d backoff=%v, want %d, %v", i+1, st.Ejections, st.NextProbe.Sub(now), i+1, want)
				}
				// Not due a nanosecond early: logins go to b, the prober gets nothing.
				early := st.NextProbe.Add(-time.Nanosecond)
				for _, got := range picks(t, p, early, 5) {
					if got != "b" {
						t.Fatalf("ejected address handed out before its backoff elapsed")
					}
				}
				if due := p.DueForProbe(early, false, 0); len(due) != 0 {
					t.Fatalf("DueForProbe before backoff = %v", due)
				}
				// The recovery attempt fails: the backoff doubles.
				now = st.NextProbe
				if active {
					if due := p.DueForProbe(now, false, 0); !slices.Equal(due, []string{"a"}) {
						t.Fatalf("DueForProbe = %v, want [a]", due)
					}
					p.ProbeResult("a", false, 0, now)
				} else {
					l, _ := p.Acquire(now, nil)
					if l.Address() != "a" || !l.Recovery() {
						t.Fatalf("first login after backoff got %s (recovery=%v), want a's recovery attempt", l.Address(), l.Recovery())
					}
					l.Failed(now, "refused")
				}
			}
		})
	}
}

func TestEjectionCountDecays(t *testing.T) {
	p := NewPool(Options{ActiveProbing: true}, weighted(1, 1), t0)
	ejectNow(t, p, "a", t0)
	now := t0.Add(30 * time.Second)
	p.DueForProbe(now, false, 0)
	p.ProbeResult("a", false, 0, now) // ejections 2, backoff 60s
	now = now.Add(60 * time.Second)
	p.DueForProbe(now, false, 0)
	p.ProbeResult("a", true, time.Millisecond, now) // healthy, ejections still 2
	tests := []struct {
		healthyFor  time.Duration
		ejections   int
		nextBackoff time.Duration
	}{
		{time.Minute, 2, 120 * time.Second},
		{5 * time.Minute, 1, 60 * time.Second},
		{10 * time.Minute, 0, 30 * time.Second},
		{time.Hour, 0, 30 * time.Second},
	}
	for _, tt := range tests {
		at := now.Add(tt.healthyFor)
		if got := status(t, p, "a", at).Ejections; got != tt.ejections {
			t.Errorf("after %v healthy: ejections = %d, want %d", tt.healthyFor, got, tt.ejections)
		}
	}
	// Eject again after 5m of health: one ejection was forgiven, so this is the 2nd (60s), not the 3rd.
	at := now.Add(5 * time.Minute)
	ejectNow(t, p, "a", at)
	if st := status(t, p, "a", at); st.Ejections != 2 || st.NextProbe.Sub(at) != 60*time.Second {
		t.Errorf("re-ejection: ejections=%d backoff=%v, want 2, 60s", st.Ejections, st.NextProbe.Sub(at))
	}
}

func TestExactlyOneRecoveryAttempt(t *testing.T) {
	tests := []struct {
		name         string
		active       bool
		addrs        []Address
		wantOnA      int
		wantNoLeases int
	}{
		{"passive, healthy peer", false, weighted(1, 1), 1, 0},
		{"passive, single address", false, weighted(1), 1, 49},
		{"active, healthy peer: players never take it", true, weighted(1, 1), 0, 0},
		{"active, single address: last resort only", true, weighted(1), 50, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPool(Options{Strategy: LeastConn, ActiveProbing: tt.active}, tt.addrs, t0)
			confirmAll(p, t0)
			ejectNow(t, p, "a", t0)
			due := t0.Add(30 * time.Second)
			var (
				wg        sync.WaitGroup
				mu        sync.Mutex
				onA, none int
				recovery  int
			)
			start := make(chan struct{})
			for range 50 {
				wg.Go(func() {
					<-start
					l, ok := p.Acquire(due, nil)
					mu.Lock()
					defer mu.Unlock()
					if !ok {
						none++
						return
					}
					if l.Address() == "a" {
						onA++
					}
					if l.Recovery() {
						recovery++
					}
				})
			}
			close(start)
			wg.Wait()
			if onA != tt.wantOnA || none != tt.wantNoLeases {
				t.Errorf("leases on a = %d, without lease = %d; want %d, %d", onA, none, tt.wantOnA, tt.wantNoLeases)
			}
			wantRecovery := 0
			if !tt.active {
				wantRecovery = 1
			}
			if recovery != wantRecovery {
				t.Errorf("recovery attempts = %d, want %d", recovery, wantRecovery)
			}
			if tt.active {
				if got := p.DueForProbe(due, false, 0); !slices.Equal(got, []string{"a"}) {
					t.Errorf("DueForProbe = %v, want [a]", got)
				}
				if got := p.DueForProbe(due, false, 0); len(got) != 0 {
					t.Errorf("second DueForProbe = %v, want nothing: the attempt is in flight", got)
				}
			}
			if st := status(t, p, "a", due); st.Health != StateProbing {
				t.Errorf("a is %s, want probing", st.Health)
			}
		})
	}
}

func TestRecoveryEntersSlowStart(t *testing.T) {
	tests := []struct {
		name    string
		active  bool
		recover func(p *Pool, now time.Time)
		reason  string
	}{
		{"player recovery attempt", false, func(p *Pool, now time.Time) {
			l, _ := p.Acquire(now, nil)
			l.Connected(now, 2*time.Millisecond)
		}, "connect ok"},
		{"active probe", true, func(p *Pool, now time.Time) {
			p.DueForProbe(now, false, 0)
			p.ProbeResult("a", true, time.Millisecond, now)
		}, "probe ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			p := NewPool(Options{Strategy: RoundRobin, SlowStart: 60 * time.Second, ActiveProbing: tt.active, OnChange: rec.on}, weighted(4, 4), t0)
			ejectNow(t, p, "a", t0)
			now := t0.Add(30 * time.Second)
			tt.recover(p, now)
			st := status(t, p, "a", now)
			if st.Health != StateHealthy || !st.HealthySince.Equal(now) || st.EffectiveWeight != 4*0.01 {
				t.Errorf("after recovery: %+v, want healthy since %v at weight 0.04", st, now)
			}
			if got := status(t, p, "a", now.Add(30*time.Second)).EffectiveWeight; got != 2 {
				t.Errorf("half-way weight = %v, want 2", got)
			}
			if got := status(t, p, "a", now.Add(60*time.Second)).EffectiveWeight; got != 4 {
				t.Errorf("after the ramp weight = %v, want 4", got)
			}
			evs := rec.take()
			want := []Change{
				{Address: "a", From: StateUnknown, To: StateUnhealthy, Reason: "3 failures in 10s: refused", At: t0},
				{Address: "a", From: StateUnhealthy, To: StateProbing, Reason: map[bool]string{false: "recovery attempt", true: "recovery probe"}[tt.active], At: now},
				{Address: "a", From: StateProbing, To: StateHealthy, Reason: tt.reason, At: now},
			}
			if !slices.Equal(evs, want) {
				t.Errorf("events:\n got %+v\nwant %+v", evs, want)
			}
		})
	}
}

func TestAbandonedRecoveryIsHandedOutAgain(t *testing.T) {
	p := NewPool(Options{}, weighted(1, 1), t0)
	ejectNow(t, p, "a", t0)
	now := t0.Add(30 * time.Second)
	l, _ := p.Acquire(now, nil)
	if !l.Recovery() {
		t.Fatal("expected the recovery attempt")
	}
	l.Skipped(now) // the login went away before dialing
	l.Release(now) // idempotent
	if st := status(t, p, "a", now); st.Health != StateUnhealthy || st.Inflight != 0 {
		t.Fatalf("after abandon: %+v", st)
	}
	l2, _ := p.Acquire(now, nil)
	if l2.Address() != "a" || !l2.Recovery() {
		t.Errorf("next login got %s recovery=%v, want a's recovery attempt", l2.Address(), l2.Recovery())
	}
	// A lost prober reservation is handed out again after RecoveryTimeout.
	q := NewPool(Options{ActiveProbing: true}, weighted(1), t0)
	ejectNow(t, q, "a", t0)
	q.DueForProbe(now, false, 0)
	if got := q.DueForProbe(now.Add(RecoveryTimeout-time.Second), false, 0); len(got) != 0 {
		t.Errorf("reservation re-handed early: %v", got)
	}
	if got := q.DueForProbe(now.Add(RecoveryTimeout), false, 0); !slices.Equal(got, []string{"a"}) {
		t.Errorf("stale reservation not re-handed: %v", got)
	}
}

func TestAllEjectedSpreads(t *testing.T) {
	for _, s := range []Strategy{RoundRobin, LeastConn, Random, Latency} {
		t.Run(string(s), func(t *testing.T) {
			src := rand.New(rand.NewPCG(1, 2)) // deterministic, so the random case cannot flake
			p := NewPool(Options{Strategy: s, ActiveProbing: true, Rand: src.Float64}, weighted(1, 1, 1), t0)
			for _, a := range []string{"a", "b", "c"} {
				ejectNow(t, p, a, t0)
			}
			var leases []*Lease
			for range 30 {
				l, ok := p.Acquire(t0.Add(time.Second), nil)
				if !ok {
					t.Fatal("all-ejected pool must still hand out addresses")
				}
				leases = append(leases, l)
			}
			c := map[string]int{}
			for _, l := range leases {
				c[l.Address()]++
			}
			for _, a := range []string{"a", "b", "c"} {
				if c[a] < 5 {
					t.Errorf("all-ejected spread = %v: %s starved (stampede onto one address)", c, a)
				}
			}
		})
	}
}

func TestEjectedAreLastResort(t *testing.T) {
	p := NewPool(Options{Strategy: RoundRobin, ActiveProbing: true}, weighted(1, 1, 1), t0)
	ejectNow(t, p, "a", t0)
	now := t0.Add(time.Second)
	for _, got := range picks(t, p, now, 10) {
		if got == "a" {
			t.Fatal("ejected address picked while healthy ones remain")
		}
	}
	l, ok := p.Acquire(now, []string{"b", "c"})
	if !ok || l.Address() != "a" {
		t.Fatalf("last resort = %v %v, want a", l, ok)
	}
	// A last-resort login that connects proves the address alive.
	l.Connected(now, time.Millisecond)
	if st := status(t, p, "a", now); st.Health != StateHealthy {
		t.Errorf("a is %s after a successful connect, want healthy", st.Health)
	}
	if _, ok := p.Acquire(now, []string{"a", "b", "c"}); ok {
		t.Error("Acquire must report nothing left when everything was tried")
	}
}

func TestDrain(t *testing.T) {
	rec := &recorder{}
	p := NewPool(Options{Strategy: RoundRobin, SlowStart: time.Minute, OnChange: rec.on}, weighted(1, 1, 1), t0)
	la := leaseOn(t, p, "a", t0)
	la.Connected(t0, time.Millisecond)
	if err := p.SetDrain("a", true, t0); err != nil {
		t.Fatal(err)
	}
	if err := p.SetDrain("a", true, t0); err != nil { // idempotent
		t.Fatal(err)
	}
	if got := rec.transitions(); !slices.Equal(got, []string{"a:unknown>healthy", "a:healthy>draining"}) {
		t.Errorf("events = %v", got)
	}
	for _, got := range picks(t, p, t0, 10) {
		if got == "a" {
			t.Fatal("drained address took a new session")
		}
	}
	st := status(t, p, "a", t0)
	if st.State != StateDraining || st.Health != StateHealthy || !st.Drained || st.Active != 1 {
		t.Errorf("drained status = %+v: existing session must stay, health untouched", st)
	}
	la.Release(t0)

	// Drain outranks ejection: with b and c ejected, they come back before a.
	ejectNow(t, p, "b", t0)
	ejectNow(t, p, "c", t0)
	now := t0.Add(time.Second)
	l, _ := p.Acquire(now, nil)
	if l.Address() == "a" {
		t.Error("drained address picked before ejected ones")
	}
	l.Release(now)
	l, _ = p.Acquire(now, []string{"b", "c"})
	if l == nil || l.Address() != "a" {
		t.Errorf("drained address is not the very last resort: %v", l)
	}
	l.Release(now)
	rec.take()

	// An address that stayed healthy while drained returns at full weight, no ramp.
	later := t0.Add(time.Hour)
	p.SetDrain("a", false, later)
	if st := status(t, p, "a", later); st.State != StateHealthy || st.EffectiveWeight != 1 {
		t.Errorf("undrained: %+v, want healthy at full weight", st)
	}
	if got := rec.transitions(); !slices.Equal(got, []string{"a:draining>healthy"}) {
		t.Errorf("events = %v", got)
	}
	// An address that went down while drained reports unhealthy when the drain lifts.
	p.SetDrain("b", true, later)
	p.SetDrain("b", false, later)
	if got := rec.transitions(); !slices.Equal(got, []string{"b:unhealthy>draining", "b:draining>unhealthy"}) {
		t.Errorf("events = %v", got)
	}
	if err := p.SetDrain("nope", true, later); !errors.Is(err, ErrUnknownAddress) {
		t.Errorf("SetDrain unknown = %v, want ErrUnknownAddress", err)
	}
}

func TestDrainAllIgnored(t *testing.T) {
	p := NewPool(Options{Strategy: RoundRobin}, weighted(1, 1), t0)
	p.SetDrain("a", true, t0)
	p.SetDrain("b", true, t0)
	c := counts(picks(t, p, t0, 10))
	if c["a"] != 5 || c["b"] != 5 {
		t.Errorf("all drained: picks = %v, want balanced 5/5", c)
	}
	for _, st := range p.Snapshot(t0) {
		if st.State != StateDraining {
			t.Errorf("%s reports %s, want draining", st.Address, st.State)
		}
	}
	// Ejection still applies underneath an ignored drain.
	ejectNow(t, p, "a", t0)
	if got := picks(t, p, t0, 3); strings.Join(got, "") != "bbb" {
		t.Errorf("picks = %v, want b only", got)
	}
}

func TestResetKeepsDrain(t *testing.T) {
	p := NewPool(Options{}, weighted(1, 1), t0)
	confirmAll(p, t0)
	ejectNow(t, p, "a", t0)
	p.SetDrain("a", true, t0)
	now := t0.Add(5 * time.Second)
	if err := p.Reset("a", now); err != nil {
		t.Fatal(err)
	}
	st := status(t, p, "a", now)
	if st.Ejections != 0 || !st.NextProbe.Equal(now) || !st.Drained || st.State != StateDraining {
		t.Errorf("after reset: %+v, want 0 ejections, due now, still drained", st)
	}
	p.SetDrain("a", false, now)
	// The backoff is over: the very next login makes the recovery attempt.
	l, _ := p.Acquire(now, nil)
	if l.Address() != "a" || !l.Recovery() {
		t.Errorf("after reset got %s recovery=%v", l.Address(), l.Recovery())
	}
	l.Connected(now, time.Millisecond)
	// Failures are cleared too: two failures before the reset plus one after do not eject.
	h := leaseOn(t, p, "b", now)
	h.Failed(now, "x")
	h = leaseOn(t, p, "b", now)
	h.Failed(now, "x")
	p.Reset("b", now)
	h = leaseOn(t, p, "b", now)
	h.Failed(now, "x")
	if st := status(t, p, "b", now); st.Health != StateHealthy {
		t.Errorf("b ejected by failures from before the reset")
	}
	if err := p.Reset("zzz", now); !errors.Is(err, ErrUnknownAddress) {
		t.Errorf("Reset unknown = %v", err)
	}
}

func TestCapacityAwareSkip(t *testing.T) {
	p := NewPool(Options{}, weighted(1, 1), t0)
	p.ReportStatus("a", 100, 100, t0)
	if got := picks(t, p, t0, 3); strings.Join(got, "") != "bbb" {
		t.Errorf("full a still picked: %v", got)
	}
	if !status(t, p, "a", t0).Full {
		t.Error("snapshot does not report a full")
	}
	// Both full: a full address is still better than nothing.
	p.ReportStatus("b", 10, 10, t0)
	if got := picks(t, p, t0, 1)[0]; got != "a" {
		t.Errorf("both full: picked %s, want a (config order)", got)
	}
	// Room again.
	p.ReportStatus("a", 99, 100, t0)
	l, _ := p.Acquire(t0, nil)
	if l.Address() != "a" {
		t.Fatalf("picked %s, want a", l.Address())
	}
	// Logins connected since the report count toward capacity.
	l.Connected(t0, time.Millisecond)
	if !status(t, p, "a", t0).Full {
		t.Error("99 online + 1 joined of 100 should be full")
	}
	// The verdict expires.
	if status(t, p, "a", t0.Add(DefaultFullTTL)).Full {
		t.Error("full verdict should expire after FullTTL")
	}
	p.ReportStatus("a", 5, 0, t0) // max 0: unknown capacity, never full
	if status(t, p, "a", t0).Full {
		t.Error("max 0 must not count as full")
	}
	p.ReportStatus("nope", 1, 1, t0) // unknown addresses are ignored
}
