package mc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"
)

// pipeWaiter is a connection whose bytes arrive when the test says: TryRead
// takes what has come, WaitReadable blocks until more comes or it is closed.
// It records whether the Conn held a read buffer each time it waited.
type pipeWaiter struct {
	mu      sync.Mutex
	cond    *sync.Cond
	buf     bytes.Buffer
	closed  bool
	conn    *Conn
	waiting chan struct{} // a send per WaitReadable
	waits   int
	heldBuf int // waits during which conn.br was not nil
	tries   int // TryRead calls
}

func newPipeWaiter() *pipeWaiter {
	p := &pipeWaiter{waiting: make(chan struct{}, 100)}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// awaitWaiting returns once the reader waits for bytes without reading.
func (p *pipeWaiter) awaitWaiting(t *testing.T) {
	t.Helper()
	select {
	case <-p.waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader never waited without reading")
	}
}

func (p *pipeWaiter) send(b []byte) {
	p.mu.Lock()
	p.buf.Write(b)
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *pipeWaiter) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *pipeWaiter) TryRead(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries++
	if p.buf.Len() == 0 {
		if p.closed {
			return 0, io.EOF
		}
		return 0, nil
	}
	return p.buf.Read(b)
}

func (p *pipeWaiter) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.buf.Len() == 0 && !p.closed {
		p.cond.Wait()
	}
	if p.buf.Len() == 0 {
		return 0, io.EOF
	}
	return p.buf.Read(b)
}

func (p *pipeWaiter) WaitReadable() error {
	// Called on the Conn's reading goroutine: conn.br is safe to look at.
	held := p.conn.br != nil
	p.waiting <- struct{}{}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waits++
	if held {
		p.heldBuf++
	}
	for p.buf.Len() == 0 && !p.closed {
		p.cond.Wait()
	}
	return nil
}

// encodedFrames is n packets as they cross the wire, one slice each: packet i
// has id i and size(i) bytes of i, encrypted with testSecret if asked.
func encodedFrames(t *testing.T, n int, size func(i int) int, encrypted bool) [][]byte {
	t.Helper()
	var wire bytes.Buffer
	w := NewConn(nil, &wire, nil)
	if encrypted {
		if err := w.EnableEncryption(testSecret); err != nil {
			t.Fatal(err)
		}
	}
	return writtenFrames(t, w, &wire, n, size)
}

// writtenFrames writes n packets (id i, size(i) bytes of i) with w, whose
// writer is wire, and returns each one's frame as it went out.
func writtenFrames(t *testing.T, w *Conn, wire *bytes.Buffer, n int, size func(i int) int) [][]byte {
	t.Helper()
	frames := make([][]byte, n)
	for i := range frames {
		start := wire.Len()
		if err := w.WritePacket(int32(i), bytes.Repeat([]byte{byte(i)}, size(i))); err != nil {
			t.Fatal(err)
		}
		frames[i] = append([]byte(nil), wire.Bytes()[start:]...)
	}
	return frames
}

// A lending Conn holds no buffer while it waits between frames, still reads
// frames that arrive in pieces (the rest of a frame is waited for with the
// buffer held), encrypted or not, and ends with io.EOF.
func TestConnLendsItsBufferWhileWaiting(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		frames := encodedFrames(t, 40, func(i int) int { return (i * 131) % 9000 }, encrypted)
		src := newPipeWaiter()
		r := NewConn(GetReader(src), io.Discard, nil)
		src.conn = r
		if encrypted {
			if err := r.EnableEncryption(testSecret); err != nil {
				t.Fatal(err)
			}
		}
		r.LendBuffers(src)
		done := make(chan error, 1)
		go func() {
			for i := range frames {
				if err := r.Await(); err != nil {
					done <- err
					return
				}
				f, err := r.ReadFrame()
				if err != nil {
					done <- err
					return
				}
				if f.ID != int32(i) || len(f.Payload) != (i*131)%9000 {
					done <- errors.New("wrong frame")
					return
				}
			}
			_, err := r.ReadFrame()
			done <- err
		}()
		for i, f := range frames {
			src.awaitWaiting(t)         // the reader has read everything and waits
			if i%3 == 0 && len(f) > 2 { // a frame in two pieces
				src.send(f[:len(f)/2])
				src.send(f[len(f)/2:])
			} else {
				src.send(f)
			}
		}
		src.awaitWaiting(t)
		src.close()
		if err := <-done; !errors.Is(err, io.EOF) {
			t.Fatalf("encrypted=%v: after the last frame: %v, want io.EOF", encrypted, err)
		}
		if src.waits == 0 || src.heldBuf != 0 {
			t.Fatalf("encrypted=%v: waited %d times, %d of them holding a buffer; want >0 and 0", encrypted, src.waits, src.heldBuf)
		}
		r.Release()
	}
}

// resume is a parked reader's callback, as a relay parks one on its socket
// once the Conn is Idle (internal/session).
type resume = func(onLoop bool) (again bool)

// parkingPipe is a pipeWaiter that can also call back (as rawtcp.Conn does):
// fn runs on a goroutine of its own when bytes come or the pipe closes.
type parkingPipe struct {
	*pipeWaiter
	fn     resume
	parked chan bool // a send per park: whether the Conn held a buffer
}

