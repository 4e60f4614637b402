//go:build linux

package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/rawtcp"
)

// On Linux, io.Copy between two *net.TCPConn goes through poll.Splice, which holds
// one pipe (two fds) from its pool for as long as the copy runs. So while k sessions
// forward in both directions, the process owns at least 4k pipe fds; a wrapper that
// hides *net.TCPConn (bufio, a counting reader, proxyproto.Conn) falls back to a
// 32 KiB user-space copy and holds none. Counting pipe fds proves the splice path
// without strace.
func pipeFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "pipe:") {
			n++
		}
	}
	return n
}

// tcpPair returns both ends of one loopback TCP connection.
func tcpPair(t *testing.T) (dialed, accepted *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// flushPipePool drops the idle pipes the splice pool caches (two GCs clear a
// sync.Pool; their cleanups close the fds) and returns the pipe fds left, so a
// later increase can only come from pipes taken while forwarding.
func flushPipePool(t *testing.T) int {
	t.Helper()
	last := -1
	for range 50 {
		runtime.GC()
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		n := pipeFDs(t)
		if n == last {
			return n
		}
		last = n
	}
	return last
}

// waitPipes polls (bounded) until at least want pipe fds are open.
func waitPipes(t *testing.T, want int) int {
	t.Helper()
	var n int
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if n = pipeFDs(t); n >= want {
			break
		}
	}
	return n
}

// echoBoth checks bytes flow both ways through a forwarded pair.
func echoBoth(t *testing.T, player, server net.Conn) {
	t.Helper()
	_ = player.SetDeadline(time.Now().Add(5 * time.Second))
	_ = server.SetDeadline(time.Now().Add(5 * time.Second))
	up, down := bytes.Repeat([]byte("u"), 100_000), bytes.Repeat([]byte("d"), 100_000)
	go func() { _, _ = player.Write(up) }()
	go func() { _, _ = server.Write(down) }()
	got := make([]byte, len(up))
	if _, err := io.ReadFull(server, got); err != nil || !bytes.Equal(got, up) {
		t.Fatalf("upstream bytes: %v", err)
	}
	if _, err := io.ReadFull(player, got); err != nil || !bytes.Equal(got, down) {
		t.Fatalf("downstream bytes: %v", err)
	}
}

// TestForwardSplicesRawTCPConns calls forward directly on real TCP pairs: both
// directions must hold a splice pipe, and a wrapped conn (the negative control)
// must not, so the fd count really measures splice.
func TestForwardSplicesRawTCPConns(t *testing.T) {
	const k = 4
	run := func(wrap bool) (pipes int) {
		base := flushPipePool(t)
		type sess struct {
			player, server net.Conn
			done           chan struct{}
		}
		var ss []sess
		for range k {
			player, pc := tcpPair(t) // player ↔ proxy's client side
			bc, server := tcpPair(t) // proxy's backend side ↔ server
			var client, backend net.Conn = pc, bc
			if wrap {
				client, backend = struct{ net.Conn }{pc}, struct{ net.Conn }{bc}
			}
			done := make(chan struct{})
			go func() { defer close(done); copyBoth(client, backend) }()
			ss = append(ss, sess{player, server, done})
		}
		for _, s := range ss {
			echoBoth(t, s.player, s.server)
		}
		if wrap {
			pipes = pipeFDs(t) - base
		} else {
			pipes = waitPipes(t, base+4*k) - base
		}
		for _, s := range ss {
			s.player.Close()
			s.server.Close()
			<-s.done
		}
		return pipes
	}
	if got := run(true); got != 0 {
		t.Fatalf("negative control: wrapped conns hold %d new pipe fds; the pipe count does not measure splice", got)
	}
	if got := run(false); got < 4*k {
		t.Fatalf("%d forwarded sessions hold %d new pipe fds; splice in both directions needs at least %d", k, got, 4*k)
	}
}

