package session

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

func tcpPair(t *testing.T) (a, b net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	a, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b = <-accepted
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// A backend that keeps sending is never taken for stalled, however long it
// goes on; once it goes quiet, the pending read fails with a deadline error,
// not before the timeout has passed since the last frame.
func TestStallWatchEndsTheReadOnlyAfterSilence(t *testing.T) {
	const timeout = 120 * time.Millisecond
	backend, proxySide := tcpPair(t)
	var w stallWatch
	w.watch(proxySide, timeout)
	defer w.stop()

	buf := make([]byte, 1)
	for range 10 { // 10 frames 40 ms apart: 400 ms, over three timeouts
		time.Sleep(timeout / 3)
		if _, err := backend.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
		if _, err := proxySide.Read(buf); err != nil {
			t.Fatalf("read while the backend sends: %v", err)
		}
		w.frame()
	}
	last := time.Now()
	_, err := proxySide.Read(buf)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after the backend went quiet: %v, want a deadline error", err)
	}
	if quiet := time.Since(last); quiet < timeout {
		t.Fatalf("stalled after %s of silence, before the %s timeout", quiet, timeout)
	}
}

// A stopped watch never touches the connection again.
func TestStallWatchStopped(t *testing.T) {
	const timeout = 40 * time.Millisecond
	backend, proxySide := tcpPair(t)
	var w stallWatch
	w.watch(proxySide, timeout)
	w.stop()
	time.Sleep(4 * timeout)
	if _, err := backend.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := proxySide.Read(make([]byte, 1)); err != nil {
		t.Fatalf("read after the watch stopped: %v", err)
	}
}

// One clock watches many backends: only the silent one stalls, the others
// keep their reads; once nothing is watched the clock stops ticking, and a
// later watch starts it again.
func TestStallClockSharedByManyBackends(t *testing.T) {
	const timeout = 80 * time.Millisecond
	const n = 5
	var ws [n]stallWatch
	var backends, proxySides [n]net.Conn
	for i := range n {
		backends[i], proxySides[i] = tcpPair(t)
		ws[i].watch(proxySides[i], timeout)
	}
	clock := ws[0].clock
	if ws[n-1].clock != clock {
		t.Fatal("two clocks for one timeout")
	}
	// All but the last keep sending for three timeouts.
	silent := make(chan error, 1)
	go func() {
		_, err := proxySides[n-1].Read(make([]byte, 1))
		silent <- err
	}()
	buf := make([]byte, 1)
	for range 12 {
		time.Sleep(timeout / 4)
		for i := range n - 1 {
			if _, err := backends[i].Write([]byte{1}); err != nil {
				t.Fatal(err)
			}
			if _, err := proxySides[i].Read(buf); err != nil {
				t.Fatalf("backend %d, sending, saw: %v", i, err)
			}
			ws[i].frame()
		}
	}
	select {
	case err := <-silent:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the silent backend's read: %v, want a deadline error", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the silent backend was not taken for stalled")
	}
	clock.mu.Lock()
	left := len(clock.watches)
	clock.mu.Unlock()
	if left != n-1 {
		t.Fatalf("%d watches left after one stalled, want %d", left, n-1)
	}
	for i := range n - 1 {
		ws[i].stop()
	}
	ws[n-1].stop() // already gone: a no-op
	waitFor(t, func() bool { clock.mu.Lock(); defer clock.mu.Unlock(); return !clock.ticking })

	// A later watch starts the clock again and is stalled in its turn.
	var w stallWatch
	_, proxySide := tcpPair(t)
	start := time.Now()
	w.watch(proxySide, timeout)
	defer w.stop()
	go func() {
		_, err := proxySide.Read(buf)
		silent <- err
	}()
	select {
	case err := <-silent:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a watch after the clock stopped: %v, want a deadline error", err)
		}
		if quiet := time.Since(start); quiet < timeout {
			t.Fatalf("stalled after %s, before the %s timeout", quiet, timeout)
		}
	case <-time.After(time.Second):
		t.Fatal("a watch after the clock stopped was never taken for stalled")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 2s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// One timeout, one clock, however the clocks were asked for in between.
func TestClockForGivesOneClockPerTimeout(t *testing.T) {
	a, b := clockFor(70*time.Millisecond), clockFor(90*time.Millisecond)
	if a == b {
		t.Fatal("two timeouts share a clock")
	}
	if clockFor(70*time.Millisecond) != a || clockFor(90*time.Millisecond) != b || clockFor(90*time.Millisecond) != b {
		t.Fatal("a timeout asked for again got a clock of its own")
	}
	if a.limit != 70*time.Millisecond || a.step != 70*time.Millisecond/4 {
		t.Fatalf("clock of 70ms: limit %s, step %s", a.limit, a.step)
	}
}
