package balance

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// weighted builds addresses a, b, c, ... with the given weights, all in priority group 0.
func weighted(ws ...int) []Address {
	out := make([]Address, len(ws))
	for i, w := range ws {
		out[i] = Address{Address: string(rune('a' + i)), Weight: w}
	}
	return out
}

// picks runs n sequential logins (Acquire then Release) and returns the chosen addresses.
func picks(t *testing.T, p *Pool, now time.Time, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	for range n {
		l, ok := p.Acquire(now, nil)
		if !ok {
			t.Fatalf("Acquire found nothing after %d picks", len(out))
		}
		out = append(out, l.Address())
		l.Release(now)
	}
	return out
}

func counts(list []string) map[string]int {
	m := map[string]int{}
	for _, s := range list {
		m[s]++
	}
	return m
}

// confirmAll proves every address of p with a successful probe, so a test about
// something else starts from healthy addresses instead of unknown ones.
func confirmAll(p *Pool, now time.Time) {
	for _, st := range p.Snapshot(now) {
		p.ProbeResult(st.Address, true, 0, now)
	}
}

// ejectNow fails addr FailThreshold times so it is ejected at now.
func ejectNow(t *testing.T, p *Pool, addr string, now time.Time) {
	t.Helper()
	for i := 0; i < 10; i++ {
		if st := status(t, p, addr, now); st.Health == StateUnhealthy {
			return
		}
		l := leaseOn(t, p, addr, now)
		l.Failed(now, "refused")
	}
	t.Fatalf("%s was not ejected", addr)
}

// leaseOn acquires until it gets addr (releasing the others without health effect).
func leaseOn(t *testing.T, p *Pool, addr string, now time.Time) *Lease {
	t.Helper()
	var tried []string
	for {
		l, ok := p.Acquire(now, tried)
		if !ok {
			t.Fatalf("no lease available on %s (tried %v)", addr, tried)
		}
		if l.Address() == addr {
			return l
		}
		tried = append(tried, l.Address())
		l.Skipped(now)
	}
}

func status(t *testing.T, p *Pool, addr string, now time.Time) BackendStatus {
	t.Helper()
	for _, s := range p.Snapshot(now) {
		if s.Address == addr {
			return s
		}
	}
	t.Fatalf("%s not in snapshot", addr)
	return BackendStatus{}
}

func TestParseStrategy(t *testing.T) {
	tests := []struct {
		in      string
		want    Strategy
		wantErr bool
	}{
		{"", FirstAvailable, false},
		{"first_available", FirstAvailable, false},
		{"round_robin", RoundRobin, false},
		{" Least_Conn ", LeastConn, false},
		{"latency", Latency, false},
		{"random", Random, false},
		{"roundrobin", "", true},
		{"fastest", "", true},
	}
	for _, tt := range tests {
		got, err := ParseStrategy(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseStrategy(%q) = %q, %v; want %q, err=%v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "round_robin") {
			t.Errorf("error %q should list the valid strategies", err)
		}
	}
}

