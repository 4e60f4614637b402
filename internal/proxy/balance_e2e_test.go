package proxy

import (
	"bufio"
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// End-to-end load balancing over real loopback sockets (issue 3). The balancer's clock is a
// testutil.Clock, so backoff windows, slow start and status verdicts are crossed by advancing
// it, never by sleeping.

// lbProxy is a running proxy on a fake clock with a subscription to its health events.
type lbProxy struct {
	addr  string
	p     *Proxy
	clock *testutil.Clock
	sub   *events.Sub
}

// startLBProxy is startProxy with a fake clock and recovery by one player (no active prober:
// its scheduling runs on real time), connect_timeout 1s.
func startLBProxy(t *testing.T, mutate func(*config.Config), servers ...*config.Server) *lbProxy {
	t.Helper()
	clock := testutil.NewClock(time.Now())
	bus := events.NewBus()
	sub := bus.Subscribe(1024, events.BackendHealthChange)
	t.Cleanup(sub.Close)
	tp := startProxyOpts(t, func(cfg *config.Config) {
		cfg.ActiveHealth.Enabled = false
		if mutate != nil {
			mutate(cfg)
		}
	}, Options{Now: clock.Now, Bus: bus}, servers...)
	return &lbProxy{addr: tp.addr, p: tp.Proxy, clock: clock, sub: sub}
}

// join logs a player in and returns the kick text the backend answered with (fakemc's
// "You reached <name> (as <player>)" by default).
func (lp *lbProxy) join(t *testing.T, host, player string) string {
	t.Helper()
	c, _, f, err := login(t, lp.addr, host, player)
	if err != nil {
		t.Fatalf("login %s: %v", player, err)
	}
	c.Close()
	text, ok := mc.ParseLoginDisconnect(f)
	if !ok {
		t.Fatalf("login %s: first packet 0x%02x, want a Login Disconnect", player, f.ID)
	}
	return text
}

// reached is the fakemc backend name that served the login, or "" when the text is not fakemc's.
func reached(text, player string) string {
	s, ok := strings.CutPrefix(text, "You reached ")
	if !ok {
		return ""
	}
	s, ok = strings.CutSuffix(s, " (as "+player+")")
	if !ok {
		return ""
	}
	return s
}

// joinLive logs players in one after another and fails unless every one reached a backend in
// live; it returns how many each backend got.
func (lp *lbProxy) joinLive(t *testing.T, host string, n int, live ...string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := range n {
		player := "pl" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		text := lp.join(t, host, player)
		name := reached(text, player)
		ok := false
		for _, l := range live {
			ok = ok || name == l
		}
		if !ok {
			t.Fatalf("login %d failed or reached a dead backend: %q (live: %v)", i, text, live)
		}
		got[name]++
	}
	return got
}

func (lp *lbProxy) snapshot(t *testing.T, server string) map[string]balance.BackendStatus {
	t.Helper()
	v, ok := lp.p.Server(server, lp.clock.Now())
	if !ok {
		t.Fatalf("no server %q", server)
	}
	out := map[string]balance.BackendStatus{}
	for _, s := range v.Backends {
		out[s.Address] = s
	}
	return out
}

// transition is one expected backend.health_change: address, from, to.
type transition struct{ addr, from, to string }

// next is the next health event, skipping first-contact confirmations (unknown->healthy: every
// address starts unknown, and the balance package tests when each is confirmed).
func (lp *lbProxy) next(ctx context.Context) (events.Event, error) {
	for {
		ev, err := lp.sub.Next(ctx)
		if hc, ok := ev.Data.(events.HealthChange); err == nil && ok && hc.From == string(balance.StateUnknown) && hc.To == string(balance.StateHealthy) {
			continue
		}
		return ev, err
	}
}

// expectEvents reads exactly the wanted transitions, in order, then checks nothing else is queued.
// Pool events are published before the login that caused them is answered, so by the time a
// login returns, its events are on the bus.
func (lp *lbProxy) expectEvents(t *testing.T, want ...transition) []events.HealthChange {
	t.Helper()
	var got []events.HealthChange
	for range want {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ev, err := lp.next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for health events %v: got only %+v", want, got)
		}
		hc, ok := ev.Data.(events.HealthChange)
		if !ok {
			t.Fatalf("unexpected event %s %+v", ev.Type, ev.Data)
		}
		got = append(got, hc)
	}
	for i, w := range want {
		if g := got[i]; g.Address != w.addr || g.From != w.from || g.To != w.to {
			t.Fatalf("health event %d = %s %s->%s (%s), want %s %s->%s; all: %+v", i, g.Address, g.From, g.To, g.Reason, w.addr, w.from, w.to, got)
		}
	}
	lp.expectNoEvents(t)
	return got
}

