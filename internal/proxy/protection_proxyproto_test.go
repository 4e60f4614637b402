package proxy

import (
	"bufio"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

func TestProxyProtocolInSetsClientIP(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "pp", MOTD: "pp motd", ProxyProtocol: true})
	s := newServer("pp", []string{"pp.com"}, b.Addr())
	s.SendProxyProtocol = true
	store, err := bans.Open("", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Add(bans.Ban{Type: bans.TypeIP, Value: "203.0.113.7", Reason: "spoofed nothing"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	tp := startProxyOpts(t, func(c *config.Config) { c.ReceiveProxyProtocol = true }, Options{Bans: store}, s)

	for _, v := range []byte{1, 2} {
		// The ban check sees the address from the header, not 127.0.0.1.
		got, err := loginResult(t, tp.addr, from{v, "203.0.113.7:4000"}, "pp.com", loginStartOf("Alex"))
		if err != nil || got != "You are banned: spoofed nothing" {
			t.Fatalf("v%d header claiming a banned IP: %q, %v", v, got, err)
		}
		mustPingBeClosed(t, tp.addr, from{v, "203.0.113.7:4000"}, "pp.com")

		// And the backend's PROXY v2 header carries it.
		src := fmt.Sprintf("198.51.100.9:%d", 5000+int(v))
		mustLogin(t, tp.addr, from{v, src}, "pp.com", "Alex", landed("pp", "Alex"))
		got2 := b.ProxySources()
		if len(got2) == 0 || got2[len(got2)-1] != src {
			t.Fatalf("v%d: backend saw PROXY sources %v, want last %s", v, got2, src)
		}
	}
	// IPv6 client behind an IPv4 hop.
	mustLogin(t, tp.addr, v2("[2001:db8::9]:6000"), "pp.com", "Alex", landed("pp", "Alex"))
	if got := b.ProxySources(); got[len(got)-1] != "[2001:db8::9]:6000" {
		t.Fatalf("backend saw PROXY sources %v, want last [2001:db8::9]:6000", got)
	}
	// A status relay carries the real client too.
	mustPing(t, tp.addr, v2("198.51.100.10:7000"), "pp.com", "pp motd")
	if got := b.ProxySources(); got[len(got)-1] != "198.51.100.10:7000" {
		t.Fatalf("status relay PROXY sources %v", got)
	}
}

func TestProxyProtocolFromUntrustedPeerRefused(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "pp", MOTD: "pp motd", ProxyProtocol: true})
	s := newServer("pp", []string{"pp.com"}, b.Addr())
	s.SendProxyProtocol = true
	tp := startProxyOpts(t, func(c *config.Config) {
		c.ReceiveProxyProtocol = true
		c.TrustedProxies = []string{"10.0.0.0/8", "::1/128"} // 127.0.0.1 is not trusted
		c.HandshakeTimeout = config.Duration(time.Minute)
	}, Options{}, s)
	for _, v := range []byte{1, 2} {
		mustBeRefusedSilently(t, tp.addr, from{v, "198.51.100.9:5000"}, "pp.com", "Mallory")
		mustPingBeClosed(t, tp.addr, from{v, "198.51.100.9:5000"}, "pp.com")
		// A lone header (no handshake behind it) is refused at once, not at a budget.
		c, err := dialFrom(t, tp.addr, from{v, "198.51.100.9:5000"})
		if err != nil {
			t.Fatal(err)
		}
		sendHeaderOnly(t, c)
		expectEOF(t, c, 5*time.Second, fmt.Sprintf("untrusted v%d header", v))
		c.Close()
	}
	if n := b.Logins.Load(); n != 0 {
		t.Fatalf("backend saw %d logins from spoofed headers", n)
	}
	// Without a header the untrusted peer is an ordinary client, seen as itself.
	c, err := dialFrom(t, tp.addr, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := loginOn(c, "pp.com", loginStartOf("Alex"))
	if err != nil || got != landed("pp", "Alex") {
		t.Fatalf("plain client from an untrusted peer: %q, %v", got, err)
	}
	if src := b.ProxySources(); len(src) == 0 || src[len(src)-1] != c.LocalAddr().String() {
		t.Fatalf("backend saw %v, want the peer itself %s", src, c.LocalAddr())
	}
}

func TestProxyProtocolSilentTrustedPeerClosedAtBudget(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "s", MOTD: "served"})
	tp := startProxyOpts(t, func(c *config.Config) {
		c.ReceiveProxyProtocol = true
		c.HandshakeTimeout = config.Duration(time.Minute) // only the header budget can close it
	}, Options{ProxyHeaderTimeout: 500 * time.Millisecond}, newServer("s", []string{"s.com"}, b.Addr()))

	var silent []net.Conn
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	for i := 0; i < 20; i++ {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			t.Fatal(err)
		}
		silent = append(silent, c)
	}
	waitFor(t, "the silent peers to be accepted", func() bool { return tp.door.active.Load() >= 20 })
	// Twenty trusted peers sit in their header read; the accept loop does not.
	mustPing(t, tp.addr, v2("198.51.100.1:1000"), "s.com", "served")
	mustLogin(t, tp.addr, v1src("198.51.100.2:1000"), "s.com", "Alex", landed("s", "Alex"))
	for i, c := range silent {
		expectEOF(t, c, 10*time.Second, fmt.Sprintf("silent trusted peer %d", i))
	}
}

func v1src(src string) from { return from{1, src} }

