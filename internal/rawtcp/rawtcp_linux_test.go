//go:build linux

package rawtcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// poller is a Poller closed at the end of the test.
func poller(t *testing.T) *Poller {
	t.Helper()
	p, err := NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// listen returns a Listener on 127.0.0.1 and its address.
func listen(t *testing.T, p *Poller) (*Listener, netip.AddrPort) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewListener(ln.(*net.TCPListener), p)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, l.Addr().(*net.TCPAddr).AddrPort()
}

// pair is a Conn accepted by a Listener and a Conn dialled to it.
func pair(t *testing.T) (accepted, dialled *Conn) {
	t.Helper()
	p := poller(t)
	l, addr := listen(t, p)
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	d, err := Dial(context.Background(), p, addr, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a == nil {
		t.FailNow()
	}
	t.Cleanup(func() { a.Close(); d.Close() })
	return a.(*Conn), d
}

func noDelay(t *testing.T, c *Conn) int {
	t.Helper()
	var v int
	err := c.control(func(fd int) error {
		var err error
		v, err = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A connection queued before the listener had TCP_NODELAY did not inherit it: it
// gets it set, and the listener still learns from the next socket that the
// option is inherited (one early socket must not cost every later accept a
// setsockopt).
func TestNoDelayOnASocketQueuedBeforeTheListener(t *testing.T) {
	p := poller(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // Go's net leaves the listener's Nagle on
	if err != nil {
		t.Fatal(err)
	}
	early, err := net.Dial("tcp", ln.Addr().String()) // queued in the backlog now
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	l, err := NewListener(ln.(*net.TCPListener), p)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	defer l.Close()
	for i, what := range []string{"queued before", "queued after"} {
		if i == 1 {
			late, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer late.Close()
		}
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if noDelay(t, c.(*Conn)) == 0 {
			t.Errorf("socket %s the listener's TCP_NODELAY: Nagle is on", what)
		}
		if known := l.nodelay.Load(); known != (i == 1) {
			t.Errorf("after the socket %s: inheritance known = %v, want %v", what, known, i == 1)
		}
	}
}

func TestDialAcceptAndAddresses(t *testing.T) {
	a, d := pair(t)
	if noDelay(t, a) == 0 || noDelay(t, d) == 0 {
		t.Fatalf("TCP_NODELAY accepted=%d dialled=%d, want both on", noDelay(t, a), noDelay(t, d))
	}
	// Addresses read as Go's net has them: an IPv4 peer is an IPv4 address, not the
	// IPv4-mapped IPv6 form, once through TCPAddr.AddrPort (what the proxy logs,
	// filters and forwards).
	for name, addr := range map[string]net.Addr{"accepted peer": a.RemoteAddr(), "accepted local": a.LocalAddr(), "dialled peer": d.RemoteAddr(), "dialled local": d.LocalAddr()} {
		if ap := addr.(*net.TCPAddr).AddrPort(); !ap.Addr().Is4() || ap.Addr().String() != "127.0.0.1" {
			t.Errorf("%s address %v, want 127.0.0.1 as an IPv4 address", name, ap)
		}
	}
	if a.RemoteAddr().String() != d.LocalAddr().String() {
		t.Errorf("accepted side's peer %v, dialled side's own address %v", a.RemoteAddr(), d.LocalAddr())
	}
	if d.RemoteAddr().String() != a.LocalAddr().String() {
		t.Errorf("dialled side's peer %v, accepted side's own address %v", d.RemoteAddr(), a.LocalAddr())
	}
	if _, err := d.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if _, err := io.ReadFull(a, b); err != nil || string(b) != "ping" {
		t.Fatalf("read %q, %v", b, err)
	}
	if err := d.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n, err := a.Read(b); n != 0 || err != io.EOF {
		t.Fatalf("after the peer's half-close: %d, %v; want 0, EOF", n, err)
	}
	if _, err := a.Write([]byte("pong")); err != nil {
		t.Fatalf("write after the peer's half-close: %v", err)
	}
	if _, err := io.ReadFull(d, b); err != nil || string(b) != "pong" {
		t.Fatalf("half-closed side read %q, %v", b, err)
	}
}

// TestReadThatWaitsGetsWhatComesMeanwhile is the lost-wakeup case: bytes that arrive
// while a Read moves the fd into Go's netpoller, at every moment around it, must wake
// the Read (Go clears the poller's readiness when a wait begins).
func TestReadThatWaitsGetsWhatComesMeanwhile(t *testing.T) {
	for i := range 300 {
		a, d := pair(t)
		_ = a.SetReadDeadline(time.Now().Add(5 * time.Second))
		go func() {
			for range i % 7 * 50 {
				_ = os.Getpid() // a few hundred ns to a few µs of delay, varied
			}
			_, _ = d.Write([]byte{byte(i)})
		}()
		b := make([]byte, 1)
		if _, err := a.Read(b); err != nil || b[0] != byte(i) {
			t.Fatalf("round %d: read %v, %v", i, b, err)
		}
		a.Close()
		d.Close()
	}
}

func TestDeadlines(t *testing.T) {
	a, _ := pair(t)
	_ = a.SetReadDeadline(time.Now().Add(-time.Second))
	_, err := a.Read(make([]byte, 1))
	if !isTimeout(err) {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	// A deadline set while nothing waits applies to the wait that comes later.
	_ = a.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err = a.Read(make([]byte, 1))
	if !isTimeout(err) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read that waited past its deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	// A deadline moved while a read waits wakes it.
	_ = a.SetReadDeadline(time.Time{})
	res := make(chan error, 1)
	go func() { _, err := a.Read(make([]byte, 1)); res <- err }()
	time.Sleep(20 * time.Millisecond)
	_ = a.SetReadDeadline(time.Now())
	if err := <-res; !isTimeout(err) {
		t.Fatalf("waiting read after its deadline moved: %v, want a timeout", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestCloseEndsAWaitingRead(t *testing.T) {
	for _, waited := range []bool{false, true} {
		a, _ := pair(t)
		if waited {
			_ = a.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			_, _ = a.Read(make([]byte, 1)) // now in Go's netpoller
			_ = a.SetReadDeadline(time.Time{})
		}
		res := make(chan error, 1)
		go func() { _, err := a.Read(make([]byte, 1)); res <- err }()
		time.Sleep(20 * time.Millisecond)
		a.Close()
		select {
		case err := <-res:
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("waited=%v: read after Close: %v, want net.ErrClosed", waited, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("waited=%v: Close did not end the waiting read", waited)
		}
		if _, err := a.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("write after Close: %v, want net.ErrClosed", err)
		}
	}
}

// TestWriteThatWaits fills the send buffer: the rest of the write waits in Go's
// netpoller and everything arrives in order.
func TestWriteThatWaits(t *testing.T) {
	a, d := pair(t)
	msg := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB, far beyond the buffers
	want := sha256.Sum256(msg)
	got := make(chan [32]byte, 1)
	go func() {
		h := sha256.New()
		time.Sleep(50 * time.Millisecond) // let the writer hit a full buffer first
		_, _ = io.CopyN(h, a, int64(len(msg)))
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		got <- sum
	}()
	if n, err := d.Write(msg); err != nil || n != len(msg) {
		t.Fatalf("write: %d, %v", n, err)
	}
	if <-got != want {
		t.Fatal("the bytes that arrived are not the bytes written")
	}
}

// TestTakeFD: the taker owns a socket that works, the Conn's own fd (no dup) whether
// it ever waited or not; a socket that waited has left the Poller. The Conn is closed
// without touching the fd, and later calls on it fail cleanly.
func TestTakeFD(t *testing.T) {
	for _, waited := range []bool{false, true} {
		a, d := pair(t)
		if waited {
			readTimesOut(t, a) // the socket waited once: it is in the Poller's set
		}
		own := a.fd
		fd, err := a.TakeFD()
		if err != nil {
			t.Fatal(err)
		}
		if fd != own {
			t.Errorf("waited=%v: TakeFD gave fd %d, not the Conn's own %d", waited, fd, own)
		}
		if waited && registeredIn(a.poller) != 0 {
			t.Errorf("a taken socket is still in the Poller (%d registered)", registeredIn(a.poller))
		}
		if err := a.Close(); err != nil {
			t.Errorf("Close after TakeFD: %v", err)
		}
		if _, err := a.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("read after TakeFD: %v, want net.ErrClosed", err)
		}
		if _, err := a.TakeFD(); err == nil {
			t.Error("a second TakeFD succeeded")
		}
		if _, err := unix.Write(fd, []byte("taken")); err != nil {
			t.Fatalf("waited=%v: the taken fd does not work: %v", waited, err)
		}
		b := make([]byte, 5)
		_ = d.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(d, b); err != nil || string(b) != "taken" {
			t.Fatalf("peer read %q, %v", b, err)
		}
		unix.Close(fd)
		if n, err := d.Read(b); n != 0 || err != io.EOF {
			t.Fatalf("after the taker closed its fd the peer read %d, %v; want EOF", n, err)
		}
	}
}

// readTimesOut makes c wait to read once (nothing is sent), so that its socket
// joins the Poller's set.
func readTimesOut(t *testing.T, c *Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := c.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("read with nothing sent: %v, want a timeout", err)
	}
}

// registeredIn counts the Conns holding a slot in p.
func registeredIn(p *Poller) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns.Len()
}

// TestClosedConnLeavesThePoller: a Conn that waited and was closed gives its slot back.
func TestClosedConnLeavesThePoller(t *testing.T) {
	a, _ := pair(t)
	_ = a.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	_, _ = a.Read(make([]byte, 1))
	if n := registeredIn(a.poller); n != 1 {
		t.Fatalf("%d Conns registered after one waited, want 1", n)
	}
	a.Close()
	if n := registeredIn(a.poller); n != 0 {
		t.Fatalf("%d Conns registered after it closed, want 0", n)
	}
}

// TestReadAndWriteWaitAtOnce: a Read waiting for bytes and a Write waiting for room,
// on one Conn at the same time, are each woken by their own event.
func TestReadAndWriteWaitAtOnce(t *testing.T) {
	a, d := pair(t)
	_ = a.SetDeadline(time.Now().Add(10 * time.Second))
	msg := bytes.Repeat([]byte("w"), 8<<20) // more than the socket buffers: the write waits
	wrote := make(chan error, 1)
	go func() { _, err := a.Write(msg); wrote <- err }()
	read := make(chan error, 1)
	go func() {
		b := make([]byte, 1)
		_, err := io.ReadFull(a, b)
		if err == nil && b[0] != 'r' {
			err = errors.New("read the wrong byte")
		}
		read <- err
	}()
	time.Sleep(50 * time.Millisecond) // both are waiting now
	if _, err := d.Write([]byte("r")); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatalf("the waiting read: %v", err)
	}
	_ = d.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.CopyN(io.Discard, d, int64(len(msg))); err != nil {
		t.Fatalf("peer reading the big write: %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("the waiting write: %v", err)
	}
}

// watched is fd's event mask in p's epoll set, from /proc/self/fdinfo (false:
// not registered).
func watched(t *testing.T, p *Poller, fd int) (uint32, bool) {
	t.Helper()
	info, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", p.set.FD))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(info), "\n") {
		var tfd int
		var events uint32
		if n, _ := fmt.Sscanf(line, "tfd: %d events: %x", &tfd, &events); n == 2 && tfd == fd {
			return events, true
		}
	}
	return 0, false
}

// TestWritableWatchedOnlyOnceAWriteWaits: a socket joins the Poller for input
// only (a fresh socket is writable, and EPOLLOUT in its registration woke the
// Poller at the ADD and at every ACK for nothing); the first write that waits
// adds EPOLLOUT, and is woken by it. Both ways in: a socket that waited to read
// first (EPOLL_CTL_MOD) and one whose first wait is the write's (ADD).
func TestWritableWatchedOnlyOnceAWriteWaits(t *testing.T) {
	for _, readFirst := range []bool{true, false} {
		a, d := pair(t)
		if readFirst {
			readTimesOut(t, a) // the socket waited once: it is in the Poller's set
			ev, ok := watched(t, a.poller, a.fd)
			if !ok {
				t.Fatal("a socket that waited to read is not in the Poller's set")
			}
			if ev&unix.EPOLLOUT != 0 || ev&unix.EPOLLIN == 0 {
				t.Fatalf("a socket that only read is watched for %#x, want EPOLLIN without EPOLLOUT", ev)
			}
		}
		msg := bytes.Repeat([]byte("w"), 8<<20) // more than the socket buffers: the write waits
		wrote := make(chan error, 1)
		_ = a.SetWriteDeadline(time.Now().Add(10 * time.Second))
		go func() { _, err := a.Write(msg); wrote <- err }()
		eventually(t, "the waiting write's socket watched for EPOLLOUT", func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			ev, _ := watched(t, a.poller, a.fd)
			return ev&unix.EPOLLOUT != 0 && ev&unix.EPOLLIN != 0
		})
		_ = d.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.CopyN(io.Discard, d, int64(len(msg))); err != nil {
			t.Fatalf("readFirst=%v: peer reading the big write: %v", readFirst, err)
		}
		if err := <-wrote; err != nil {
			t.Fatalf("readFirst=%v: the waiting write: %v", readFirst, err)
		}
	}
}

// TestPollerCloseEndsWaits: a wait in progress, and any later one, ends with
// ErrPollerClosed once the Poller is closed.
func TestPollerCloseEndsWaits(t *testing.T) {
	a, _ := pair(t)
	res := make(chan error, 1)
	go func() { _, err := a.Read(make([]byte, 1)); res <- err }()
	time.Sleep(20 * time.Millisecond)
	a.poller.Close()
	select {
	case err := <-res:
		if !errors.Is(err, ErrPollerClosed) {
			t.Fatalf("read waiting when the Poller closed: %v, want ErrPollerClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closing the Poller did not end a waiting read")
	}
	if _, err := a.Read(make([]byte, 1)); !errors.Is(err, ErrPollerClosed) {
		t.Fatalf("read after the Poller closed: %v, want ErrPollerClosed", err)
	}
}

// A reader parked with OnReadable runs when the Poller closes, and finds the
// Poller closed; later it does not park.
func TestPollerCloseRunsParkedReaders(t *testing.T) {
	a, _ := pair(t)
	if n, err := a.TryRead(make([]byte, 1)); n != 0 || err != nil {
		t.Fatalf("TryRead = %d, %v", n, err)
	}
	ran := make(chan struct{})
	if !a.OnReadable(func(bool) bool { close(ran); return false }) {
		t.Fatal("did not park")
	}
	a.poller.Close()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the Poller did not run the parked reader")
	}
	if a.OnReadable(func(bool) bool { t.Error("ran"); return false }) {
		t.Fatal("parked on a closed Poller")
	}
}

func TestDialRefusedAndCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr).AddrPort()
	ln.Close()
	p := poller(t)
	_, err = Dial(context.Background(), p, addr, time.Time{})
	var oe *net.OpError
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &oe) || oe.Op != "dial" {
		t.Fatalf("dial to a closed port: %v, want a dial *net.OpError wrapping ECONNREFUSED", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Dial(ctx, p, addr, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("dial with a cancelled context: %v, want context.Canceled", err)
	}
}

// fullQueue listens with a backlog of 0 and fills the accept queue (never
// accepting) until a dial has to wait: the kernel drops its SYN. It returns the
// listening fd, its address and the Conns that got in.
func fullQueue(t *testing.T, p *Poller) (int, netip.AddrPort) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(sa.(*unix.SockaddrInet4).Port))
	for range 8 {
		c, err := Dial(context.Background(), p, addr, time.Now().Add(300*time.Millisecond))
		if err != nil {
			if !isTimeout(err) || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("dial to a full accept queue: %v, want a timeout", err)
			}
			return fd, addr
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Fatal("eight dials to a listener with a backlog of 0 all connected; the queue never filled")
	return -1, addr
}

// TestDialTimesOut: a connect that waits ends at its deadline, or at the context's
// when that comes first, as a timeout; a cancel ends it as context.Canceled.
func TestDialTimesOut(t *testing.T) {
	p := poller(t)
	_, addr := fullQueue(t, p) // its last dial timed out at the deadline argument
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Dial(ctx, p, addr, time.Now().Add(time.Hour)); !isTimeout(err) {
		t.Fatalf("dial whose context ends first: %v, want a timeout", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := Dial(ctx, p, addr, time.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Fatalf("dial cancelled while it waits: %v, want context.Canceled", err)
	}
}

// TestDialThatWaitsConnects: a connect that waits (its SYN dropped by a full queue)
// completes once the queue has room and the SYN is sent again, about a second later.
func TestDialThatWaitsConnects(t *testing.T) {
	p := poller(t)
	lfd, addr := fullQueue(t, p)
	type result struct {
		c   *Conn
		err error
	}
	res := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := Dial(ctx, p, addr, time.Time{})
		res <- result{c, err}
	}()
	time.Sleep(100 * time.Millisecond) // the dial is waiting on its dropped SYN
	var accepted []int
	defer func() {
		for _, fd := range accepted {
			unix.Close(fd)
		}
	}()
	take := func() {
		for {
			nfd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			if err != nil {
				return
			}
			accepted = append(accepted, nfd)
		}
	}
	_ = unix.SetNonblock(lfd, true)
	take() // room for the retransmitted SYN
	var r result
	select {
	case r = <-res:
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting dial never ended")
	}
	if r.err != nil {
		t.Fatalf("dial that waited: %v", r.err)
	}
	defer r.c.Close()
	if _, err := r.c.Write([]byte("late")); err != nil {
		t.Fatalf("write on the connection that waited: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	take()
	got := false
	for _, fd := range accepted {
		b := make([]byte, 4)
		if n, _ := unix.Read(fd, b); n == 4 && string(b) == "late" {
			got = true
		}
	}
	if !got {
		t.Fatal("the bytes written on the connection that waited reached no accepted socket")
	}
}

func TestListenerCloseEndsAccept(t *testing.T) {
	l, _ := listen(t, poller(t))
	res := make(chan error, 1)
	go func() { _, err := l.Accept(); res <- err }()
	time.Sleep(20 * time.Millisecond)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting Accept")
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("accept on a closed listener: %v", err)
	}
	if err := l.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Close: %v, want net.ErrClosed", err)
	}
}

// TestConcurrentUse runs reads, writes and a Close at once (for -race).
func TestConcurrentUse(t *testing.T) {
	a, d := pair(t)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		b := make([]byte, 512)
		for {
			if _, err := a.Read(b); err != nil {
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			if _, err := a.Write(make([]byte, 512)); err != nil {
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(d, d) // echo until a closes
	}()
	time.Sleep(50 * time.Millisecond)
	a.Close()
	d.Close()
	wg.Wait()
}

// TryRead never waits: nothing yet is 0 and no error; WaitReadable then
// returns once bytes arrive, honours the read deadline, and the end of the
// stream is io.EOF to TryRead.
func TestTryReadAndWaitReadable(t *testing.T) {
	a, b := pair(t)
	buf := make([]byte, 16)
	if n, err := a.TryRead(buf); n != 0 || err != nil {
		t.Fatalf("TryRead on a silent peer = %d, %v; want 0, nil", n, err)
	}
	_ = a.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if err := a.WaitReadable(); !isTimeout(err) {
		t.Fatalf("WaitReadable past the deadline = %v, want a timeout", err)
	}
	_ = a.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _ = b.Write([]byte("hello"))
	}()
	for {
		n, err := a.TryRead(buf)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			if string(buf[:n]) != "hello" {
				t.Fatalf("read %q", buf[:n])
			}
			break
		}
		if err := a.WaitReadable(); err != nil {
			t.Fatal(err)
		}
	}
	_ = b.Close()
	for {
		n, err := a.TryRead(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || n != 0 {
			t.Fatalf("after the peer closed: %d, %v", n, err)
		}
		if err := a.WaitReadable(); err != nil {
			t.Fatal(err)
		}
	}
}

// OnReadable parks a reader without a goroutine: fn runs once when bytes
// arrive (on the Poller's loop) or when the Conn closes or its read deadline
// changes (off it); false (fn never runs) when there is no need to wait: bytes
// are there already, a deadline is set, the Conn is closed.
func TestOnReadable(t *testing.T) {
	fired := func() (func(bool) bool, <-chan bool) {
		ch := make(chan bool, 2)
		return func(onLoop bool) bool { ch <- onLoop; return false }, ch
	}
	once := func(t *testing.T, ch <-chan bool, why string, wantLoop bool) {
		t.Helper()
		select {
		case onLoop := <-ch:
			if onLoop != wantLoop {
				t.Errorf("fn ran with onLoop %v %s, want %v", onLoop, why, wantLoop)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("fn did not run %s", why)
		}
		select {
		case <-ch:
			t.Fatalf("fn ran twice %s", why)
		case <-time.After(20 * time.Millisecond):
		}
	}
	buf := make([]byte, 16)

	a, b := pair(t)
	if n, err := a.TryRead(buf); n != 0 || err != nil {
		t.Fatalf("TryRead = %d, %v", n, err)
	}
	fn, ch := fired()
	if !a.OnReadable(fn) {
		t.Fatal("OnReadable on a silent peer did not park")
	}
	if a.OnReadable(func(bool) bool { t.Error("a second park ran"); return false }) {
		t.Fatal("a second OnReadable parked beside the first")
	}
	_, _ = b.Write([]byte("hi"))
	once(t, ch, "when bytes arrived", true)
	if a.OnReadable(func(bool) bool { t.Error("ran although bytes were there"); return false }) {
		t.Fatal("OnReadable parked with unread bytes (the event came after the last read)")
	}
	if n, err := a.TryRead(buf); string(buf[:n]) != "hi" || err != nil {
		t.Fatalf("TryRead = %q, %v", buf[:n], err)
	}
	if n, _ := a.TryRead(buf); n != 0 {
		t.Fatalf("TryRead = %d more bytes", n)
	}

	fn, ch = fired()
	if !a.OnReadable(fn) {
		t.Fatal("did not park after reading everything")
	}
	_ = a.SetReadDeadline(time.Now()) // the stall watch's way to end a silent peer
	once(t, ch, "when the read deadline changed", false)
	if a.OnReadable(func(bool) bool { t.Error("ran with a deadline set"); return false }) {
		t.Fatal("parked with a read deadline set")
	}
	if _, err := a.TryRead(buf); !isTimeout(err) {
		t.Fatalf("TryRead past the deadline = %v", err)
	}
	_ = a.SetReadDeadline(time.Time{})

	fn, ch = fired()
	if !a.OnReadable(fn) {
		t.Fatal("did not park again")
	}
	_ = a.Close()
	once(t, ch, "when the Conn closed", false)
	if a.OnReadable(func(bool) bool { t.Error("ran on a closed Conn"); return false }) {
		t.Fatal("parked on a closed Conn")
	}

	// The peer's end of the stream is an event too.
	c, d := pair(t)
	_, _ = c.TryRead(buf)
	fn, ch = fired()
	if !c.OnReadable(fn) {
		t.Fatal("did not park")
	}
	_ = d.Close()
	once(t, ch, "when the peer closed", true)
	if _, err := c.TryRead(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("TryRead after the peer closed = %v", err)
	}
}

// A callback that cannot finish on the Poller's loop (it returns true there) is
// run again off the loop, once, and meanwhile the loop serves other sockets.
func TestOnReadableHandsOffWhatWouldWait(t *testing.T) {
	a, b := pair(t)
	c, d := pair(t)
	_, _ = a.TryRead(make([]byte, 1))
	_, _ = c.TryRead(make([]byte, 1))
	release := make(chan struct{})
	runs := make(chan bool, 4)
	if !a.OnReadable(func(onLoop bool) bool {
		runs <- onLoop
		if onLoop {
			return true
		}
		<-release // waits, as it may off the loop
		return false
	}) {
		t.Fatal("did not park")
	}
	_, _ = b.Write([]byte("x"))
	for i, want := range []bool{true, false} {
		select {
		case onLoop := <-runs:
			if onLoop != want {
				t.Fatalf("run %d: onLoop %v, want %v", i, onLoop, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("run %d did not come", i)
		}
	}
	// While the first callback waits off the loop, another socket's still runs.
	other := make(chan bool, 1)
	if !c.OnReadable(func(onLoop bool) bool { other <- onLoop; return false }) {
		t.Fatal("did not park")
	}
	_, _ = d.Write([]byte("y"))
	select {
	case <-other:
	case <-time.After(5 * time.Second):
		t.Fatal("a callback waiting off the loop held up the loop")
	}
	close(release)
	select {
	case onLoop := <-runs:
		t.Fatalf("the callback ran a third time (onLoop %v)", onLoop)
	case <-time.After(20 * time.Millisecond):
	}
}

// TryWrite takes what the socket accepts and never waits: against a peer that
// reads nothing it fills the send buffer and then reports 0, and the bytes
// arrive in order once the peer reads.
func TestTryWriteNeverWaits(t *testing.T) {
	a, b := pair(t)
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	var sent int
	for range 10000 {
		n, err := a.TryWrite(chunk[sent%len(chunk):])
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		sent += n
	}
	if n, _ := a.TryWrite(chunk); n != 0 {
		t.Fatalf("TryWrite on a full socket wrote %d bytes", n)
	}
	if sent == 0 {
		t.Fatal("TryWrite wrote nothing to an empty socket")
	}
	got := make([]byte, sent)
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	for i, x := range got {
		if x != byte(i%len(chunk)) {
			t.Fatalf("byte %d = %d, want %d", i, x, byte(i%len(chunk)))
		}
	}
	_ = a.Close()
	if _, err := a.TryWrite(chunk); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("TryWrite on a closed Conn = %v", err)
	}
}

// A read that does not fill its buffer leaves the socket known to be empty, and
// the next try makes no read(2) until an event says more came: no byte and no
// end of stream may be missed that way, however the writes fall.
func TestShortReadsMissNothing(t *testing.T) {
	for round := range 20 {
		a, b := pair(t)
		var want bytes.Buffer
		go func() {
			for i := range 200 {
				chunk := bytes.Repeat([]byte{byte(i)}, 1+(i*37+round)%300)
				_, _ = b.Write(chunk)
				if i%(1+round%7) == 0 {
					time.Sleep(time.Duration(i%3) * 50 * time.Microsecond)
				}
			}
			_ = b.Close()
		}()
		for i := range 200 {
			want.Write(bytes.Repeat([]byte{byte(i)}, 1+(i*37+round)%300))
		}
		var got bytes.Buffer
		buf := make([]byte, 512)
		_ = a.SetReadDeadline(time.Now().Add(10 * time.Second)) // a missed event fails, not hangs
		for {
			n, err := a.TryRead(buf)
			got.Write(buf[:n])
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				if err := a.WaitReadable(); err != nil {
					t.Fatalf("round %d: after %d of %d bytes: %v", round, got.Len(), want.Len(), err)
				}
			}
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("round %d: read %d bytes, want %d (or they differ)", round, got.Len(), want.Len())
		}
	}
}

// resumerGoroutines counts the goroutines that run parked readers' callbacks.
func resumerGoroutines() int {
	buf := make([]byte, 1<<20)
	return bytes.Count(buf[:runtime.Stack(buf, true)], []byte("rawtcp.(*Poller).resumer("))
}

func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// eventually fails the test unless cond holds within 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal(what)
		}
	}
}

// A parked reader's callback runs on a goroutine that ran one before when one
// is idle (no goroutine is started for it); a burst's goroutines stay, at most
// maxIdleResumers of them, and every one ends with the Poller.
func TestResumersAreReusedAndBounded(t *testing.T) {
	p, err := NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ran := make(chan struct{})
	p.resume(func(bool) bool { ran <- struct{}{}; return false })
	<-ran
	eventually(t, "the first callback's goroutine did not wait for the next", func() bool { return p.idle.Load() == 1 })
	before := goroutinesCreated()
	for range 20 {
		p.resume(func(bool) bool { ran <- struct{}{}; return false })
		<-ran
		eventually(t, "the resumer did not come back", func() bool { return p.idle.Load() == 1 })
	}
	if n := goroutinesCreated() - before; n != 0 {
		t.Fatalf("20 callbacks with a resumer idle started %d goroutines", n)
	}

	release := make(chan struct{})
	var started sync.WaitGroup
	for range 3 * maxIdleResumers {
		started.Add(1)
		p.resume(func(bool) bool { started.Done(); <-release; return false })
	}
	started.Wait() // all at once: each on its own goroutine
	close(release)
	eventually(t, "the burst's goroutines did not settle to the idle bound", func() bool {
		return p.idle.Load() == maxIdleResumers && resumerGoroutines() == maxIdleResumers
	})

	p.Close()
	eventually(t, "resumers outlived their Poller", func() bool { return resumerGoroutines() == 0 })
	p.resume(func(bool) bool { ran <- struct{}{}; return false }) // a kick after Close still runs its callback
	<-ran
	eventually(t, "a resumer started after Close stayed", func() bool { return resumerGoroutines() == 0 })
}

// Unpark takes back a parked callback: it no longer runs on an event or a
// Close, and it is handed back once only.
func TestUnpark(t *testing.T) {
	a, b := pair(t)
	_, _ = a.TryRead(make([]byte, 1))
	ran := make(chan bool, 1)
	fn := func(onLoop bool) bool { ran <- onLoop; return false }
	if a.Unpark() != nil {
		t.Fatal("Unpark with nothing parked returned a callback")
	}
	if !a.OnReadable(fn) {
		t.Fatal("did not park")
	}
	got := a.Unpark()
	if got == nil {
		t.Fatal("Unpark did not return the parked callback")
	}
	if a.Unpark() != nil {
		t.Fatal("a second Unpark returned the callback again")
	}
	_, _ = b.Write([]byte("x"))
	_ = a.Close()
	select {
	case <-ran:
		t.Fatal("an unparked callback ran")
	case <-time.After(50 * time.Millisecond):
	}
	got(false)
	if onLoop := <-ran; onLoop {
		t.Fatal("the callback handed back did not run as called")
	}
}

// A TryRead right after a short read of a socket that never waited (a relay
// parking after the login's last read) joins the Poller's set instead of
// reading: no read(2) that would find nothing. What came after that short
// read is not lost: joining the set reports it, and a parked reader runs.
func TestTryReadAfterAShortReadJoinsTheSet(t *testing.T) {
	a, b := pair(t)
	if _, err := b.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, err := a.Read(buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	before := registeredIn(a.poller)
	if _, err := b.Write([]byte("second")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // on loopback the bytes are there now
	if n, err := a.TryRead(buf); n != 0 || err != nil {
		t.Fatalf("TryRead after a short read = %q, %v; want nothing (the socket joins the set instead)", buf[:n], err)
	}
	if got := registeredIn(a.poller); got != before+1 {
		t.Fatalf("sockets in the Poller's set: %d, want %d", got, before+1)
	}
	ran := make(chan struct{})
	if a.OnReadable(func(bool) bool { close(ran); return false }) {
		select {
		case <-ran:
		case <-time.After(5 * time.Second):
			t.Fatal("bytes that came before the socket joined the set never woke its parked reader")
		}
	}
	if n, err := a.TryRead(buf); err != nil || string(buf[:n]) != "second" {
		t.Fatalf("TryRead after the wake = %q, %v; want \"second\"", buf[:n], err)
	}
	// A read that fills its buffer says nothing of what is left: the next try reads.
	c, d := pair(t)
	if _, err := d.Write([]byte("abcd")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if n, err := c.Read(buf[:2]); err != nil || n != 2 {
		t.Fatalf("Read = %d, %v", n, err)
	}
	if n, err := c.TryRead(buf); err != nil || string(buf[:n]) != "cd" {
		t.Fatalf("TryRead after a full read = %q, %v; want \"cd\"", buf[:n], err)
	}
}
