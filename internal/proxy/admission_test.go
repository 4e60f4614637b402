package proxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
	"github.com/infrarust-go/infrarust/internal/proxy/health"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

// clientKind is one of the four ways a client can open a connection; the
// admission chain must treat them all alike.
type clientKind struct {
	name string
	// try runs one attempt and returns what the client got: a MOTD or kick text,
	// or an error when the proxy closed without a word.
	try func(t *testing.T, addr string, f from, host string) (string, error)
}

var clientKinds = []clientKind{
	{"modern ping", func(t *testing.T, addr string, f from, host string) (string, error) {
		return pingResult(t, addr, f, host)
	}},
	{"modern login", func(t *testing.T, addr string, f from, host string) (string, error) {
		return loginResult(t, addr, f, host, loginStartOf("Alex"))
	}},
	{"legacy ping", func(t *testing.T, addr string, f from, host string) (string, error) {
		c, err := dialFrom(t, addr, f)
		if err != nil {
			return "", err
		}
		defer c.Close()
		return legacyPingOn(c, host)
	}},
	{"legacy login", func(t *testing.T, addr string, f from, host string) (string, error) {
		c, err := dialFrom(t, addr, f)
		if err != nil {
			return "", err
		}
		defer c.Close()
		return legacyLoginOn(c, host, "Alex")
	}},
}

func legacyPingOn(c net.Conn, host string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(mc.EncodeLegacyPing(mc.LegacyPing{Form: mc.Legacy16, Protocol: 78, Host: host, Port: 25565})); err != nil {
		return "", err
	}
	st, err := mc.ReadLegacyPingReply(bufio.NewReader(c))
	if err != nil {
		return "", err
	}
	return st.MOTD, nil
}

// legacyLoginOn sends a 1.6 login handshake and returns the 0xFF kick text the
// proxy (or the backend) answered with.
func legacyLoginOn(c net.Conn, host, name string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(mc.EncodeLegacyLogin(mc.LegacyLogin{Protocol: 78, Username: name, Host: host, Port: 25565})); err != nil {
		return "", err
	}
	return readLegacyKick(c)
}

func readLegacyKick(c net.Conn) (string, error) {
	var hdr [3]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return "", err
	}
	if hdr[0] != 0xFF {
		return "", fmt.Errorf("legacy answer starts with 0x%02x, want a 0xff kick", hdr[0])
	}
	b := make([]byte, 2*int(binary.BigEndian.Uint16(hdr[1:])))
	if _, err := io.ReadFull(c, b); err != nil {
		return "", err
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		units[i] = binary.BigEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(units)), nil
}

// legacyBackend is a pre-1.7 server: it reads a legacy login and kicks with a
// greeting that names it, so a test sees where the login landed.
func legacyBackend(t *testing.T, name string) (string, *atomic.Int64) {
	t.Helper()
	var logins atomic.Int64
	addr := testutil.ServeTCP(t, func(c net.Conn) {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		ll, _, err := mc.ReadLegacyLogin(bufio.NewReader(c))
		if err != nil {
			return
		}
		logins.Add(1)
		_, _ = c.Write(mc.EncodeLegacyKick("You reached " + name + " (as " + ll.Username + ")"))
	})
	return addr, &logins
}

