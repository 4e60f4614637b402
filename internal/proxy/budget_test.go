package proxy

import (
	"net/netip"
	"testing"
	"time"
)

// A player's fallbacks: at most max within bounceWindow, each server once per
// incident, and a quiet minute starts a new incident with the whole budget.
func TestMoverBudget(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var m mover
	for i := 0; i < 3; i++ {
		if !m.bounce(t0.Add(time.Duration(i)*time.Second), 3) {
			t.Fatalf("bounce %d refused within the budget", i+1)
		}
	}
	if m.bounce(t0.Add(3*time.Second), 3) {
		t.Fatal("a 4th bounce within a minute must spend the budget")
	}
	if !m.try("a") || m.try("a") || !m.try("b") {
		t.Fatal("each server may be tried once per incident")
	}
	// The first bounce leaves the window: one more is allowed, same incident.
	if !m.bounce(t0.Add(bounceWindow+500*time.Millisecond), 3) {
		t.Fatal("a bounce once the oldest left the window must be allowed")
	}
	if m.try("a") {
		t.Fatal("the incident goes on while bounces are in the window: a was tried")
	}
	// A quiet minute: a new incident, every server may be tried again.
	later := t0.Add(10 * bounceWindow)
	if !m.bounce(later, 3) || !m.try("a") {
		t.Fatal("after a quiet minute the budget and the servers are fresh")
	}
}

// Failed logins are logged once per IP and reason per window, and the memory of
// them stays bounded.
func TestFailedLoginsLogOncePerWindow(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var f failedLogins
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	steps := []struct {
		ip     netip.Addr
		reason string
		at     time.Duration
		want   bool
	}{
		{a, "ban", 0, true},
		{a, "ban", time.Second, false},
		{a, "rate_limit", time.Second, true},
		{b, "ban", time.Second, true},
		{a, "ban", failedLogWindow - time.Millisecond, false},
		{a, "ban", failedLogWindow, true},
	}
	for i, s := range steps {
		if got, _ := f.allow(s.ip, s.reason, t0.Add(s.at)); got != s.want {
			t.Fatalf("step %d (%s %s at %s): allow = %v, want %v", i, s.ip, s.reason, s.at, got, s.want)
		}
	}
	for i := 0; i < failedLogMax+10; i++ {
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		f.allow(ip, "handshake", t0)
	}
	if n := len(f.last); n > failedLogMax {
		t.Fatalf("%d remembered failures, cap %d", n, failedLogMax)
	}
}

// The queue lets in as many players from its head as the server reports free
// slots; never fewer than the head, and only the head when nothing is known.
func TestWaitQueueOpensAtTheServersPace(t *testing.T) {
	var q waitQueue
	es := make([]*queued, 6)
	for i := range es {
		es[i] = &queued{name: string(rune('a' + i))}
		q.add(es[i])
	}
	trying := func(free int, known bool) (n int) {
		for _, e := range es {
			if q.mayTry(e, free, known) {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		free  int
		known bool
		want  int
	}{
		{0, false, 1}, {9, false, 1}, {4, true, 4}, {0, true, 1}, {50, true, 6},
	} {
		if n := trying(tc.free, tc.known); n != tc.want {
			t.Errorf("free %d (known %v): %d try, want %d", tc.free, tc.known, n, tc.want)
		}
	}
	q.remove(es[0])
	if q.mayTry(es[0], 10, true) {
		t.Fatal("a player who left the queue does not try")
	}
	if !q.mayTry(es[1], 0, false) {
		t.Fatal("the next player is the head once the first left")
	}
}
