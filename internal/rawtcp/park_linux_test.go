//go:build linux

package rawtcp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

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