func TestSequences(t *testing.T) {
	tests := []struct {
		name     string
		strategy Strategy
		weights  []int
		n        int
		want     string
	}{
		{"smooth wrr 5:1:1", RoundRobin, []int{5, 1, 1}, 14, "aabacaaaabacaa"},
		{"smooth wrr equal", RoundRobin, []int{1, 1, 1}, 6, "abcabc"},
		{"smooth wrr 2:1", RoundRobin, []int{2, 1}, 6, "abaaba"},
		{"first_available ignores weights", FirstAvailable, []int{1, 5, 1}, 4, "aaaa"},
		{"least_conn sequential equal weights rotates", LeastConn, []int{1, 1, 1}, 6, "abcabc"},
		{"least_conn sequential 3:1: (0+1)/3 beats (0+1)/1", LeastConn, []int{3, 1}, 4, "aaaa"},
		{"least_conn tie 2:2 broken by smooth wrr", LeastConn, []int{2, 2}, 4, "abab"},
		{"latency unmeasured ties use weights", Latency, []int{3, 1}, 8, "aabaaaba"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPool(Options{Strategy: tt.strategy}, weighted(tt.weights...), t0)
			if got := strings.Join(picks(t, p, t0, tt.n), ""); got != tt.want {
				t.Errorf("sequence = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestRoundRobinExactShare(t *testing.T) {
	p := NewPool(Options{Strategy: RoundRobin}, weighted(3, 1), t0)
	c := counts(picks(t, p, t0, 1000))
	if c["a"] != 750 || c["b"] != 250 {
		t.Errorf("3:1 over 1000 picks = %v, want exactly 750/250", c)
	}
}

func TestLeastConnBurst(t *testing.T) {
	p := NewPool(Options{Strategy: LeastConn}, weighted(3, 1), t0)
	var leases []*Lease
	for range 100 {
		l, ok := p.Acquire(t0, nil)
		if !ok {
			t.Fatal("Acquire failed")
		}
		leases = append(leases, l)
	}
	c := map[string]int{}
	for _, l := range leases {
		c[l.Address()]++
	}
	if c["a"] < 73 || c["a"] > 77 || c["b"] < 23 || c["b"] > 27 {
		t.Errorf("100 simultaneous logins on 3:1 = %v, want 75/25 ±2", c)
	}
	snap := p.Snapshot(t0)
	if snap[0].Inflight+snap[1].Inflight != 100 {
		t.Errorf("inflight = %d+%d, want 100", snap[0].Inflight, snap[1].Inflight)
	}
	for _, l := range leases {
		l.Connected(t0, time.Millisecond)
	}
	snap = p.Snapshot(t0)
	if snap[0].Active+snap[1].Active != 100 || snap[0].Inflight+snap[1].Inflight != 0 {
		t.Errorf("after Connected active=%d+%d inflight=%d+%d", snap[0].Active, snap[1].Active, snap[0].Inflight, snap[1].Inflight)
	}
}

func TestLeastConnPrefersEmptiest(t *testing.T) {
	p := NewPool(Options{Strategy: LeastConn}, weighted(1, 1, 1), t0)
	la := leaseOn(t, p, "a", t0)
	la.Connected(t0, 0)
	lb := leaseOn(t, p, "b", t0)
	lb.Connected(t0, 0)
	// a and b carry one session each, c none: the next three logins must all go to c first.
	l, _ := p.Acquire(t0, nil)
	if l.Address() != "c" {
		t.Errorf("least_conn picked %s, want c (the only empty address)", l.Address())
	}
}

func TestLatencyPrefersFastest(t *testing.T) {
	p := NewPool(Options{Strategy: Latency}, weighted(1, 1, 1), t0)
	for addr, ct := range map[string]time.Duration{"a": 50 * time.Millisecond, "b": 10 * time.Millisecond, "c": 30 * time.Millisecond} {
		l := leaseOn(t, p, addr, t0)
		l.Connected(t0, ct)
		l.Release(t0)
	}
	if got := picks(t, p, t0, 5); strings.Join(got, "") != "bbbbb" {
		t.Errorf("latency picks = %v, want b every time", got)
	}
	// EWMA with alpha 0.3: b slows to 100ms once -> 0.3*100 + 0.7*10 = 37ms, now c (30ms) is fastest.
	l := leaseOn(t, p, "b", t0)
	l.Connected(t0, 100*time.Millisecond)
	l.Release(t0)
	if got := status(t, p, "b", t0).ConnectEWMA; got != 37*time.Millisecond {
		t.Errorf("EWMA = %v, want 37ms", got)
	}
	if got := picks(t, p, t0, 1)[0]; got != "c" {
		t.Errorf("after b slowed, picked %s, want c", got)
	}
	// A new unmeasured address counts as 0 so it gets measured.
	p.Update(Options{Strategy: Latency}, append(weighted(1, 1, 1), Address{Address: "d", Weight: 1}), t0)
	if got := picks(t, p, t0, 1)[0]; got != "d" {
		t.Errorf("unmeasured address not tried first, got %s", got)
	}
}

func TestRandomWeighted(t *testing.T) {
	seq := []float64{0.1, 0.24, 0.26, 0.9, 0.5}
	i := 0
	rnd := func() float64 { v := seq[i%len(seq)]; i++; return v }
	p := NewPool(Options{Strategy: Random, Rand: rnd}, weighted(1, 3), t0)
	// total weight 4: r*4 < 1 -> a, else b.
	if got := strings.Join(picks(t, p, t0, 5), ""); got != "aabbb" {
		t.Errorf("random picks = %s, want aabbb", got)
	}
	// The default source spreads roughly by weight.
	p = NewPool(Options{Strategy: Random}, weighted(1, 3), t0)
	c := counts(picks(t, p, t0, 4000))
	if c["a"] < 800 || c["a"] > 1200 {
		t.Errorf("random 1:3 over 4000 = %v, want about 1000/3000", c)
	}
}

func TestPrioritySpillOver(t *testing.T) {
	addrs := []Address{{"a", 1, 0}, {"b", 1, 0}, {"c", 1, 1}}
	tests := []struct {
		name  string
		setup func(p *Pool)
		tried []string
		want  string // allowed picks
	}{
		{"lower group only", func(p *Pool) {}, nil, "ab"},
		{"group exhausted by tried", func(p *Pool) {}, []string{"a", "b"}, "c"},
		{"group ejected", func(p *Pool) { ejectNow(t, p, "a", t0); ejectNow(t, p, "b", t0) }, nil, "c"},
		{"group drained", func(p *Pool) { p.SetDrain("a", true, t0); p.SetDrain("b", true, t0) }, nil, "c"},
		{"group full", func(p *Pool) { p.ReportStatus("a", 20, 20, t0); p.ReportStatus("b", 25, 20, t0) }, nil, "c"},
		{"mixed: drained + ejected", func(p *Pool) { p.SetDrain("a", true, t0); ejectNow(t, p, "b", t0) }, nil, "c"},
		{"higher group ejected too: lower group ejected first", func(p *Pool) {
			ejectNow(t, p, "a", t0)
			ejectNow(t, p, "b", t0)
			ejectNow(t, p, "c", t0)
		}, nil, "ab"},
	}
	for _, s := range []Strategy{FirstAvailable, RoundRobin, LeastConn, Latency, Random} {
		for _, tt := range tests {
			t.Run(string(s)+"/"+tt.name, func(t *testing.T) {
				p := NewPool(Options{Strategy: s}, addrs, t0)
				tt.setup(p)
				for range 6 {
					l, ok := p.Acquire(t0.Add(time.Second), tt.tried)
					if !ok {
						t.Fatal("Acquire found nothing")
					}
					if !strings.Contains(tt.want, l.Address()) {
						t.Fatalf("picked %s, want one of %q", l.Address(), tt.want)
					}
					l.Release(t0)
				}
			})
		}
	}
}

func TestSlowStartCurve(t *testing.T) {
	const w = 10
	ss := 40 * time.Second
	for _, aggr := range []float64{1.0, 2.0} {
		for _, frac := range []float64{0, 0.0001, 0.1, 0.25, 0.5, 0.75, 0.99, 1, 2} {
			t.Run(fmt.Sprintf("aggression=%v/at=%v", aggr, frac), func(t *testing.T) {
				p := NewPool(Options{Strategy: RoundRobin, SlowStart: ss, SlowStartAggression: aggr}, weighted(w), t0)
				if got := status(t, p, "a", t0).EffectiveWeight; got != w {
					t.Fatalf("a configured address must start at full weight, got %v", got)
				}
				if err := p.MarkWarming("a", t0); err != nil {
					t.Fatal(err)
				}
				at := t0.Add(time.Duration(frac * float64(ss)))
				want := w * math.Min(math.Max(math.Pow(frac, 1/aggr), 0.01), 1)
				if got := status(t, p, "a", at).EffectiveWeight; math.Abs(got-want) > 1e-9 {
					t.Errorf("w_eff = %v, want %v", got, want)
				}
			})
		}
	}
}

func TestSlowStartShapesTraffic(t *testing.T) {
	opts := Options{Strategy: RoundRobin, SlowStart: 100 * time.Second}
	p := NewPool(opts, weighted(1, 1), t0)
	p.MarkWarming("b", t0)
	// At 10% of the window b weighs 0.1 against a's 1: about 1 pick in 11.
	c := counts(picks(t, p, t0.Add(10*time.Second), 110))
	if c["b"] < 8 || c["b"] > 12 {
		t.Errorf("warming address got %d of 110 picks, want about 10", c["b"])
	}
	// first_available ignores the ramp.
	p = NewPool(Options{SlowStart: 100 * time.Second}, weighted(1, 1), t0)
	p.MarkWarming("a", t0)
	if got := picks(t, p, t0.Add(time.Second), 1)[0]; got != "a" {
		t.Errorf("first_available picked %s, want a", got)
	}
	if got := status(t, p, "a", t0.Add(time.Second)).EffectiveWeight; got != 1 {
		t.Errorf("first_available reports ramped weight %v", got)
	}
	if err := p.MarkWarming("zzz", t0); err == nil {
		t.Error("MarkWarming on an unknown address must fail")
	}
}

func TestDegradedLatencyHysteresis(t *testing.T) {
	p := NewPool(Options{Strategy: RoundRobin, DegradedLatency: 100 * time.Millisecond}, weighted(10, 10), t0)
	feed := func(ct time.Duration) {
		l := leaseOn(t, p, "a", t0)
		l.Connected(t0, ct)
		l.Release(t0)
	}
	steps := []struct {
		ct       time.Duration
		ewma     time.Duration
		degraded bool
		weight   float64
	}{
		{90 * time.Millisecond, 90 * time.Millisecond, false, 10},                    // under the threshold
		{300 * time.Millisecond, 153 * time.Millisecond, true, 10 * (1 - 153.0/200)}, // over: degraded
		{300 * time.Millisecond, 197100 * time.Microsecond, true, 1},                 // 1 − 0.9855 < 0.1: floor
		{1000 * time.Millisecond, 437970 * time.Microsecond, true, 1},                // floor 0.1
		{10 * time.Millisecond, 309579 * time.Microsecond, true, 1},
		{10 * time.Millisecond, 219705300 * time.Nanosecond, true, 1},
		{10 * time.Millisecond, 156793710 * time.Nanosecond, true, 10 * (1 - 156.79371/200)},
		{10 * time.Millisecond, 112755597 * time.Nanosecond, true, 10 * (1 - 112.755597/200)},
		{10 * time.Millisecond, 81928917 * time.Nanosecond, true, 10 * (1 - 81.928917/200)}, // 82ms: still above 80
		{10 * time.Millisecond, 60350241 * time.Nanosecond, false, 10},                      // below 0.8×: recovered
	}
	for i, s := range steps {
		feed(s.ct)
		st := status(t, p, "a", t0)
		if d := st.ConnectEWMA - s.ewma; d < -2 || d > 2 || st.Degraded != s.degraded || math.Abs(st.EffectiveWeight-s.weight) > 1e-6 {
			t.Errorf("step %d: ewma=%v degraded=%v w=%v; want %v %v %v", i, st.ConnectEWMA, st.Degraded, st.EffectiveWeight, s.ewma, s.degraded, s.weight)
		}
	}
}
