package forward

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
)

// goroutineForwarder runs two io.Copy goroutines per session. Between two raw
// *net.TCPConn, io.Copy reaches the kernel's splice path on Linux (one pipe per
// direction, held by the copy), and a plain read/write loop elsewhere.
type goroutineForwarder struct {
	mu       sync.Mutex
	closed   bool
	sessions map[*gsession]struct{}
	wg       sync.WaitGroup
}

type gsession struct {
	f               *goroutineForwarder
	client, backend *net.TCPConn
	done            func(Result)
	up, down        int64
	left            atomic.Int32 // directions still running
	errOnce         sync.Once
	err             error
	closing         atomic.Bool // Close ended it: report ErrClosed
	ended           atomic.Bool // its end func ended it: report ErrEnded
}

// NewGoroutine returns the portable forwarder: two goroutines per session.
func NewGoroutine() Forwarder {
	return &goroutineForwarder{sessions: map[*gsession]struct{}{}}
}

func (f *goroutineForwarder) Forward(clientConn, backendConn net.Conn, done func(Result)) (end func()) {
	client, err1 := asTCPConn(clientConn)
	backend, err2 := asTCPConn(backendConn)
	if err := errors.Join(err1, err2); err != nil {
		for _, c := range []*net.TCPConn{client, backend} {
			if c != nil {
				c.Close()
			}
		}
		clientConn.Close() // a no-op for a socket already taken
		backendConn.Close()
		done(Result{Err: err})
		return noEnd
	}
	s := &gsession{f: f, client: client, backend: backend, done: done}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		client.Close()
		backend.Close()
		done(Result{Err: ErrClosed})
		return noEnd
	}
	f.sessions[s] = struct{}{}
	f.wg.Add(2)
	f.mu.Unlock()
	s.left.Store(2)
	go s.copy(backend, client, &s.up)
	go s.copy(client, backend, &s.down)
	return func() {
		s.ended.Store(true)
		s.client.Close()
		s.backend.Close()
	}
}

// copy moves one direction; a clean EOF half-closes the destination, an error tears
// both sides down. The last direction to end closes both and reports.
func (s *gsession) copy(dst, src *net.TCPConn, n *int64) {
	defer s.f.wg.Done()
	c, err := io.Copy(dst, src)
	*n = c
	if err != nil {
		s.errOnce.Do(func() { s.err = err })
		s.client.Close()
		s.backend.Close()
	} else if s.left.Load() != 1 {
		// The other direction is still going: tell dst no more bytes are coming.
		// (When it is over, both sockets are closed just below, which sends the
		// same FIN without the extra system call.)
		_ = dst.CloseWrite()
	}
	if s.left.Add(-1) != 0 {
		return
	}
	s.client.Close()
	s.backend.Close()
	s.f.mu.Lock()
	delete(s.f.sessions, s)
	s.f.mu.Unlock()
	r := Result{Up: s.up, Down: s.down, Err: s.err}
	switch {
	case s.closing.Load():
		r.Err = ErrClosed
	case s.ended.Load():
		r.Err = ErrEnded
	}
	s.done(r)
}

func (f *goroutineForwarder) Close() error {
	f.mu.Lock()
	f.closed = true
	for s := range f.sessions {
		s.closing.Store(true)
		s.client.Close()
		s.backend.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	return nil
}

// asTCPConn is c as a *net.TCPConn, which io.Copy splices between: an FDTaker's
// socket goes into Go's net (the splice path needs its netpoller).
func asTCPConn(c net.Conn) (*net.TCPConn, error) {
	switch c := c.(type) {
	case *net.TCPConn:
		return c, nil
	case FDTaker:
		fd, err := c.TakeFD()
		if err != nil {
			return nil, fmt.Errorf("forward: take socket: %w", err)
		}
		f := os.NewFile(uintptr(fd), "tcp")
		nc, err := net.FileConn(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("forward: socket into Go's net: %w", err)
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			return tc, nil
		}
		nc.Close()
	}
	return nil, errNotSocket
}