func TestMaxConnectionsPerIP(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "lobby motd"})
	tp := startProxyOpts(t, func(c *config.Config) {
		c.MaxConnectionsPerIP = 2
		c.HandshakeTimeout = config.Duration(time.Minute)
	}, Options{}, newServer("lobby", []string{"lobby.com"}, b.Addr()))

	open := func() net.Conn {
		c, err := dialFrom(t, tp.addr, direct)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1, c2 := open(), open()
	defer c1.Close()
	defer c2.Close()
	waitFor(t, "two connections counted for 127.0.0.1", func() bool { return tp.perIPCount("127.0.0.1") == 2 })
	c3 := open()
	defer c3.Close()
	expectEOF(t, c3, 5*time.Second, "third concurrent connection")
	// The first two were held open all along and are served normally.
	for i, c := range []net.Conn{c1, c2} {
		got, err := pingOn(c, "lobby.com")
		if err != nil || got != "lobby motd" {
			t.Fatalf("held connection %d: %q, %v", i+1, got, err)
		}
	}
	c1.Close()
	c2.Close()
	waitFor(t, "the slots to be released", func() bool { return tp.perIPCount("127.0.0.1") == 0 })
	mustPing(t, tp.addr, direct, "lobby.com", "lobby motd")
}

func TestMaxConnectionsPerIPUsesRealClientIP(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "lobby motd"})
	tp := startProxyOpts(t, func(c *config.Config) {
		c.MaxConnectionsPerIP = 1
		c.ReceiveProxyProtocol = true
		c.HandshakeTimeout = config.Duration(time.Minute)
	}, Options{}, newServer("lobby", []string{"lobby.com"}, b.Addr()))
	a, err := dialFrom(t, tp.addr, v2("198.51.100.1:1000"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sendHeaderOnly(t, a)
	waitFor(t, "198.51.100.1 counted", func() bool { return tp.perIPCount("198.51.100.1") == 1 })
	// Same load balancer, other client: not limited by its neighbour.
	mustPing(t, tp.addr, v2("198.51.100.2:1000"), "lobby.com", "lobby motd")
	// Same client again: refused.
	a2, err := dialFrom(t, tp.addr, v2("198.51.100.1:1001"))
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	sendHeaderOnly(t, a2)
	expectEOF(t, a2, 5*time.Second, "second connection of 198.51.100.1")
	if got, err := pingOn(a, "lobby.com"); err != nil || got != "lobby motd" {
		t.Fatalf("held connection: %q, %v", got, err)
	}
}

func TestFloodOfSilentSockets(t *testing.T) {
	n := 2000
	// Each silent socket costs two descriptors in this process (client and proxy side).
	if limit := raiseNoFile(t); uint64(2*n+200) > limit {
		n = int(limit-200) / 2
		t.Logf("RLIMIT_NOFILE hard limit is %d: flooding with %d sockets instead of 2000", limit, n)
	}
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "still serving"})
	tp := startProxyOpts(t, func(c *config.Config) {
		c.HandshakeTimeout = config.Duration(time.Minute) // the flood stays for the whole test
		c.MaxConnections = n + 100
	}, Options{}, newServer("lobby", []string{"lobby.com"}, b.Addr()))

	flood := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", tp.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("flood socket %d: %v", i, err)
		}
		flood = append(flood, c)
	}
	waitFor(t, fmt.Sprintf("%d flood sockets held by the proxy", n), func() bool { return tp.door.active.Load() >= int64(n) })

	mustPing(t, tp.addr, direct, "lobby.com", "still serving")
	mustLogin(t, tp.addr, direct, "lobby.com", "Alex", landed("lobby", "Alex"))
	// A real client also finishes a slow, byte-by-byte handshake under the flood.
	c, err := dialFrom(t, tp.addr, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := mc.Handshake{ProtocolVersion: 767, ServerAddress: "lobby.com", ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	out = append(out, loginStartOf("Slow").Encode(767)...)
	for i := range out {
		if _, err := c.Write(out[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	f, err := mc.ReadFrame(bufio.NewReader(c), mc.MaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	if got := disconnectText(t, f); got != landed("lobby", "Slow") {
		t.Fatalf("slow login under flood: %q", got)
	}

	if got := tp.door.active.Load(); got < int64(n) {
		t.Fatalf("only %d of %d flood sockets still held after the real client was served", got, n)
	}
	if got := tp.door.active.Load(); got > int64(n+100) {
		t.Fatalf("%d active connections above max_connections %d", got, n+100)
	}
}

// An untrusted peer that sends the start of a PROXY header and stalls is closed
// when the header's budget ends: the handshake does not get a fresh budget after
// it (one deadline per connection; it was 5 s + 10 s).
func TestProxyProtocolStallAfterFirstByteUsesOneBudget(t *testing.T) {
	tp := startProxyOpts(t, func(c *config.Config) {
		c.ReceiveProxyProtocol = true
		c.TrustedProxies = []string{"10.0.0.0/8"} // 127.0.0.1 is not trusted
		c.HandshakeTimeout = config.Duration(time.Hour)
	}, Options{ProxyHeaderTimeout: 200 * time.Millisecond}, newServer("pp", []string{"pp.com"}, deadAddress(t)))
	for _, start := range []string{"P", "PROX", "\r\n"} {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte(start)); err != nil {
			t.Fatal(err)
		}
		expectEOF(t, c, 5*time.Second, fmt.Sprintf("untrusted peer stalled after %q", start))
		c.Close()
	}
}