// Every kind of client is refused by the same steps, and a refused client never
// spends a rate-limit token: after three refusals of each kind from one IP, that
// IP's first accepted connection of the same kind is still served (the buckets
// hold one token each).
func TestRefusedConnectionsSpendNoTokensOnEveryPath(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "lobby motd", Legacy: true})
	legacyAddr, _ := legacyBackend(t, "old")
	clock := &testClock{}
	store, err := bans.Open("", clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Add(bans.Ban{Type: bans.TypeIP, Value: "10.0.0.66", Reason: "bot"}, clock.Now()); err != nil {
		t.Fatal(err)
	}
	lobby := newServer("lobby", []string{"lobby.com"}, b.Addr())
	old := newServer("old", []string{"old.com"}, legacyAddr)
	walled := newServer("walled", []string{"walled.com"}, b.Addr())
	walled.IPFilter.Deny = []string{"10.0.0.0/8"}
	tp := startProxyOpts(t, func(c *config.Config) {
		c.ReceiveProxyProtocol = true
		c.UnknownDomainBehavior = "drop"
		c.IPFilter.Deny = []string{"192.0.2.0/24"}
		c.RateLimit.Enabled = true
		c.RateLimit.MaxConnections = 1
		c.RateLimit.Window = config.Duration(time.Hour)
		c.RateLimit.StatusMax = 1
		c.RateLimit.StatusWindow = config.Duration(time.Hour)
	}, Options{Now: clock.Now, Bans: store}, lobby, old, walled)

	refusals := []struct {
		name string
		from from
		host string
	}{
		{"global ip_filter", v2("192.0.2.9:1000"), "lobby.com"},
		{"server ip_filter", v2("10.0.0.7:1000"), "walled.com"},
		{"ip ban", v2("10.0.0.66:1000"), "lobby.com"},
		{"unknown domain (drop)", v2("10.0.0.8:1000"), "nowhere.com"},
	}
	want := map[string]string{
		"modern ping": "lobby motd", "modern login": landed("lobby", "Alex"),
		"legacy ping": "lobby motd", "legacy login": "You reached old (as Alex)",
	}
	for i, kind := range clientKinds {
		host := "lobby.com"
		if kind.name == "legacy login" {
			host = "old.com"
		}
		for _, r := range refusals {
			for n := 0; n < 3; n++ {
				got, err := kind.try(t, tp.addr, r.from, r.host)
				if r.name == "ip ban" && (kind.name == "modern login" || kind.name == "legacy login") {
					if got != "You are banned: bot" {
						t.Fatalf("%s, %s: got %q, %v; want the ban reason", kind.name, r.name, got, err)
					}
					continue
				}
				if err == nil {
					t.Fatalf("%s, %s: got an answer %q; want the connection closed", kind.name, r.name, got)
				}
			}
		}
		// Each refusal's IP now connects to a server that admits it; its single
		// token must still be there. A fresh source port range per kind keeps the
		// buckets of different kinds apart from each other's accepted connection.
		for _, r := range refusals {
			if r.name == "global ip_filter" {
				continue // that IP is refused everywhere
			}
			ip, _, _ := net.SplitHostPort(r.from.src)
			if r.name == "ip ban" {
				continue // a banned IP is refused everywhere too
			}
			f := v2(net.JoinHostPort(ip, "2000"))
			got, err := kind.try(t, tp.addr, f, host)
			if err != nil || got != want[kind.name] {
				t.Fatalf("%s after %s refusals: got %q, %v; want %q (a refusal spent the token)", kind.name, r.name, got, err, want[kind.name])
			}
			// The token is spent now: the next one is limited, proving the bucket works.
			got, err = kind.try(t, tp.addr, f, host)
			if err == nil && got == want[kind.name] {
				t.Fatalf("%s: a second connection from %s was served; the limiter did not count", kind.name, ip)
			}
		}
		// Next kind: fresh IPs so this kind's spent tokens do not count.
		for j := range refusals {
			refusals[j].from = shiftIP(refusals[j].from, i+1)
		}
	}
}

// shiftIP moves a 10.0.0.x test source to 10.(n).0.x so each client kind has its
// own buckets (the ban and the global filter keep their addresses).
func shiftIP(f from, n int) from {
	host, port, _ := net.SplitHostPort(f.src)
	ip := net.ParseIP(host).To4()
	if ip[0] != 10 || host == "10.0.0.66" {
		return f
	}
	ip[1] = byte(n)
	return from{f.v, net.JoinHostPort(ip.String(), port)}
}

// A legacy (pre-1.7) login wakes a managed server like a modern one, then lands.
func TestLegacyLoginWakesManagedServer(t *testing.T) {
	addr, logins := legacyBackend(t, "sleepy")
	s := newServer("sleepy", []string{"sleepy.com"}, addr)
	s.ServerManager = &config.ServerManager{Type: "local", Command: "true"}
	m := newFakeManager(map[string]string{"sleepy": "sleeping"}, func(_ context.Context, server string) error { return nil })
	m.start = func(_ context.Context, server string) error {
		m.setState(server, "online")
		return nil
	}
	tp := startProxyOpts(t, nil, Options{Manager: m}, s)
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := legacyLoginOn(c, "sleepy.com", "Steve")
	if err != nil || got != "You reached sleepy (as Steve)" {
		t.Fatalf("legacy login: %q, %v", got, err)
	}
	if n := m.ensured.Load(); n != 1 {
		t.Fatalf("EnsureStarted called %d times for a legacy login, want 1", n)
	}
	if logins.Load() != 1 {
		t.Fatalf("backend saw %d legacy logins", logins.Load())
	}
}

