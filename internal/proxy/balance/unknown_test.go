package balance

import (
	"slices"
	"testing"
	"time"
)

// An address nobody has checked is shown unknown, is picked exactly like a healthy
// one, and the first check decides what it is.
func TestUnknownUntilChecked(t *testing.T) {
	tests := []struct {
		name       string
		check      func(t *testing.T, p *Pool, now time.Time)
		want       State
		wantEvent  string // "" for none
		wantWeight float64
	}{
		{"player connects", func(t *testing.T, p *Pool, now time.Time) {
			leaseOn(t, p, "a", now).Connected(now, time.Millisecond)
		}, StateHealthy, "unknown>healthy: connect ok", 4},
		{"probe ok", func(_ *testing.T, p *Pool, now time.Time) {
			p.ProbeResult("a", true, time.Millisecond, now)
		}, StateHealthy, "unknown>healthy: probe ok", 4},
		{"status answer", func(_ *testing.T, p *Pool, now time.Time) {
			p.ReportStatus("a", 3, 20, now)
		}, StateHealthy, "unknown>healthy: status answered", 4},
		{"server woken: slow start", func(_ *testing.T, p *Pool, now time.Time) {
			_ = p.MarkWarming("a", now)
		}, StateHealthy, "unknown>healthy: server woken", 4 * 0.01},
		{"three refused dials", func(t *testing.T, p *Pool, now time.Time) {
			for range 3 {
				leaseOn(t, p, "a", now).Failed(now, "refused")
			}
		}, StateUnhealthy, "unknown>unhealthy: 3 failures in 10s: refused", 4},
		{"no Minecraft answer", func(t *testing.T, p *Pool, now time.Time) {
			leaseOn(t, p, "a", now).Unresponsive(now, "silent")
		}, StateUnhealthy, "unknown>unhealthy: no Minecraft answer: silent", 4},
		{"one refused dial is not enough", func(t *testing.T, p *Pool, now time.Time) {
			leaseOn(t, p, "a", now).Failed(now, "refused")
		}, StateUnknown, "", 4},
		{"a full kick proves it alive", func(t *testing.T, p *Pool, now time.Time) {
			l := leaseOn(t, p, "a", now)
			l.Connected(now, time.Millisecond)
			l.Skipped(now)
		}, StateHealthy, "unknown>healthy: connect ok", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evs []string
			p := NewPool(Options{Strategy: RoundRobin, SlowStart: time.Minute, OnChange: func(c Change) {
				evs = append(evs, string(c.From)+">"+string(c.To)+": "+c.Reason)
			}}, weighted(4, 4), t0)
			now := t0.Add(time.Hour) // long after the pool was built: unknown is not a ramp
			for _, st := range p.Snapshot(now) {
				if st.State != StateUnknown || st.Health != StateUnknown || !st.HealthySince.IsZero() || st.EffectiveWeight != 4 {
					t.Fatalf("fresh %s = %+v, want unknown at full weight with no healthy-since", st.Address, st)
				}
			}
			tt.check(t, p, now)
			st := status(t, p, "a", now)
			if st.Health != tt.want || st.EffectiveWeight != tt.wantWeight {
				t.Errorf("a = %s at weight %v, want %s at %v", st.Health, st.EffectiveWeight, tt.want, tt.wantWeight)
			}
			if tt.want == StateHealthy && !st.HealthySince.Equal(now) {
				t.Errorf("healthy since %v, want %v (the moment it was proven)", st.HealthySince, now)
			}
			var want []string
			if tt.wantEvent != "" {
				want = []string{tt.wantEvent}
			}
			if !slices.Equal(evs, want) {
				t.Errorf("events = %q, want %q", evs, want)
			}
			if b := status(t, p, "b", now); b.Health != StateUnknown {
				t.Errorf("b = %s: checking a told us nothing about b", b.Health)
			}
		})
	}
}

// Unknown addresses share logins with healthy ones by weight, in every strategy
// and in the status order, as if they were healthy.
func TestUnknownIsSelectedLikeHealthy(t *testing.T) {
	for _, s := range strategies {
		t.Run(string(s), func(t *testing.T) {
			mixed := NewPool(Options{Strategy: s, Rand: seq(0.1, 0.6, 0.3, 0.9, 0.5)}, weighted(3, 1, 2), t0)
			mixed.ProbeResult("b", true, 0, t0) // b healthy, a and c unknown
			allHealthy := NewPool(Options{Strategy: s, Rand: seq(0.1, 0.6, 0.3, 0.9, 0.5)}, weighted(3, 1, 2), t0)
			confirmAll(allHealthy, t0)
			now := t0.Add(time.Second)
			if got, want := picks(t, mixed, now, 30), picks(t, allHealthy, now, 30); !slices.Equal(got, want) {
				t.Errorf("picks with unknown addresses = %v\nwant the all-healthy sequence %v", got, want)
			}
			if got, want := mixed.StatusOrder(now), allHealthy.StatusOrder(now); s != Random && !slices.Equal(got, want) {
				t.Errorf("status order = %v, want %v", got, want)
			}
		})
	}
}

// seq returns a Rand that repeats vals, so two pools draw the same numbers.
func seq(vals ...float64) func() float64 {
	i := 0
	return func() float64 {
		v := vals[i%len(vals)]
		i++
		return v
	}
}

