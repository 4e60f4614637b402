//go:build linux

package rawtcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listen returns a Listener on 127.0.0.1 and its address.
func listen(t *testing.T) (*Listener, netip.AddrPort) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewListener(ln.(*net.TCPListener))
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
	l, addr := listen(t)
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	d, err := Dial(context.Background(), addr)
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

func TestDialAcceptAndAddresses(t *testing.T) {
	a, d := pair(t)
	if noDelay(t, a) == 0 || noDelay(t, d) == 0 {
		t.Fatalf("TCP_NODELAY accepted=%d dialled=%d, want both on", noDelay(t, a), noDelay(t, d))
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

// TestTakeFD: the taker owns a socket that works; the Conn is closed without
// touching it, and later calls on the Conn fail cleanly.
func TestTakeFD(t *testing.T) {
	for _, waited := range []bool{false, true} {
		a, d := pair(t)
		if waited {
			_ = a.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			_, _ = a.Read(make([]byte, 1))
		}
		own := a.fd
		fd, err := a.TakeFD()
		if err != nil {
			t.Fatal(err)
		}
		if !waited && fd != own {
			t.Errorf("a socket Go never held came back as fd %d, not its own %d", fd, own)
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

func TestDialRefusedAndCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr).AddrPort()
	ln.Close()
	_, err = Dial(context.Background(), addr)
	var oe *net.OpError
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &oe) || oe.Op != "dial" {
		t.Fatalf("dial to a closed port: %v, want a dial *net.OpError wrapping ECONNREFUSED", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Dial(ctx, addr); !errors.Is(err, context.Canceled) {
		t.Fatalf("dial with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestDialTimesOut dials a listener whose accept queue is full, so the kernel drops
// the SYN and the connect waits: the context's deadline ends it as a timeout.
func TestDialTimesOut(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
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
	// Fill the queue (never accepted) until a dial has to wait.
	var filled []*Conn
	defer func() {
		for _, c := range filled {
			c.Close()
		}
	}()
	for range 8 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		c, err := Dial(ctx, addr)
		cancel()
		if err != nil {
			if !isTimeout(err) || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("dial to a full accept queue: %v, want a timeout", err)
			}
			return
		}
		filled = append(filled, c)
	}
	t.Fatal("eight dials to a listener with a backlog of 0 all connected; the queue never filled")
}

func TestListenerCloseEndsAccept(t *testing.T) {
	l, _ := listen(t)
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
