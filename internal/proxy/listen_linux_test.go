package proxy

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/rawtcp"
)

// The players' listener carries [keepalive] and TCP_NODELAY from before it
// listens, and every accepted socket inherits them, so a session pays no
// setsockopt for either.
func TestAcceptedSocketsInheritKeepalive(t *testing.T) {
	ka := config.Keepalive{Time: config.Duration(42 * time.Second), Interval: config.Duration(7 * time.Second), Retries: 5}
	ln, err := Listen(context.Background(), "127.0.0.1:0", ka)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String()) // completes in the backlog
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := client.Write([]byte{0}); err != nil { // accept is deferred until bytes arrive
		t.Fatal(err)
	}
	lraw, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// Go's net sets TCP_NODELAY on what it accepts itself; the rawtcp listener
	// relies on the listening socket's.
	var nodelay int
	_ = lraw.Control(func(fd uintptr) { nodelay, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY) })
	if nodelay == 0 {
		t.Error("listening socket has TCP_NODELAY off: the sockets it queues before anyone sets it inherit Nagle")
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	_ = raw.Control(func(fd uintptr) {
		for name, o := range map[string][2]int{
			"SO_KEEPALIVE":  {unix.SOL_SOCKET, unix.SO_KEEPALIVE},
			"TCP_KEEPIDLE":  {unix.IPPROTO_TCP, unix.TCP_KEEPIDLE},
			"TCP_KEEPINTVL": {unix.IPPROTO_TCP, unix.TCP_KEEPINTVL},
			"TCP_KEEPCNT":   {unix.IPPROTO_TCP, unix.TCP_KEEPCNT},
		} {
			got[name], _ = unix.GetsockoptInt(int(fd), o[0], o[1])
		}
	})
	want := map[string]int{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 42, "TCP_KEEPINTVL": 7, "TCP_KEEPCNT": 5}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("accepted socket %s = %d, want %d (inherited from the listener)", k, got[k], v)
		}
	}
}

// A connection reaches accept only once its first bytes are there: a silent one
// connected earlier stays in the kernel while a speaking one is accepted, and the
// accepted one's first read finds its bytes without waiting.
func TestListenerDefersAcceptUntilBytesArrive(t *testing.T) {
	ln, err := Listen(context.Background(), "127.0.0.1:0", config.Keepalive{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	raw, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var deferSecs int
	_ = raw.Control(func(fd uintptr) {
		deferSecs, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT)
	})
	if deferSecs < 1 {
		t.Fatalf("TCP_DEFER_ACCEPT = %d on the listener, want at least 1", deferSecs)
	}
	silent, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	speaking, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer speaking.Close()
	if _, err := speaking.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := c.RemoteAddr().String(), speaking.LocalAddr().String(); got != want {
		t.Fatalf("accepted %s first, want the connection that sent bytes (%s); the silent one is %s", got, want, silent.LocalAddr())
	}
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	var n int
	var rerr error
	_ = rc.Control(func(fd uintptr) { n, rerr = unix.Read(int(fd), buf) }) // one non-blocking read, no waiting
	if rerr != nil || string(buf[:n]) != "hello" {
		t.Fatalf("first read of the accepted socket: %q, %v; want the bytes already there", buf[:n], rerr)
	}
}

// The session server is dialled with raw sockets, by host name too (resolved
// by Go's resolver); a refused connect and an unknown name are errors.
func TestSessionServerDialledWithRawSockets(t *testing.T) {
	fwd, err := forward.New(forward.Epoll)
	if err != nil {
		t.Fatal(err)
	}
	defer fwd.Close()
	s, err := newSockets(fwd)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dial := s.sessionDial()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := dial(ctx, "tcp", net.JoinHostPort("localhost", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*rawtcp.Conn); !ok {
		t.Fatalf("the session server's connection is a %T, want a raw socket", c)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	if _, err := c.Write([]byte("GET")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "GET" {
		t.Fatalf("read %q, %v", buf, err)
	}
	ln.Close()
	if _, err := dial(ctx, "tcp", net.JoinHostPort("127.0.0.1", port)); err == nil {
		t.Fatal("a closed port was dialled")
	}
	if _, err := dial(ctx, "tcp", "no-such-host.invalid:443"); err == nil {
		t.Fatal("an unknown host was dialled")
	}
}

// Each of a name's addresses gets an equal share of the time left, the last
// one all of it.
func TestShareOfTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if d := time.Until(shareOfTime(ctx, 4)); d > time.Second || d < 900*time.Millisecond {
		t.Fatalf("one of four addresses gets %v of 4 s", d)
	}
	if !shareOfTime(ctx, 1).IsZero() || !shareOfTime(context.Background(), 3).IsZero() {
		t.Fatal("the last address, or a dial without a deadline, must be bounded by the context alone")
	}
}
