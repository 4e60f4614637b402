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
	w := watchStall(proxySide, timeout)
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
	w := watchStall(proxySide, timeout)
	w.stop()
	time.Sleep(4 * timeout)
	if _, err := backend.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := proxySide.Read(make([]byte, 1)); err != nil {
		t.Fatalf("read after the watch stopped: %v", err)
	}
}
