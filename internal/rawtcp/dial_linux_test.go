//go:build linux

package rawtcp

import (
	"context"
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
