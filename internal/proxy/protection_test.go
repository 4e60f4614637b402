package proxy

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	proxyproto "github.com/pires/go-proxyproto"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// testClock is the wall clock plus an offset the test moves forward. The limiter and
// the ban store see time jump, while socket deadlines the proxy derives from its clock
// stay in the future, so nothing has to sleep through a window.
type testClock struct{ off atomic.Int64 }

func (c *testClock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

func (c *testClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// ppHeader is a PROXY header of the given version claiming client src ("ip:port").
func ppHeader(t *testing.T, version byte, src string) []byte {
	t.Helper()
	s := net.TCPAddrFromAddrPort(netip.MustParseAddrPort(src))
	d := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1).To4(), Port: 25565}
	if s.IP.To4() == nil {
		d = &net.TCPAddr{IP: net.IPv6loopback, Port: 25565}
	}
	b, err := proxyproto.HeaderProxyFromAddrs(version, s, d).Format()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// from is who a test client claims to be: a PROXY header version and source, or
// nobody (a plain connection from 127.0.0.1).
type from struct {
	v   byte
	src string
}

var direct = from{}

func v2(src string) from { return from{2, src} }

// dialFrom connects to the proxy and, for a claimed source, sends its PROXY header.
// It never calls t.Fatal on I/O so it can run in helper goroutines.
func dialFrom(t *testing.T, addr string, f from) (net.Conn, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if f.v != 0 {
		// The header goes out with the first packet, as a load balancer sends it.
		return &headerConn{Conn: c, hdr: ppHeader(t, f.v, f.src)}, nil
	}
	return c, nil
}

// headerConn prepends a PROXY header to its first write.
type headerConn struct {
	net.Conn
	hdr []byte
}

func (c *headerConn) Write(b []byte) (int, error) {
	if c.hdr != nil {
		out := append(c.hdr, b...)
		c.hdr = nil
		n, err := c.Conn.Write(out)
		return max(0, n-(len(out)-len(b))), err
	}
	return c.Conn.Write(b)
}

// sendHeaderOnly writes just the PROXY header (no Minecraft packet behind it).
func sendHeaderOnly(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := c.Write(nil); err != nil {
		t.Fatal(err)
	}
}

// loginResult sends handshake + login start and reports the Login Disconnect text,
// "packet 0xNN" for any other first packet, or the read error when the proxy closed
// without an answer.
func loginResult(t *testing.T, addr string, f from, host string, ls mc.LoginStart) (string, error) {
	t.Helper()
	c, err := dialFrom(t, addr, f)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return loginOn(c, host, ls)
}

func loginOn(c net.Conn, host string, ls mc.LoginStart) (string, error) {
	out := mc.Handshake{ProtocolVersion: 767, ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	out = append(out, ls.Encode(767)...)
	if _, err := c.Write(out); err != nil {
		return "", err
	}
	f, err := mc.ReadFrame(bufio.NewReader(c), mc.MaxFrameSize)
	if err != nil {
		return "", err
	}
	if text, ok := mc.ParseLoginDisconnect(f); ok {
		return text, nil
	}
	return fmt.Sprintf("packet 0x%02x", f.ID), nil
}

func loginStartOf(name string) mc.LoginStart { return mc.LoginStart{Name: name, HasUUID: true} }

// mustLogin asserts the login got the Login Disconnect text want.
func mustLogin(t *testing.T, addr string, f from, host, name, want string) {
	t.Helper()
	got, err := loginResult(t, addr, f, host, loginStartOf(name))
	if err != nil {
		t.Fatalf("login %s@%s from %v: closed without an answer (%v), want %q", name, host, f, err, want)
	}
	if got != want {
		t.Fatalf("login %s@%s from %v: %q, want %q", name, host, f, got, want)
	}
}

// mustBeRefusedSilently asserts the login got no answer at all: the proxy closed.
func mustBeRefusedSilently(t *testing.T, addr string, f from, host, name string) {
	t.Helper()
	got, err := loginResult(t, addr, f, host, loginStartOf(name))
	if err == nil {
		t.Fatalf("login %s@%s from %v answered %q; want a close without an answer", name, host, f, got)
	}
	assertClosedNotTimeout(t, err)
}

// pingResult runs a status exchange and returns the MOTD text, or the error.
func pingResult(t *testing.T, addr string, f from, host string) (string, error) {
	t.Helper()
	c, err := dialFrom(t, addr, f)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return pingOn(c, host)
}

func pingOn(c net.Conn, host string) (string, error) {
	body, _, err := mc.QueryStatus(c, host, 25565, 767)
	if err != nil {
		return "", err
	}
	var st mc.StatusResponse
	if err := json.Unmarshal(body, &st); err != nil {
		return "", err
	}
	return mc.DescriptionText(st.Description), nil
}

func mustPing(t *testing.T, addr string, f from, host, want string) {
	t.Helper()
	got, err := pingResult(t, addr, f, host)
	if err != nil {
		t.Fatalf("ping %s from %v: %v, want MOTD %q", host, f, err, want)
	}
	if got != want {
		t.Fatalf("ping %s from %v: MOTD %q, want %q", host, f, got, want)
	}
}

// mustPingBeClosed asserts a status ping got no status response.
func mustPingBeClosed(t *testing.T, addr string, f from, host string) {
	t.Helper()
	got, err := pingResult(t, addr, f, host)
	if err == nil {
		t.Fatalf("ping %s from %v answered MOTD %q; want the connection closed", host, f, got)
	}
	assertClosedNotTimeout(t, err)
}

// assertClosedNotTimeout fails when err is our own read deadline: the proxy was
// expected to close the connection, not to leave it hanging.
func assertClosedNotTimeout(t *testing.T, err error) {
	t.Helper()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection was left open (%v); want it closed by the proxy", err)
	}
}

// expectEOF reads from c and asserts the proxy closes it before deadline, with no bytes.
func expectEOF(t *testing.T, c net.Conn, within time.Duration, what string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	n, err := c.Read(make([]byte, 64))
	if n > 0 {
		t.Fatalf("%s: proxy sent %d bytes; want a close without an answer", what, n)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: connection still open after %v; want it closed", what, within)
	}
}

// waitFor polls a condition of the proxy's own state (not a time window).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (p *Proxy) perIPCount(ip string) int {
	p.door.perIP.mu.Lock()
	defer p.door.perIP.mu.Unlock()
	return p.door.perIP.m[netip.MustParseAddr(ip)]
}

