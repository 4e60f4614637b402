package proxy

import (
	"net/netip"
	"testing"
	"time"
)

// One line per IP and reason per window, and the next line says how many it
// folded; another reason or another IP has its own line.
func TestFailedLoginLinesSayWhatTheyFold(t *testing.T) {
	var f failedLogins
	ip, other := netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("203.0.113.8")
	t0 := time.Unix(1_700_000_000, 0)
	if ok, n := f.allow(ip, "ban", t0); !ok || n != 0 {
		t.Fatalf("first: %v %d", ok, n)
	}
	for i := range 41 {
		if ok, _ := f.allow(ip, "ban", t0.Add(time.Duration(i)*100*time.Millisecond)); ok {
			t.Fatalf("failure %d within the window was logged", i)
		}
	}
	if ok, _ := f.allow(ip, "rate_limit", t0.Add(time.Second)); !ok {
		t.Fatal("another reason was folded")
	}
	if ok, _ := f.allow(other, "ban", t0.Add(time.Second)); !ok {
		t.Fatal("another address was folded")
	}
	if ok, n := f.allow(ip, "ban", t0.Add(failedLogWindow+time.Second)); !ok || n != 41 {
		t.Fatalf("after the window: logged %v, folded %d; want true, 41", ok, n)
	}
	if ok, n := f.allow(ip, "ban", t0.Add(3*failedLogWindow)); !ok || n != 0 {
		t.Fatalf("a quiet window: %v %d", ok, n)
	}
}