// A legacy ping of a managed server that is asleep shows the same sleeping MOTD
// as a modern ping, and wakes nothing.
func TestLegacyPingOfSleepingServer(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "sleepy", MOTD: "awake", Legacy: true})
	s := newServer("sleepy", []string{"sleepy.com"}, b.Addr())
	s.MOTD.Sleeping = textMOTD("zzz")
	m := newFakeManager(map[string]string{"sleepy": "sleeping"}, nil)
	tp := startProxyOpts(t, nil, Options{Manager: m}, s)
	for _, kind := range []clientKind{clientKinds[0], clientKinds[2]} {
		got, err := kind.try(t, tp.addr, direct, "sleepy.com")
		if err != nil || got != "zzz" {
			t.Fatalf("%s of a sleeping server: %q, %v; want the sleeping MOTD", kind.name, got, err)
		}
	}
	if m.ensured.Load() != 0 || b.LegacyPings.Load() != 0 || b.StatusRequests.Load() != 0 {
		t.Fatalf("a ping reached the sleeping server or woke it: ensured %d, legacy %d, status %d",
			m.ensured.Load(), b.LegacyPings.Load(), b.StatusRequests.Load())
	}
}

// frozenBackend accepts connections and never answers: a hung JVM.
func frozenBackend(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			accepted.Add(1)
			held = append(held, c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), &accepted
}

// A replica that accepts TCP but never answers the login costs connect_timeout,
// like a dead one: the player lands on the next replica and the frozen address
// counts a failure.
func TestFrozenReplicaCostsConnectTimeout(t *testing.T) {
	frozen, accepted := frozenBackend(t)
	good := startBackend(t, fakemc.Options{Name: "good"})
	s := newServer("lobby", []string{"lobby.com"}, frozen, good.Addr())
	tp := startProxy(t, func(c *config.Config) { c.ConnectTimeout = config.Duration(300 * time.Millisecond) }, s)
	// The client gives the proxy far less than the old 15 s first-packet wait.
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	got, err := loginOn(c, "lobby.com", loginStartOf("Alex"))
	if err != nil || got != landed("good", "Alex") {
		t.Fatalf("login with a frozen first replica: %q, %v", got, err)
	}
	if accepted.Load() != 1 {
		t.Fatalf("frozen replica accepted %d connections, want 1", accepted.Load())
	}
	v, _ := tp.Server("lobby", time.Now())
	for _, be := range v.Backends {
		if be.Address == frozen && be.LastFailure.IsZero() {
			t.Fatalf("the frozen address counts no failure: %+v", be)
		}
	}
}

// countingDialer is an Options.Dialer that counts and can refuse.
type countingDialer struct {
	dials atomic.Int64
	fail  atomic.Pointer[error] // set by the test while the proxy dials
}

func (d *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.dials.Add(1)
	if err := d.fail.Load(); err != nil {
		return nil, *err
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// Every backend connection goes through Options.Dialer: logins and status relays.
func TestDialerIsUsedForEveryBackendConnection(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "hi"})
	d := &countingDialer{}
	tp := startProxyOpts(t, func(c *config.Config) { c.StatusCache.TTL = 0 }, Options{Dialer: d}, newServer("lobby", []string{"lobby.com"}, b.Addr()))
	mustPing(t, tp.addr, direct, "lobby.com", "hi")
	mustLogin(t, tp.addr, direct, "lobby.com", "Alex", landed("lobby", "Alex"))
	if n := d.dials.Load(); n != 2 {
		t.Fatalf("dialer used %d times, want 2 (one ping relay, one login)", n)
	}
	injected := errors.New("injected")
	d.fail.Store(&injected)
	mustLogin(t, tp.addr, direct, "lobby.com", "Alex", "unreachable")
}