func landed(server, name string) string { return "You reached " + server + " (as " + name + ")" }

const rateLimited = "Rate limit exceeded"

func TestRateLimitEndToEnd(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "lobby motd"})
	clock := &testClock{}
	const statusMax = 40
	tp := startProxyOpts(t, func(c *config.Config) {
		c.ReceiveProxyProtocol = true // distinct client IPs from one test process
		c.RateLimit.Enabled = true
		c.RateLimit.MaxConnections = 3
		c.RateLimit.Window = config.Duration(time.Hour) // one token per 20 min
		c.RateLimit.StatusMax = statusMax
		c.RateLimit.StatusWindow = config.Duration(time.Hour)
	}, Options{Now: clock.Now}, newServer("lobby", []string{"lobby.com"}, b.Addr()))

	t.Run("three logins then the exact disconnect, a token comes back", func(t *testing.T) {
		a := v2("198.51.100.1:40000")
		for i := 0; i < 3; i++ {
			mustLogin(t, tp.addr, a, "lobby.com", "Alex", landed("lobby", "Alex"))
		}
		mustLogin(t, tp.addr, a, "lobby.com", "Alex", rateLimited)
		mustLogin(t, tp.addr, a, "lobby.com", "Alex", rateLimited)
		// Another IP is not affected.
		mustLogin(t, tp.addr, v2("198.51.100.2:40000"), "lobby.com", "Bob", landed("lobby", "Bob"))
		// A rejected login spent no status token: the same IP still sees the MOTD.
		mustPing(t, tp.addr, a, "lobby.com", "lobby motd")

		clock.Advance(10 * time.Minute) // half a token: still refused
		mustLogin(t, tp.addr, a, "lobby.com", "Alex", rateLimited)
		clock.Advance(10*time.Minute + time.Second) // window/max = 20 min: exactly one token back
		mustLogin(t, tp.addr, a, "lobby.com", "Alex", landed("lobby", "Alex"))
		mustLogin(t, tp.addr, a, "lobby.com", "Alex", rateLimited)
		clock.Advance(time.Hour) // a full window refills the whole burst
		for i := 0; i < 3; i++ {
			mustLogin(t, tp.addr, a, "lobby.com", "Alex", landed("lobby", "Alex"))
		}
		mustLogin(t, tp.addr, a, "lobby.com", "Alex", rateLimited)
	})

	t.Run("status pings never consume login tokens; status has its own limit", func(t *testing.T) {
		s := v2("198.51.100.3:40000")
		for i := 0; i < statusMax; i++ {
			mustPing(t, tp.addr, s, "lobby.com", "lobby motd")
		}
		for i := 0; i < 3; i++ { // the status bucket is empty, the login bucket full
			mustLogin(t, tp.addr, s, "lobby.com", "Steve", landed("lobby", "Steve"))
		}
		mustLogin(t, tp.addr, s, "lobby.com", "Steve", rateLimited)
		// Past status_max: closed without a status response.
		mustPingBeClosed(t, tp.addr, s, "lobby.com")
		mustPingBeClosed(t, tp.addr, s, "lobby.com")
		clock.Advance(time.Hour/statusMax + time.Second)
		mustPing(t, tp.addr, s, "lobby.com", "lobby motd")
		mustPingBeClosed(t, tp.addr, s, "lobby.com")
	})

	t.Run("transfer intent uses the login bucket", func(t *testing.T) {
		tr := v2("198.51.100.4:40000")
		for i := 0; i < 3; i++ {
			mustLogin(t, tp.addr, tr, "lobby.com", "Tess", landed("lobby", "Tess"))
		}
		c, err := dialFrom(t, tp.addr, tr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		out := mc.Handshake{ProtocolVersion: 767, ServerAddress: "lobby.com", ServerPort: 25565, NextState: mc.StateTransfer}.Encode()
		out = append(out, loginStartOf("Tess").Encode(767)...)
		if _, err := c.Write(out); err != nil {
			t.Fatal(err)
		}
		f, err := mc.ReadFrame(bufio.NewReader(c), mc.MaxFrameSize)
		if err != nil {
			t.Fatalf("transfer: %v", err)
		}
		if got := disconnectText(t, f); got != rateLimited {
			t.Fatalf("transfer after 3 logins: %q", got)
		}
	})

	if b.Logins.Load() != 3+1+1+3+3+3 {
		t.Fatalf("backend saw %d logins; rate-limited ones must never reach it", b.Logins.Load())
	}
}