func (p *parkingPipe) OnReadable(fn resume) bool {
	held := p.conn.br != nil // on the reading goroutine
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf.Len() > 0 || p.closed {
		return false
	}
	p.fn = fn
	p.parked <- held
	return true
}

func (p *parkingPipe) Unpark() resume {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn := p.fn
	p.fn = nil
	return fn
}

func (p *parkingPipe) wake() {
	p.mu.Lock()
	fn := p.fn
	p.fn = nil
	p.mu.Unlock()
	if fn != nil {
		go fn(false)
	}
}

// A relay that parks (once Conn.Idle) instead of waiting holds neither a buffer nor
// a goroutine between frames, resumes where it was when bytes come (a frame in
// pieces is read whole, holding the buffer), encrypted or not, and sees the end.
func TestConnParksBetweenFrames(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		// 31: the last comes with the one before (i%4 == 2).
		frames := encodedFrames(t, 31, func(i int) int { return (i * 197) % 7000 }, encrypted)
		r := NewConn(nil, io.Discard, nil)
		if encrypted {
			if err := r.EnableEncryption(testSecret); err != nil {
				t.Fatal(err)
			}
		}
		src := &parkingPipe{pipeWaiter: newPipeWaiter(), parked: make(chan bool, 100)}
		src.conn = r
		r.LendBuffers(src)

		done := make(chan error, 1)
		next := 0
		var run resume
		run = func(bool) bool {
			for {
				if r.Idle() && src.OnReadable(run) {
					return false
				}
				f, err := r.ReadFrame()
				if err != nil {
					done <- err
					return false
				}
				if f.ID != int32(next) || len(f.Payload) != (next*197)%7000 {
					done <- errors.New("wrong frame")
					return false
				}
				next++
			}
		}
		go run(false)
		awaitPark := func() {
			t.Helper()
			select {
			case held := <-src.parked:
				if held {
					t.Fatalf("encrypted=%v: parked holding a read buffer", encrypted)
				}
			case err := <-done:
				t.Fatalf("encrypted=%v: the reader ended: %v", encrypted, err)
			case <-time.After(5 * time.Second):
				t.Fatalf("encrypted=%v: the reader never parked", encrypted)
			}
		}
		for i, f := range frames {
			if i%4 == 1 { // two frames at once: read on without parking between
				continue
			}
			awaitPark()
			if i%4 == 2 {
				f = append(append([]byte(nil), frames[i-1]...), f...)
			}
			if i%3 == 0 && len(f) > 2 { // a frame in two pieces
				src.send(f[:len(f)/2])
				src.wake()
				time.Sleep(time.Millisecond)
				src.send(f[len(f)/2:])
			} else {
				src.send(f)
			}
			src.wake()
		}
		awaitPark()
		src.close()
		src.wake()
		if err := <-done; !errors.Is(err, io.EOF) {
			t.Fatalf("encrypted=%v: after the last frame: %v, want io.EOF", encrypted, err)
		}
		if next != len(frames) {
			t.Fatalf("encrypted=%v: read %d frames of %d", encrypted, next, len(frames))
		}
		r.Release()
	}
}

// At the end of the stream a lending Conn gives its buffer back (a session's
// end leaves none to the collector) and remembers the end: reading again
// returns io.EOF without another read of the source.
func TestConnGivesItsBufferBackAtTheEnd(t *testing.T) {
	frames := encodedFrames(t, 2, func(int) int { return 10 }, false)
	src := newPipeWaiter()
	r := NewConn(GetReader(src), io.Discard, nil)
	src.conn = r
	r.LendBuffers(src)
	src.send(bytes.Join(frames, nil))
	src.close()
	for i := range frames {
		if f, err := r.ReadFrame(); err != nil || f.ID != int32(i) {
			t.Fatalf("frame %d: id %d, %v", i, f.ID, err)
		}
	}
	for range 3 {
		if _, err := r.ReadRaw(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the end: %v, want io.EOF", err)
		}
		if r.br != nil {
			t.Fatal("the Conn holds a read buffer after the end")
		}
	}
	src.mu.Lock()
	tries := src.tries
	src.mu.Unlock()
	if tries != 2 { // the frames' read, the end's
		t.Fatalf("%d reads of the source, want 2", tries)
	}
}

// socketPipe is a parkingPipe that also writes, without waiting: a Socket.
type socketPipe struct{ *parkingPipe }

func (*socketPipe) Write(p []byte) (int, error)    { return len(p), nil }
func (*socketPipe) TryWrite(p []byte) (int, error) { return len(p), nil }

// The generic constructors for a Socket make the Conn NewConn and LendBuffers
// make of it: one that writes without waiting and lends its buffer.
func TestSocketConnIsNewConnLending(t *testing.T) {
	s := &socketPipe{&parkingPipe{pipeWaiter: newPipeWaiter(), parked: make(chan bool, 1)}}
	br := bufio.NewReader(s)
	want := NewConn(br, s, nil)
	want.LendBuffers(s)
	got := NewSocketConn(br, s, nil)
	LendSocket(got, s)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("NewSocketConn and LendSocket: %+v; NewConn and LendBuffers: %+v", got, want)
	}
	if got.tw == nil || got.lend.src == nil {
		t.Fatal("the socket's write-without-waiting or wait side is missing")
	}
}