// TestSessionsForwardOnBareSockets drives real logins through the proxy, in both
// proxy modes and with PROXY protocol in and out (where a wrapper would most likely
// sneak in), and checks that every tracked connection is a bare socket, never a
// wrapper: a *net.TCPConn for the goroutine forwarder, whose live sessions hold
// splice pipes in both directions; a *rawtcp.Conn for the epoll forwarder (Go's
// netpoller never held it), whose sessions hold no goroutine.
func TestSessionsForwardOnBareSockets(t *testing.T) {
	cases := []struct {
		name string
		mode config.ProxyMode
		pp   bool
		fwd  forward.Kind
	}{
		{"passthrough", "passthrough", false, forward.Goroutine},
		{"zero_copy", "zero_copy", false, forward.Goroutine},
		{"proxy_protocol_in_and_out", "passthrough", true, forward.Goroutine},
		{"epoll", "passthrough", false, forward.Epoll},
		{"epoll_proxy_protocol", "passthrough", true, forward.Epoll},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			echo := func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
				if _, err := c.Write(mc.AppendFrame(nil, 0x02, make([]byte, 17))); err != nil {
					return
				}
				_, _ = br.WriteTo(c)
			}
			be := startBackend(t, fakemc.Options{Name: "splice", ProxyProtocol: tc.pp, OnLogin: echo}).Addr()
			srv := newServer("s", []string{"splice.test"}, be)
			srv.ProxyMode = tc.mode
			srv.SendProxyProtocol = tc.pp
			p := startProxy(t, func(c *config.Config) { c.ReceiveProxyProtocol = tc.pp; c.Forwarder = tc.fwd }, srv)

			base := flushPipePool(t)
			goroutines := runtime.NumGoroutine()
			const k = 3
			var players []net.Conn
			for i := range k {
				c, err := net.Dial("tcp", p.addr)
				if err != nil {
					t.Fatal(err)
				}
				players = append(players, c)
				var out []byte
				if tc.pp {
					out = append(out, "PROXY TCP4 203.0.113.7 127.0.0.1 40000 25565\r\n"...)
				}
				out = append(out, mc.Handshake{ProtocolVersion: 767, ServerAddress: "splice.test", ServerPort: 25565, NextState: mc.StateLogin}.Encode()...)
				out = append(out, mc.LoginStart{Name: fmt.Sprintf("splice%d", i)}.Encode(767)...)
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Write(out); err != nil {
					t.Fatal(err)
				}
				first := make([]byte, 19)
				if _, err := io.ReadFull(c, first); err != nil {
					t.Fatalf("first login packet: %v", err)
				}
				msg := bytes.Repeat([]byte("x"), 64_000)
				go func() { _, _ = c.Write(msg) }()
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("echo through the proxy: %v", err)
				}
			}
			// The player's address reads as Go's net has it: IPv4, not IPv4-mapped.
			for _, pl := range p.Players("") {
				want := netip.MustParseAddr("127.0.0.1")
				if tc.pp {
					want = netip.MustParseAddr("203.0.113.7")
				}
				if pl.Client.Addr() != want {
					t.Errorf("player %s's client address %v, want %v", pl.Name, pl.Client, want)
				}
			}
			p.connMu.Lock()
			n := len(p.conns)
			for c := range p.conns {
				switch c.(type) {
				case *net.TCPConn:
					if tc.fwd == forward.Epoll {
						t.Errorf("tracked connection is %T under the epoll forwarder, not *rawtcp.Conn: Go's netpoller held it", c)
					}
				case *rawtcp.Conn:
					if tc.fwd == forward.Goroutine {
						t.Errorf("tracked connection is %T under the goroutine forwarder, not *net.TCPConn: io.Copy could not splice it", c)
					}
				default:
					t.Errorf("tracked connection is %T, not a bare socket: forwarding would fall back to a user-space copy", c)
				}
			}
			p.connMu.Unlock()
			if n != 2*k {
				t.Errorf("tracked %d connections for %d sessions, want %d", n, k, 2*k)
			}
			if tc.fwd == forward.Goroutine {
				if got := waitPipes(t, base+4*k); got < base+4*k {
					t.Errorf("%d live sessions hold %d new pipe fds; splice in both directions needs %d", k, got-base, 4*k)
				}
			} else if grown := runtime.NumGoroutine() - goroutines; grown > k+1 {
				// The test backend holds one goroutine per connection; the proxy's
				// side of an idle epoll session holds none (the goroutine forwarder: two).
				t.Errorf("%d epoll sessions added %d goroutines; the backend's %d and none of the proxy's expected", k, grown, k)
			}
			for _, c := range players {
				c.Close()
			}
		})
	}
}