func TestIPFilterEndToEnd(t *testing.T) {
	pub := startBackend(t, fakemc.Options{Name: "pub", MOTD: "pub motd"})
	priv := startBackend(t, fakemc.Options{Name: "priv", MOTD: "priv motd"})
	privCfg := newServer("priv", []string{"priv.com"}, priv.Addr())
	privCfg.IPFilter = config.IPFilter{Allow: []string{"203.0.113.0/24"}, Deny: []string{"203.0.113.66", "203.0.113.77"}}
	tp := startProxyOpts(t, func(c *config.Config) {
		c.ReceiveProxyProtocol = true
		c.HandshakeTimeout = config.Duration(time.Minute) // a close is the filter, never the budget
		c.IPFilter = config.IPFilter{
			Allow: []string{"198.51.100.0/24", "203.0.113.0/24", "2001:db8:1::/64"},
			Deny:  []string{"198.51.100.66/32", "2001:db8:1::bad/128"},
		}
		c.RateLimit.Enabled = true
		c.RateLimit.MaxConnections = 3
		c.RateLimit.Window = config.Duration(time.Hour)
	}, Options{Now: (&testClock{}).Now}, newServer("pub", []string{"pub.com"}, pub.Addr()), privCfg)

	t.Run("global filter closes before the handshake", func(t *testing.T) {
		for _, src := range []string{
			"192.0.2.1:1000",         // outside a non-empty allow list
			"198.51.100.66:1000",     // inside allow, but deny wins
			"[2001:db8:1::bad]:1000", // deny wins for IPv6 too
			"[2001:db8:2::1]:1000",
		} {
			c, err := dialFrom(t, tp.addr, v2(src))
			if err != nil {
				t.Fatal(err)
			}
			sendHeaderOnly(t, c)
			// No handshake is ever sent: only a filter running before it can close us.
			expectEOF(t, c, 5*time.Second, "globally filtered "+src)
			c.Close()
		}
		mustPing(t, tp.addr, v2("198.51.100.1:1000"), "pub.com", "pub motd")
		mustPing(t, tp.addr, v2("[2001:db8:1::1]:1000"), "pub.com", "pub motd")
	})

	t.Run("per-server filter after routing, deny wins over allow", func(t *testing.T) {
		mustLogin(t, tp.addr, v2("203.0.113.5:1000"), "priv.com", "Alex", landed("priv", "Alex"))
		mustPing(t, tp.addr, v2("203.0.113.5:1000"), "priv.com", "priv motd")
		// In priv's allow list but also in its deny list.
		mustBeRefusedSilently(t, tp.addr, v2("203.0.113.66:1000"), "priv.com", "Alex")
		mustPingBeClosed(t, tp.addr, v2("203.0.113.66:1000"), "priv.com")
		// Allowed globally, outside priv's allow list.
		mustBeRefusedSilently(t, tp.addr, v2("198.51.100.7:1000"), "priv.com", "Bob")
		// The same addresses reach the server without a filter: the check follows the route.
		mustLogin(t, tp.addr, v2("203.0.113.66:1000"), "pub.com", "Alex", landed("pub", "Alex"))
		mustLogin(t, tp.addr, v2("198.51.100.7:1000"), "pub.com", "Bob", landed("pub", "Bob"))
	})

	t.Run("filtered connections spend no rate-limit tokens", func(t *testing.T) {
		// Per server: five refused attempts, then the same IP still has its three logins.
		ip := v2("203.0.113.77:1000")
		for i := 0; i < 5; i++ {
			mustBeRefusedSilently(t, tp.addr, ip, "priv.com", "Carl")
			mustPingBeClosed(t, tp.addr, ip, "priv.com")
		}
		for i := 0; i < 3; i++ {
			mustLogin(t, tp.addr, ip, "pub.com", "Carl", landed("pub", "Carl"))
		}
		mustLogin(t, tp.addr, ip, "pub.com", "Carl", rateLimited)

		// Globally: 2001:db8:1::bad shares its /64 rate-limit key with 2001:db8:1::2,
		// so any token it spent would show up on its neighbour.
		for i := 0; i < 5; i++ {
			mustBeRefusedSilently(t, tp.addr, v2("[2001:db8:1::bad]:1000"), "pub.com", "Dan")
		}
		for i := 0; i < 3; i++ {
			mustLogin(t, tp.addr, v2("[2001:db8:1::2]:1000"), "pub.com", "Dan", landed("pub", "Dan"))
		}
		mustLogin(t, tp.addr, v2("[2001:db8:1::2]:1000"), "pub.com", "Dan", rateLimited)
	})
}