func (lp *lbProxy) expectNoEvents(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if ev, err := lp.next(ctx); err == nil {
		t.Fatalf("unexpected event %s %+v", ev.Type, ev.Data)
	}
}

// startBackendAt starts a fakemc on a fixed address (a backend coming back on its old port). The
// port was just freed, so the listen is retried briefly in case a closing socket still holds it.
func startBackendAt(t *testing.T, addr string, opts fakemc.Options) *fakemc.Server {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := fakemc.Start(addr, opts)
		if err == nil {
			t.Cleanup(func() { b.Close() })
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen again on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond) // polling for the port, not waiting for a time window
	}
}

// acceptCounter listens on a backend's old address, counts every connection the proxy opens to
// it and closes each at once: a backend that accepts TCP but never answers a login.
type acceptCounter struct {
	ln   net.Listener
	n    atomic.Int64
	done chan struct{}
}

func listenCounter(t *testing.T, addr string) *acceptCounter {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	var ln net.Listener
	for {
		var err error
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen again on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	a := &acceptCounter{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			a.n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(a.Close)
	return a
}

func (a *acceptCounter) Close() {
	if err := a.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return
	}
	<-a.done
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestE2EKillEjectRecoverRamp: three replicas, one dies during a stream of logins. No login
// fails while two live; after three refused dials it is ejected and gets no connection at all
// until its backoff elapses; then exactly one recovery attempt per window (a failed one doubles
// the backoff); once it answers again it returns in slow start and ramps to its full weight.
func TestE2EKillEjectRecoverRamp(t *testing.T) {
	for _, strategy := range []string{"round_robin", "least_conn"} {
		t.Run(strategy, func(t *testing.T) {
			a := startBackend(t, fakemc.Options{Name: "a"})
			b := startBackend(t, fakemc.Options{Name: "b"})
			c, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: "c"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			cAddr := c.Addr()
			s := newServer("lobby", []string{"lobby.test"}, a.Addr(), b.Addr(), cAddr)
			s.Balance = balance.Strategy(strategy)
			s.SlowStart = config.Duration(60 * time.Second)
			lp := startLBProxy(t, nil, s)
			const host = "lobby.test"

			// All healthy: every replica takes its share.
			got := lp.joinLive(t, host, 9, "a", "b", "c")
			if strategy == "round_robin" && (got["a"] != 3 || got["b"] != 3 || got["c"] != 3) {
				t.Fatalf("round_robin over 3 equal replicas: %v, want 3 each", got)
			}
			if got["c"] == 0 {
				t.Fatalf("c got no logins while healthy: %v", got)
			}

			// Kill c mid-stream: its dials are refused, every player still lands on a or b.
			c.Close()
			ejected := false
			for i := 0; i < 30 && !ejected; i++ {
				lp.joinLive(t, host, 1, "a", "b")
				ejected = lp.snapshot(t, "lobby")[cAddr].Health == balance.StateUnhealthy
			}
			if !ejected {
				t.Fatal("c was never ejected after being killed")
			}
			evs := lp.expectEvents(t, transition{cAddr, "healthy", "unhealthy"})
			if !strings.Contains(evs[0].Reason, "3 failures") || !strings.Contains(evs[0].Reason, "refused") {
				t.Fatalf("ejection reason %q", evs[0].Reason)
			}
			snap := lp.snapshot(t, "lobby")[cAddr]
			if want := lp.clock.Now().Add(30 * time.Second); !snap.NextProbe.Equal(want) || snap.Ejections != 1 {
				t.Fatalf("after ejection: next probe %v (want %v), ejections %d", snap.NextProbe, want, snap.Ejections)
			}

			// Something listens on c's port again, but c is ejected: until its backoff elapses
			// the proxy opens no connection to it at all.
			counter := listenCounter(t, cAddr)
			got = lp.joinLive(t, host, 10, "a", "b")
			if strategy == "round_robin" && (got["a"] != 5 || got["b"] != 5) {
				t.Fatalf("round_robin over the 2 live replicas: %v, want 5/5", got)
			}
			lp.clock.Advance(29 * time.Second)
			lp.joinLive(t, host, 5, "a", "b")
			if n := counter.n.Load(); n != 0 {
				t.Fatalf("ejected address got %d connection attempts inside its backoff", n)
			}
			lp.expectNoEvents(t)

			// Backoff elapsed: exactly one recovery attempt, taken by the next player. The address
			// accepts TCP but never answers the login, so the attempt fails (the player still
			// lands on a live replica) and the backoff doubles to 60s.
			lp.clock.Advance(2 * time.Second)
			lp.joinLive(t, host, 10, "a", "b")
			if n := counter.n.Load(); n != 1 {
				t.Fatalf("recovery window: %d connection attempts, want exactly 1", n)
			}
			lp.expectEvents(t, transition{cAddr, "unhealthy", "probing"}, transition{cAddr, "probing", "unhealthy"})
			snap = lp.snapshot(t, "lobby")[cAddr]
			if want := lp.clock.Now().Add(60 * time.Second); !snap.NextProbe.Equal(want) || snap.Ejections != 2 {
				t.Fatalf("after a failed recovery: next probe %v (want %v), ejections %d", snap.NextProbe, want, snap.Ejections)
			}
			lp.clock.Advance(59 * time.Second)
			lp.joinLive(t, host, 5, "a", "b")
			if n := counter.n.Load(); n != 1 {
				t.Fatalf("inside the 60s backoff: %d connection attempts, want still 1", n)
			}
			counter.Close()

			// c comes back for real. The next player after the backoff carries the recovery
			// attempt, reaches c, and c returns in slow start at 1% of its weight.
			startBackendAt(t, cAddr, fakemc.Options{Name: "c"})
			lp.clock.Advance(2 * time.Second)
			if name := reached(lp.join(t, host, "first"), "first"); name != "c" {
				t.Fatalf("the recovery login reached %q, want c", name)
			}
			lp.expectEvents(t, transition{cAddr, "unhealthy", "probing"}, transition{cAddr, "probing", "healthy"})
			snap = lp.snapshot(t, "lobby")[cAddr]
			if snap.Health != balance.StateHealthy || !approx(snap.EffectiveWeight, 0.01) {
				t.Fatalf("right after recovery: %s at effective weight %v, want healthy at 0.01", snap.Health, snap.EffectiveWeight)
			}
			got = lp.joinLive(t, host, 10, "a", "b", "c")
			if got["c"] > 1 {
				t.Fatalf("c at 1%% weight took %d of 10 logins: %v", got["c"], got)
			}

			// Halfway through slow start (linear): half weight, so a smaller share than a or b.
			lp.clock.Advance(30 * time.Second)
			if w := lp.snapshot(t, "lobby")[cAddr].EffectiveWeight; !approx(w, 0.5) {
				t.Fatalf("halfway through slow start: effective weight %v, want 0.5", w)
			}
			if strategy == "round_robin" {
				got = lp.joinLive(t, host, 25, "a", "b", "c")
				if got["c"] < 3 || got["c"] > 7 || got["c"] >= got["a"] || got["c"] >= got["b"] {
					t.Fatalf("half-weight c: %v, want about 5 of 25 and fewer than a and b", got)
				}
			}

			// Slow start over: full weight, full share.
			lp.clock.Advance(31 * time.Second)
			if w := lp.snapshot(t, "lobby")[cAddr].EffectiveWeight; w != 1 {
				t.Fatalf("after slow start: effective weight %v, want 1", w)
			}
			got = lp.joinLive(t, host, 30, "a", "b", "c")
			if strategy == "round_robin" {
				for _, n := range []string{"a", "b", "c"} {
					if got[n] < 9 || got[n] > 11 {
						t.Fatalf("full weight again: %v, want 10 each (±1)", got)
					}
				}
			} else if got["c"] == 0 {
				t.Fatalf("full weight again but c got nothing: %v", got)
			}
			lp.expectNoEvents(t)
		})
	}
}

// TestE2EFullKickFailsOver: a replica answering "The server is full!" passes the player on to
// the next one without any health effect, and is avoided while the verdict is fresh; when every
// replica is full the player sees the last kick text.
func TestE2EFullKickFailsOver(t *testing.T) {
	kick := func(text string) fakemc.LoginFunc {
		return func(c net.Conn, _ *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
			_, _ = c.Write(mc.EncodeLoginDisconnect(text))
		}
	}
	full := startBackend(t, fakemc.Options{Name: "full", OnLogin: kick("The server is full!")})
	room := startBackend(t, fakemc.Options{Name: "room"})
	s := newServer("lobby", []string{"lobby.test"}, full.Addr(), room.Addr()) // first_available: full is tried first
	lp := startLBProxy(t, nil, s)

	got := lp.joinLive(t, "lobby.test", 20, "room")
	if got["room"] != 20 {
		t.Fatalf("logins: %v", got)
	}
	// The first kick marks the address full, so later logins go straight to the replica with room.
	if n := full.Logins.Load(); n != 1 {
		t.Fatalf("the full replica saw %d logins, want 1 (then avoided while full)", n)
	}
	st := lp.snapshot(t, "lobby")[full.Addr()]
	if st.Health != balance.StateHealthy || !st.Full || st.Ejections != 0 {
		t.Fatalf("full replica after 20 logins: %+v, want healthy, full, never ejected", st)
	}
	// The verdict expires: the full replica is asked again, kicks again, the player still lands.
	lp.clock.Advance(balance.DefaultFullTTL + time.Second)
	lp.joinLive(t, "lobby.test", 3, "room")
	if n := full.Logins.Load(); n != 2 {
		t.Fatalf("after the full verdict expired: %d logins on the full replica, want 2", n)
	}
	lp.expectNoEvents(t)

	// Every replica full: the player gets the last kick.
	a := startBackend(t, fakemc.Options{Name: "a", OnLogin: kick("The server is full!")})
	b := startBackend(t, fakemc.Options{Name: "b", OnLogin: kick("Sorry, the server is currently full (b)")})
	lp2 := startLBProxy(t, nil, newServer("lobby", []string{"lobby.test"}, a.Addr(), b.Addr()))
	for i := range 3 {
		if text := lp2.join(t, "lobby.test", "Steve"); text != "Sorry, the server is currently full (b)" {
			t.Fatalf("all full, login %d: kick %q, want the last replica's kick", i, text)
		}
	}
	if a.Logins.Load() != 3 || b.Logins.Load() != 3 {
		t.Fatalf("all full: a saw %d, b saw %d logins; every login must try both", a.Logins.Load(), b.Logins.Load())
	}
	for addr, st := range lp2.snapshot(t, "lobby") {
		if st.Health != balance.StateHealthy || st.Ejections != 0 {
			t.Fatalf("%s after full kicks: %+v", addr, st)
		}
	}
	lp2.expectNoEvents(t)
}

// TestE2EFullKickOnRecoveryAttempt: an ejected replica that comes back full answers its
// recovery attempt with a kick. It is alive, so it recovers (one attempt, not one per login).
func TestE2EFullKickOnRecoveryAttempt(t *testing.T) {
	room := startBackend(t, fakemc.Options{Name: "room"})
	deadAddr := laterAddress(t)
	s := newServer("lobby", []string{"lobby.test"}, deadAddr, room.Addr())
	lp := startLBProxy(t, nil, s)
	lp.joinLive(t, "lobby.test", 3, "room") // three refused dials eject the first address
	lp.expectEvents(t, transition{deadAddr, "unknown", "unhealthy"})

	back := startBackendAt(t, deadAddr, fakemc.Options{Name: "back", OnLogin: func(c net.Conn, _ *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		_, _ = c.Write(mc.EncodeLoginDisconnect("The server is full!"))
	}})
	lp.clock.Advance(31 * time.Second)
	lp.joinLive(t, "lobby.test", 5, "room")
	if n := back.Logins.Load(); n != 1 {
		t.Fatalf("the returning full replica saw %d logins, want exactly the one recovery attempt", n)
	}
	lp.expectEvents(t, transition{deadAddr, "unhealthy", "probing"}, transition{deadAddr, "probing", "healthy"})
}

// TestE2ECapacityAwareSkip: once a status ping relayed through the proxy says a replica is
// 20/20, new logins skip it while another replica has room, until the verdict expires; when
// every replica is full, logins are still served.
func TestE2ECapacityAwareSkip(t *testing.T) {
	a := startBackend(t, fakemc.Options{Name: "a", Online: 20, Max: 20})
	b := startBackend(t, fakemc.Options{Name: "b", Online: 3, Max: 20})
	s := newServer("lobby", []string{"lobby.test"}, a.Addr(), b.Addr())
	s.Balance = "round_robin"
	lp := startLBProxy(t, nil, s)

	st := pingVia(t, lp.addr, "lobby.test")
	if st.Players.Online != 20 || st.Players.Max != 20 || a.StatusRequests.Load() != 1 {
		t.Fatalf("status came from the wrong replica: %d/%d, a saw %d status requests", st.Players.Online, st.Players.Max, a.StatusRequests.Load())
	}
	if !lp.snapshot(t, "lobby")[a.Addr()].Full {
		t.Fatal("a 20/20 status answer did not mark the replica full")
	}
	got := lp.joinLive(t, "lobby.test", 10, "b")
	if got["b"] != 10 || a.Logins.Load() != 0 {
		t.Fatalf("with a full: %v, a saw %d logins", got, a.Logins.Load())
	}

	// The verdict is trusted for FullTTL only; then a is balanced again.
	lp.clock.Advance(balance.DefaultFullTTL + time.Second)
	got = lp.joinLive(t, "lobby.test", 10, "a", "b")
	if got["a"] == 0 || got["b"] == 0 {
		t.Fatalf("after the full verdict expired: %v, want both replicas used", got)
	}

	// Both full: a fresh ping reports a full again (a is first in the status order once more),
	// then b; with nowhere to go, logins still reach a full replica rather than being refused.
	b.SetOnline(20)
	pingVia(t, lp.addr, "lobby.test") // a: 20/20
	lp.clock.Advance(6 * time.Second) // past the status cache TTL (5s)
	pingVia(t, lp.addr, "lobby.test") // a is full, so b is asked: 20/20
	snap := lp.snapshot(t, "lobby")
	if !snap[a.Addr()].Full || !snap[b.Addr()].Full {
		t.Fatalf("both replicas should read full: %+v", snap)
	}
	lp.joinLive(t, "lobby.test", 4, "a", "b")
}

// TestE2EStatusAndLegacyThroughDeadFirstAddress: with first_available and a dead first address,
// both the modern and the legacy (1.6) server-list ping show the second address's MOTD, before
// and after the dead address is ejected.
func TestE2EStatusAndLegacyThroughDeadFirstAddress(t *testing.T) {
	live := startBackend(t, fakemc.Options{Name: "second", MOTD: "second answers", Legacy: true, Online: 4, Max: 9})
	dead := deadAddress(t)
	s := newServer("lobby", []string{"lobby.test"}, dead, live.Addr())
	lp := startLBProxy(t, func(c *config.Config) { c.StatusCache.TTL = config.Duration(time.Second) }, s)

	check := func(stage string) {
		t.Helper()
		if got := mc.DescriptionText(pingVia(t, lp.addr, "lobby.test").Description); got != "second answers" {
			t.Fatalf("%s: status MOTD %q", stage, got)
		}
		conn, err := net.Dial("tcp", lp.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write(mc.EncodeLegacyPing(mc.LegacyPing{Form: mc.Legacy16, Protocol: 78, Host: "lobby.test", Port: 25565})); err != nil {
			t.Fatal(err)
		}
		reply, err := mc.ReadLegacyPingReply(bufio.NewReader(conn))
		if err != nil {
			t.Fatalf("%s: legacy ping: %v", stage, err)
		}
		if reply.MOTD != "second answers" || reply.Online != 4 || reply.Max != 9 {
			t.Fatalf("%s: legacy reply %+v", stage, reply)
		}
	}
	check("dead first address")
	if n := live.LegacyPings.Load(); n != 1 {
		t.Fatalf("backend saw %d legacy pings, want 1", n)
	}
	// A status answer proves an address; a failed status relay proves nothing.
	if snap := lp.snapshot(t, "lobby"); snap[live.Addr()].Health != balance.StateHealthy || snap[dead].Health != balance.StateUnknown {
		t.Fatalf("after pings: live %s, dead %s; want healthy, unknown", snap[live.Addr()].Health, snap[dead].Health)
	}

	// Status failures never eject; logins do. After three refused login dials the dead address
	// sits at the tail of the order and pings go straight to the live one.
	lp.joinLive(t, "lobby.test", 3, "second")
	lp.expectEvents(t, transition{dead, "unknown", "unhealthy"})
	lp.clock.Advance(2 * time.Second) // past the status cache TTL
	check("dead first address ejected")
	if n := live.LegacyPings.Load(); n != 2 {
		t.Fatalf("backend saw %d legacy pings, want 2", n)
	}
}

// TestE2EVanillaTranslatableFullKick: modern vanilla kicks with the translatable component
// multiplayer.disconnect.server_full rather than literal text; it counts as "full" under the
// default patterns, and a player refused everywhere reads the message, not the key.
func TestE2EVanillaTranslatableFullKick(t *testing.T) {
	vanillaFull := func(c net.Conn, _ *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		_, _ = c.Write(mc.EncodeLoginDisconnectJSON([]byte(`{"translate":"multiplayer.disconnect.server_full"}`)))
	}
	full := startBackend(t, fakemc.Options{Name: "full", OnLogin: vanillaFull})
	room := startBackend(t, fakemc.Options{Name: "room"})
	lp := startLBProxy(t, nil, newServer("lobby", []string{"lobby.test"}, full.Addr(), room.Addr()))
	lp.joinLive(t, "lobby.test", 3, "room")
	if full.Logins.Load() != 1 {
		t.Fatalf("vanilla full replica saw %d logins, want 1", full.Logins.Load())
	}

	other := startBackend(t, fakemc.Options{Name: "other", OnLogin: vanillaFull})
	lp2 := startLBProxy(t, nil, newServer("lobby", []string{"lobby.test"}, other.Addr()))
	if text := lp2.join(t, "lobby.test", "Steve"); text != "The server is full!" {
		t.Fatalf("all full: player read %q", text)
	}
}