func TestServingStates(t *testing.T) {
	for _, st := range States() {
		want := st == StateHealthy || st == StateUnknown
		if st.Serving() != want {
			t.Errorf("%s.Serving() = %v, want %v", st, st.Serving(), want)
		}
	}
	if got := len(States()); got != 5 {
		t.Errorf("States() has %d entries, want 5", got)
	}
}

// Healthy probing covers unknown addresses on the same interval (they come first,
// since a probe is how they become known); with it off they wait for a player.
func TestUnknownAddressesAreProbed(t *testing.T) {
	p := NewPool(Options{ActiveProbing: true}, weighted(1, 1, 1), t0)
	p.ProbeResult("c", true, 0, t0) // c is known healthy already
	if got := p.DueForProbe(t0, false, 30*time.Second); len(got) != 0 {
		t.Fatalf("due with probe_healthy off = %v, want nothing", got)
	}
	if got := p.DueForProbe(t0, true, 30*time.Second); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("due with probe_healthy on = %v, want the unknown a and b, then c", got)
	}
	if got := p.DueForProbe(t0.Add(29*time.Second), true, 30*time.Second); len(got) != 0 {
		t.Errorf("probed again before the interval: %v", got)
	}
	p.ProbeResult("a", true, 0, t0.Add(time.Second))
	p.ProbeResult("b", false, 0, t0.Add(time.Second))
	now := t0.Add(31 * time.Second)
	if got := p.DueForProbe(now, true, 30*time.Second); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Errorf("due = %v, want b (still unknown after one failed probe) first", got)
	}
	// Unknown ones come before healthy ones when slots are short.
	q := NewPool(Options{ActiveProbing: true}, weighted(1, 1), t0)
	q.ProbeResult("a", true, 0, t0)
	if got := q.DueForProbeLimit(t0, true, time.Second, 1); !slices.Equal(got, []string{"b"}) {
		t.Errorf("limited sweep = %v, want the unknown b first", got)
	}
}

// Probes arrive every interval, so they rarely fall inside the failure window:
// FailThreshold failed probes in a row eject however far apart they are, and any
// success in between starts the count again.
func TestFailedProbesInARowEject(t *testing.T) {
	tests := []struct {
		name    string
		start   func(p *Pool)
		results []bool // one probe every 30s
		want    State
	}{
		{"unknown, three failures", func(*Pool) {}, []bool{false, false, false}, StateUnhealthy},
		{"unknown, two failures", func(*Pool) {}, []bool{false, false}, StateUnknown},
		{"healthy, three failures", confirmAll0, []bool{false, false, false}, StateUnhealthy},
		{"healthy, a success breaks the run", confirmAll0, []bool{false, false, true, false, false}, StateHealthy},
		{"a connected player breaks the run", confirmAll0, []bool{false, false}, StateHealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evs []Change
			p := NewPool(Options{ActiveProbing: true, OnChange: func(c Change) { evs = append(evs, c) }}, weighted(1, 1), t0)
			tt.start(p)
			now := t0
			for i, ok := range tt.results {
				now = t0.Add(time.Duration(i+1) * 30 * time.Second)
				p.ProbeResult("a", ok, 0, now)
			}
			if tt.name == "a connected player breaks the run" {
				leaseOn(t, p, "a", now).Connected(now, 0)
				p.ProbeResult("a", false, 0, now.Add(30*time.Second))
			}
			st := status(t, p, "a", now)
			if st.Health != tt.want {
				t.Fatalf("a = %s, want %s", st.Health, tt.want)
			}
			if tt.want == StateUnhealthy {
				last := evs[len(evs)-1]
				if last.To != StateUnhealthy || last.Reason != "3 probes failed in a row" || st.Ejections != 1 || !st.NextProbe.Equal(now.Add(30*time.Second)) {
					t.Errorf("ejection = %+v, status %+v; want 3 probes failed in a row, first backoff", last, st)
				}
			}
		})
	}
}

func confirmAll0(p *Pool) { confirmAll(p, t0) }

// A reload adds new addresses as unknown and leaves the state of the others alone;
// a reset forgets failures but not what was observed.
func TestReloadAndResetKeepObservedState(t *testing.T) {
	p := NewPool(Options{}, weighted(1, 1, 1), t0)
	p.ProbeResult("a", true, 0, t0) // a healthy, b unknown, c ejected
	ejectNow(t, p, "c", t0)
	now := t0.Add(5 * time.Second)
	p.Update(Options{}, append(weighted(1, 1, 1), Address{Address: "d", Weight: 1}), now)
	want := map[string]State{"a": StateHealthy, "b": StateUnknown, "c": StateUnhealthy, "d": StateUnknown}
	for _, st := range p.Snapshot(now) {
		if st.Health != want[st.Address] {
			t.Errorf("after reload %s = %s, want %s", st.Address, st.Health, want[st.Address])
		}
	}
	for _, a := range []string{"a", "b", "c", "d"} {
		if err := p.Reset(a, now); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range p.Snapshot(now) {
		if st.Health != want[st.Address] {
			t.Errorf("after reset %s = %s, want %s", st.Address, st.Health, want[st.Address])
		}
	}
	if st := status(t, p, "c", now); !st.NextProbe.Equal(now) {
		t.Errorf("reset c is due at %v, want now: its recovery attempt is the next check", st.NextProbe)
	}
}
