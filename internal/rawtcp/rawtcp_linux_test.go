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
	"strings"
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