func TestBansEndToEnd(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "lobby motd"})
	clock := &testClock{}
	store, err := bans.Open("", clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	tp := startProxyOpts(t, func(c *config.Config) { c.ReceiveProxyProtocol = true },
		Options{Now: clock.Now, Bans: store}, newServer("lobby", []string{"lobby.com"}, b.Addr()))
	add := func(bn bans.Ban) bans.Ban {
		t.Helper()
		out, err := store.Add(bn, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	const altUUID = "069a79f4-44e9-4726-a5be-fca90e38aaf5"
	var altBytes [16]byte
	if _, err := hex.Decode(altBytes[:], []byte(strings.ReplaceAll(altUUID, "-", ""))); err != nil {
		t.Fatal(err)
	}
	add(bans.Ban{Type: bans.TypeIP, Value: "203.0.113.50", Reason: "griefing spawn"})
	add(bans.Ban{Type: bans.TypeIP, Value: "203.0.113.128/25", Reason: "botnet range"})
	add(bans.Ban{Type: bans.TypeUsername, Value: "Griefer", Reason: "x-ray client"})
	add(bans.Ban{Type: bans.TypeUUID, Value: altUUID, Reason: "alt account"})
	end := clock.Now().Add(2 * time.Hour)
	tmp := add(bans.Ban{Type: bans.TypeUsername, Value: "Tempo", Reason: "cool down", ExpiresAt: &end})
	tmpIPEnd := clock.Now().Add(30 * time.Minute)
	add(bans.Ban{Type: bans.TypeIP, Value: "203.0.113.60", Reason: "short", ExpiresAt: &tmpIPEnd})
	clean := v2("198.51.100.1:1000")

	t.Run("IP ban hides status and kicks at login", func(t *testing.T) {
		for _, src := range []string{"203.0.113.50:1000", "203.0.113.200:1000", "203.0.113.60:1000"} {
			mustPingBeClosed(t, tp.addr, v2(src), "lobby.com")
		}
		got, err := loginResult(t, tp.addr, v2("203.0.113.50:1000"), "lobby.com", loginStartOf("Alex"))
		if err != nil || got != "You are banned: griefing spawn" {
			t.Fatalf("IP-banned login: %q, %v", got, err)
		}
		got, err = loginResult(t, tp.addr, v2("203.0.113.200:1000"), "lobby.com", loginStartOf("Alex"))
		if err != nil || !strings.Contains(got, "botnet range") {
			t.Fatalf("CIDR-banned login: %q, %v", got, err)
		}
		mustPing(t, tp.addr, clean, "lobby.com", "lobby motd")
	})

	t.Run("username ban, case-insensitive", func(t *testing.T) {
		for _, name := range []string{"Griefer", "gRIEFER"} {
			got, err := loginResult(t, tp.addr, clean, "lobby.com", loginStartOf(name))
			if err != nil || !strings.Contains(got, "x-ray client") {
				t.Fatalf("username-banned %s: %q, %v", name, got, err)
			}
		}
		// The name ban is not an IP ban: the same IP still sees the MOTD and logs in as someone else.
		mustPing(t, tp.addr, clean, "lobby.com", "lobby motd")
		mustLogin(t, tp.addr, clean, "lobby.com", "Alex", landed("lobby", "Alex"))
	})

	t.Run("UUID ban follows the UUID, not the name", func(t *testing.T) {
		got, err := loginResult(t, tp.addr, clean, "lobby.com", mc.LoginStart{Name: "Renamed", UUID: altBytes, HasUUID: true})
		if err != nil || !strings.Contains(got, "alt account") {
			t.Fatalf("UUID-banned login: %q, %v", got, err)
		}
		other := altBytes
		other[15] ^= 1
		got, err = loginResult(t, tp.addr, clean, "lobby.com", mc.LoginStart{Name: "Renamed", UUID: other, HasUUID: true})
		if err != nil || got != landed("lobby", "Renamed") {
			t.Fatalf("other UUID: %q, %v", got, err)
		}
	})

	t.Run("temporary ban says when it ends, then expires", func(t *testing.T) {
		got, err := loginResult(t, tp.addr, clean, "lobby.com", loginStartOf("Tempo"))
		if err != nil {
			t.Fatal(err)
		}
		when := tmp.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
		if !strings.Contains(got, "cool down") || !strings.Contains(got, "Ban ends in") || !strings.Contains(got, when) {
			t.Fatalf("temporary ban text %q; want the reason and %q", got, when)
		}
		clock.Advance(31 * time.Minute) // the IP ban of 30 min is over
		mustPing(t, tp.addr, v2("203.0.113.60:1000"), "lobby.com", "lobby motd")
		mustLogin(t, tp.addr, v2("203.0.113.60:1000"), "lobby.com", "Eve", landed("lobby", "Eve"))
		got, _ = loginResult(t, tp.addr, clean, "lobby.com", loginStartOf("Tempo"))
		if !strings.Contains(got, "Ban ends in 1h 29m") && !strings.Contains(got, "Ban ends in 1h 28m") {
			t.Fatalf("remaining time does not follow the clock: %q", got)
		}
		clock.Advance(90 * time.Minute)
		mustLogin(t, tp.addr, clean, "lobby.com", "Tempo", landed("lobby", "Tempo"))
		// Permanent bans are unaffected by time.
		mustPingBeClosed(t, tp.addr, v2("203.0.113.50:1000"), "lobby.com")
	})

	t.Run("a lifted ban applies at once", func(t *testing.T) {
		if _, err := store.Remove(bans.TypeUsername, "griefer", clock.Now()); err != nil {
			t.Fatal(err)
		}
		mustLogin(t, tp.addr, clean, "lobby.com", "Griefer", landed("lobby", "Griefer"))
	})
}

// A banned connection is refused without spending rate-limit tokens: 2001:db8:5::bad
// shares its /64 bucket with 2001:db8:5::1, so any token it spent would show there.
func TestBannedConnectionsSpendNoTokens(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "lobby motd"})
	clock := &testClock{}
	store, err := bans.Open("", clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Add(bans.Ban{Type: bans.TypeIP, Value: "2001:db8:5::bad", Reason: "bot"}, clock.Now()); err != nil {
		t.Fatal(err)
	}
	tp := startProxyOpts(t, func(c *config.Config) {
		c.ReceiveProxyProtocol = true
		c.RateLimit.Enabled = true
		c.RateLimit.MaxConnections = 3
		c.RateLimit.Window = config.Duration(time.Hour)
		c.RateLimit.StatusMax = 3
		c.RateLimit.StatusWindow = config.Duration(time.Hour)
	}, Options{Now: clock.Now, Bans: store}, newServer("lobby", []string{"lobby.com"}, b.Addr()))
	banned := v2("[2001:db8:5::bad]:1000")
	for i := 0; i < 5; i++ {
		got, err := loginResult(t, tp.addr, banned, "lobby.com", loginStartOf("Bot"))
		if err != nil || got != "You are banned: bot" {
			t.Fatalf("banned login %d: %q, %v (the ban reason must reach the client, never the limiter's text)", i, got, err)
		}
		mustPingBeClosed(t, tp.addr, banned, "lobby.com")
	}
	neighbour := v2("[2001:db8:5::1]:1000")
	for i := 0; i < 3; i++ {
		mustPing(t, tp.addr, neighbour, "lobby.com", "lobby motd")
		mustLogin(t, tp.addr, neighbour, "lobby.com", "Alex", landed("lobby", "Alex"))
	}
	mustLogin(t, tp.addr, neighbour, "lobby.com", "Alex", rateLimited)
	mustPingBeClosed(t, tp.addr, neighbour, "lobby.com")
}
