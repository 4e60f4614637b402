package proxy

import (
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// A frozen backend (accepts TCP, never answers) costs a server-list ping one
// status_timeout, not connect_timeout, and one per cache ttl, not one per ping:
// the ping is answered with the server's offline MOTD, and the pings after it
// within the ttl do not ask the frozen address again.
func TestStatusToAFrozenBackendIsBoundedAndNegativelyCached(t *testing.T) {
	frozen, accepted := frozenBackend(t)
	s := newServer("lobby", []string{"lobby.com"}, frozen)
	s.ActiveHealth = &config.ActiveHealth{Enabled: false}
	s.MOTD.Offline = &config.MOTD{Text: "lobby is resting"}
	clock := &testClock{}
	tp := startProxyOpts(t, func(c *config.Config) {
		c.ConnectTimeout = config.Duration(time.Hour) // a ping that waited for it would hang the test
		c.StatusTimeout = config.Duration(200 * time.Millisecond)
		c.StatusCache.TTL = config.Duration(5 * time.Second)
	}, Options{Now: clock.Now}, s)
	for i := range 4 {
		if got := mc.DescriptionText(pingVia(t, tp.addr, "lobby.com").Description); got != "lobby is resting" {
			t.Fatalf("ping %d: %q, want the offline MOTD", i, got)
		}
		if st := legacyPingVia(t, tp.addr, "lobby.com"); st.MOTD != "lobby is resting" {
			t.Fatalf("legacy ping %d: %q, want the offline MOTD", i, st.MOTD)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("the frozen address was asked %d times within one ttl, want 1", n)
	}
	clock.Advance(5 * time.Second)
	pingVia(t, tp.addr, "lobby.com")
	if n := accepted.Load(); n != 2 {
		t.Fatalf("after one ttl the address is asked again: %d connections, want 2", n)
	}
}

// Legacy pings use the status cache like modern ones: two within the ttl reach
// the backend once, and when the backend then freezes, the last good answer
// stands in (stale) instead of the offline MOTD.
func TestLegacyPingsUseTheCacheAndStaleOnError(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "open for business", Legacy: true, Online: 3, Max: 20})
	s := newServer("lobby", []string{"lobby.com"}, b.Addr())
	s.ActiveHealth = &config.ActiveHealth{Enabled: false}
	clock := &testClock{}
	tp := startProxyOpts(t, func(c *config.Config) {
		c.StatusTimeout = config.Duration(200 * time.Millisecond)
		c.StatusCache.TTL = config.Duration(5 * time.Second)
		c.StatusCache.MaxStale = config.Duration(time.Minute)
	}, Options{Now: clock.Now}, s)
	for range 2 {
		if st := legacyPingVia(t, tp.addr, "lobby.com"); st.MOTD != "open for business" || st.Online != 3 {
			t.Fatalf("legacy ping: %+v, want the backend's answer", st)
		}
	}
	if n := b.LegacyPings.Load(); n != 1 {
		t.Fatalf("two legacy pings within the ttl reached the backend %d times, want 1", n)
	}
	// The backend freezes: the address is now one that never answers.
	frozen, accepted := frozenBackend(t)
	cfg := *tp.state.Load().cfg
	frozenSrv := *s
	frozenSrv.Addresses = []config.Address{{Address: frozen, Weight: 1}}
	cfg.Servers = []*config.Server{&frozenSrv}
	if err := tp.Apply(&cfg); err != nil {
		t.Fatal(err)
	}
	clock.Advance(6 * time.Second)
	for range 3 {
		if st := legacyPingVia(t, tp.addr, "lobby.com"); st.MOTD != "open for business" {
			t.Fatalf("legacy ping to a frozen backend: %q, want the last good answer (stale)", st.MOTD)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("the frozen address was asked %d times, want 1 (negative cache)", n)
	}
}
