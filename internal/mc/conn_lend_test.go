package mc

import (
	"bytes"
	"errors"
	"io"
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

// A lending Conn holds no buffer while it waits between frames, still reads
// frames that arrive in pieces (the rest of a frame is waited for with the
// buffer held), encrypted or not, and ends with io.EOF.
func TestConnLendsItsBufferWhileWaiting(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		var wire bytes.Buffer
		w := NewConn(nil, &wire, nil)
		if encrypted {
			if err := w.EnableEncryption(testSecret); err != nil {
				t.Fatal(err)
			}
		}
		var frames [][]byte
		for i := range 40 {
			payload := bytes.Repeat([]byte{byte(i)}, (i*131)%9000)
			start := wire.Len()
			if err := w.WritePacket(int32(i), payload); err != nil {
				t.Fatal(err)
			}
			frames = append(frames, append([]byte(nil), wire.Bytes()[start:]...))
		}
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