// Shutdown cancels a backend dial in progress: a login waiting on a dial that
// would take connect_timeout ends at once.
func TestShutdownCancelsBackendDials(t *testing.T) {
	blocked := make(chan struct{})
	d := dialFunc(func(ctx context.Context, _, _ string) (net.Conn, error) {
		close(blocked)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	tp := startProxyOpts(t, func(c *config.Config) { c.ConnectTimeout = config.Duration(time.Hour) }, Options{Dialer: d}, newServer("lobby", []string{"lobby.com"}, "127.0.0.1:1"))
	res := make(chan string, 1)
	go func() {
		got, _ := loginResult(t, tp.addr, direct, "lobby.com", loginStartOf("Alex"))
		res <- got
	}()
	<-blocked
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = tp.Shutdown(sctx)
	select {
	case got := <-res:
		if got == "" {
			t.Fatal("the player was closed without a word")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a login stayed in its backend dial after shutdown")
	}
}

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}

// A relayed legacy ping ends as soon as the backend's reply is complete, not when
// the backend closes (which some never do before connect_timeout).
func TestLegacyPingRelayStopsAtReply(t *testing.T) {
	release := make(chan struct{})
	addr := testutil.ServeTCP(t, func(c net.Conn) {
		ping, _, err := mc.ReadLegacyPing(bufio.NewReader(c))
		if err != nil {
			return
		}
		_, _ = c.Write(mc.EncodeLegacyPingReply(ping.Form, mc.LegacyStatus{Protocol: 78, Version: "1.6.4", MOTD: "held open", Max: 5}))
		<-release // keep the connection open after the reply
	})
	t.Cleanup(func() { close(release) }) // before the listener's own cleanup
	tp := startProxy(t, func(c *config.Config) { c.ConnectTimeout = config.Duration(time.Hour) },
		newServer("old", []string{"old.com"}, addr))
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := legacyPingOn(c, "old.com") // the client waits 5 s at most
	if err != nil || got != "held open" {
		t.Fatalf("legacy ping via a backend that keeps the connection open: %q, %v", got, err)
	}
}

// A frozen replica is ejected by its first silent login: the next logins go
// straight to the live replica instead of each waiting connect_timeout until three
// have failed, and only a status ping (not a TCP connect) can readmit it.
func TestFrozenReplicaEjectedAtFirstSilence(t *testing.T) {
	frozen, accepted := frozenBackend(t)
	good := startBackend(t, fakemc.Options{Name: "good"})
	s := newServer("lobby", []string{"lobby.com"}, frozen, good.Addr())
	tp := startProxy(t, func(c *config.Config) { c.ConnectTimeout = config.Duration(300 * time.Millisecond) }, s)
	for i := 0; i < 4; i++ {
		mustLogin(t, tp.addr, direct, "lobby.com", "Alex", landed("good", "Alex"))
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("the frozen replica took %d logins, want 1 (ejected at its first silence)", n)
	}
	v, _ := tp.Server("lobby", time.Now())
	if st := v.Backends[0]; st.Health != balance.StateUnhealthy {
		t.Fatalf("frozen replica is %s after a silent login, want unhealthy", st.Health)
	}
	if !tp.state.Load().servers["lobby"].pool.NeedsProtocolProof(frozen) {
		t.Fatal("the frozen replica must need a Minecraft-level proof before readmission")
	}
	// The proof a prober would ask for fails: a status ping gets no answer.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := tp.Probe(ctx, "lobby", health.KindStatusPing, frozen); err == nil {
		t.Fatal("a status ping of a frozen server succeeded")
	}
}

// Probes speak to a backend as players' connections do: a server that requires
// the PROXY header gets one (LOCAL, for a health check) from both probe kinds.
func TestProbeSendsProxyHeaderWhenServerRequiresIt(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "pp", MOTD: "pp motd", ProxyProtocol: true})
	s := newServer("pp", []string{"pp.com"}, b.Addr())
	s.SendProxyProtocol = true
	tp := startProxy(t, nil, s)
	for _, kind := range []health.Kind{health.KindTCP, health.KindStatusPing} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := tp.Probe(ctx, "pp", kind, b.Addr())
		cancel()
		if err != nil {
			t.Fatalf("%s probe of a PROXY-protocol backend: %v", kind, err)
		}
	}
	if n := b.StatusRequests.Load(); n != 1 {
		t.Fatalf("backend answered %d status requests, want 1 (the status_ping probe)", n)
	}
	waitFor(t, "two LOCAL headers", func() bool {
		src := b.ProxySources()
		return len(src) == 2 && src[0] == "local" && src[1] == "local"
	})
}
