package proxy

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// onlyClaim is the identity key of the one player online.
func onlyClaim(t *testing.T, tp *testProxy) string {
	t.Helper()
	tp.roster.mu.Lock()
	defer tp.roster.mu.Unlock()
	if len(tp.roster.claims) != 1 {
		t.Fatalf("%d claims, want 1", len(tp.roster.claims))
	}
	for k := range tp.roster.claims {
		return k
	}
	return ""
}

func expectKick(t *testing.T, pc *playClient, want string) {
	t.Helper()
	select {
	case k := <-pc.kicked:
		if k != want {
			t.Fatalf("kicked with %q, want %q", k, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no kick %q", want)
	}
}

func expectNoKick(t *testing.T, pc *playClient) {
	t.Helper()
	pc.drain()
	pc.await(t, "hello from A") // still relayed: the session goes on
	select {
	case k := <-pc.kicked:
		t.Fatalf("kicked with %q", k)
	default:
	}
}

// A duplicate on another proxy of the fleet is settled by one rule on both
// sides: under "replace" the older session ends, under "refuse" the newer one;
// a session that proved more (ours here is a bare offline name) wins either way.
func TestFleetDuplicateSessionsSettle(t *testing.T) {
	for _, tc := range []struct {
		policy      config.DuplicateLogin
		theirsAt    time.Duration // the other proxy's login, from ours
		theirProof  int
		wantKick    string
		description string
	}{
		{config.DuplicateReplace, time.Second, provenNothing, kickReplaced, "theirs is newer: ours ends"},
		{config.DuplicateReplace, -time.Second, provenNothing, "", "ours is newer: it stays"},
		{config.DuplicateRefuse, -time.Second, provenNothing, kickAlreadyOnline, "theirs was first: ours ends"},
		{config.DuplicateRefuse, time.Second, provenNothing, "", "ours was first: it stays"},
		{config.DuplicateRefuse, time.Second, provenPassword, kickReplaced, "theirs is newer and proved more: ours ends"},
		{config.DuplicateReplace, -time.Second, provenMojang, kickAlreadyOnline, "ours is newer and proved less: it ends"},
	} {
		t.Run(string(tc.policy)+": "+tc.description, func(t *testing.T) {
			a := startPlayBackend(t, "A")
			tp := startProxy(t, func(c *config.Config) { c.DuplicateLogin = tc.policy }, interceptedServer("lobby", config.ModeOffline, a.addr))
			pc := joinAndPlay(t, tp.addr, "lobby.test", "Steve")
			pc.await(t, "hello from A")
			key := onlyClaim(t, tp)
			tp.roster.mu.Lock()
			at := tp.roster.claims[key].at
			tp.roster.mu.Unlock()
			tp.SessionClaimed(key, at.Add(tc.theirsAt), tc.theirProof, "proxy-b", "proxy-a")
			tp.SessionClaimed("uuid:00000000000000000000000000000000", at.Add(time.Hour), 0, "proxy-b", "proxy-a") // nobody here
			if tc.wantKick == "" {
				expectNoKick(t, pc)
				return
			}
			expectKick(t, pc, tc.wantKick)
		})
	}
}

// On a passthrough server the proxy claims no identity (the name is only what the
// client says: a stranger typing it must not end a real player's session), so
// two logins with one name both go on; an operator's kick of such a player ends
// exactly that stream under either forwarder (under the epoll forwarder closing
// the taken socket did nothing).
func TestPassthroughKickEndsTheStream(t *testing.T) {
	for _, fwd := range []forward.Kind{forward.Epoll, forward.Goroutine} {
		t.Run(string(fwd), func(t *testing.T) {
			echo := func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
				if _, err := c.Write(mc.AppendFrame(nil, 0x02, make([]byte, 17))); err != nil {
					return
				}
				_, _ = br.WriteTo(c)
			}
			be := startBackend(t, fakemc.Options{Name: "pt", OnLogin: echo}).Addr()
			tp := startProxy(t, func(c *config.Config) { c.Forwarder = fwd }, newServer("pt", []string{"pt.test"}, be))
			dial := func(name string) net.Conn {
				c, err := net.Dial("tcp", tp.addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				out := mc.Handshake{ProtocolVersion: 767, ServerAddress: "pt.test", ServerPort: 25565, NextState: mc.StateLogin}.Encode()
				out = append(out, mc.LoginStart{Name: name}.Encode(767)...)
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Write(out); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(c, make([]byte, 19)); err != nil {
					t.Fatalf("first login packet: %v", err)
				}
				return c
			}
			echoes := func(c net.Conn) bool {
				if _, err := c.Write([]byte("ping")); err != nil {
					return false
				}
				got := make([]byte, 4)
				_, err := io.ReadFull(c, got)
				return err == nil && string(got) == "ping"
			}
			first, second, other := dial("Twin"), dial("Twin"), dial("Other")
			waitFor(t, "three players", func() bool { return len(tp.Players("")) == 3 })
			if !echoes(first) || !echoes(second) {
				t.Fatal("two passthrough logins with one name must both go on")
			}
			other2, err := tp.Player("Other")
			if err != nil {
				t.Fatal(err)
			}
			other2.Kick("bye")
			if n, err := other.Read(make([]byte, 1)); err == nil {
				t.Fatalf("the kicked player's stream still reads (%d bytes)", n)
			}
			waitFor(t, "the kicked player gone", func() bool { return len(tp.Players("")) == 2 })
			if !echoes(first) {
				t.Fatal("a kick of another player ended this stream")
			}
		})
	}
}

// A legacy login reads no answer from its backend, so it is never the proof a
// frozen address owes: past the backoff, when a login would carry the address's
// recovery attempt, a legacy login does not touch the frozen address, which
// stays out until a Minecraft answer (a status ping) readmits it.
func TestLegacyLoginIsNoProofForAFrozenAddress(t *testing.T) {
	frozen, accepted := frozenBackend(t)
	good := startBackend(t, fakemc.Options{Name: "good"})
	s := newServer("lobby", []string{"lobby.com"}, frozen, good.Addr())
	s.ActiveHealth = &config.ActiveHealth{Enabled: false}
	clock := &testClock{}
	tp := startProxyOpts(t, func(c *config.Config) { c.ConnectTimeout = config.Duration(300 * time.Millisecond) }, Options{Now: clock.Now}, s)
	mustLogin(t, tp.addr, direct, "lobby.com", "Alex", landed("good", "Alex"))
	if n := accepted.Load(); n != 1 || !tp.state.Load().servers["lobby"].pool.NeedsProtocolProof(frozen) {
		t.Fatalf("setup: the frozen address took %d logins and must owe a proof", n)
	}
	clock.Advance(time.Hour) // far past any backoff: the next login would be its recovery attempt
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// What the fake backend answers a legacy login does not matter: where it went does.
	_, _ = legacyLoginOn(c, "lobby.com", "Alex")
	if n := accepted.Load(); n != 1 {
		t.Fatalf("a legacy login reached the frozen address (%d connections)", n)
	}
	if !tp.state.Load().servers["lobby"].pool.NeedsProtocolProof(frozen) {
		t.Fatal("the frozen address was readmitted without a Minecraft answer")
	}
}

// offline_names widens the rule, never past what a ban can name: with a rule
// that admits anything, a dotted name gets in and a name with a space does not.
func TestOfflineNamesStayBannable(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby"})
	tp := startProxy(t, func(c *config.Config) { c.OfflineNames = `^.{1,20}$` }, newServer("lobby", []string{"lobby.com"}, b.Addr()))
	for _, tc := range []struct{ name, want string }{
		{"x.y", "You reached lobby (as x.y)"},
		{"a b_0", `Invalid username "a b_0": this network does not allow that name`},
		{"ab", "You reached lobby (as ab)"},
	} {
		c, _, f, err := login(t, tp.addr, "lobby.com", tc.name)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if text, _ := mc.ParseLoginDisconnect(f); text != tc.want {
			t.Errorf("%q: %q, want %q", tc.name, text, tc.want)
		}
	}
}

// Two spellings of one UUID are one identity; two UUIDs are two.
func TestIdentityKeyIgnoresCaseAndDashes(t *testing.T) {
	a := identityKey(&conn{uuid: "069A79F4-44E9-4726-A5BE-FCA90E38AAF5"})
	b := identityKey(&conn{uuid: "069a79f444e94726a5befca90e38aaf5"})
	if a != "uuid:069a79f444e94726a5befca90e38aaf5" || a != b {
		t.Fatalf("keys %q and %q, want both uuid:069a79f444e94726a5befca90e38aaf5", a, b)
	}
	if c := identityKey(&conn{uuid: "069a79f4-44e9-4726-a5be-fca90e38aaf6"}); c == a {
		t.Fatalf("two UUIDs share the key %q", c)
	}
}
