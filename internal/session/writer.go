package session

import (
	"net"
	"sync"
	"time"
)

// clientWriteTimeout bounds every write to the player that can wait: a client
// that takes nothing from its socket for this long is gone (a full send buffer
// for half a minute is no player), and whoever waited for the writer goes on.
const clientWriteTimeout = 30 * time.Second

// kickWriteTimeout bounds a kick's last words, which come while the session
// is ending and must not wait on a writer stuck behind a silent client.
const kickWriteTimeout = 5 * time.Second

// clientWriter is the one way to the player's socket. Every write to him holds
// its lock: the relay's frames, a switch leaving a backend (no packet of the old
// server reaches the client after the switch began), Tell, Kick, the limbo's
// keep-alives and titles, a filter's injections. So two writers never
// interleave frames, and a write that can wait always runs under a deadline.
//
// The deadline is renewed, not set per write: lock arms it only when less than
// half of clientWriteTimeout is left, so a busy relay sets it about once every
// 15 s rather than twice per frame. The relay's writes on the event loop never
// wait (tryLock, TryWriteRelay) and arm nothing.
type clientWriter struct {
	mu  sync.Mutex
	net net.Conn
	// deadline is what was last set on net's writes; zero when unknown (the
	// limbo's hold sets deadlines of its own: forget).
	deadline time.Time
	// timeout and kickTimeout are clientWriteTimeout and kickWriteTimeout
	// (shorter in tests).
	timeout, kickTimeout time.Duration
}

func (w *clientWriter) init(c net.Conn) {
	w.net, w.timeout, w.kickTimeout = c, clientWriteTimeout, kickWriteTimeout
}

// Lock takes the writer for writes that may wait, under the write deadline.
// (Lock and Unlock make it a sync.Locker, the limbo's limbo.Player.Writer.)
func (w *clientWriter) Lock() {
	w.mu.Lock()
	w.arm()
}

// Unlock releases the writer.
func (w *clientWriter) Unlock() { w.mu.Unlock() }

// tryLock takes the writer if it is free, for the event loop, which never waits.
func (w *clientWriter) tryLock() bool { return w.mu.TryLock() }

// arm renews the write deadline when it runs short; the caller holds mu.
func (w *clientWriter) arm() {
	now := time.Now()
	if w.deadline.Sub(now) >= w.timeout/2 {
		return
	}
	w.deadline = now.Add(w.timeout)
	_ = w.net.SetWriteDeadline(w.deadline)
}

// forget drops what the writer knows of the deadline, after code that sets
// deadlines of its own (the limbo) ran on the socket; the caller holds mu or
// nothing else writes.
func (w *clientWriter) forget() { w.deadline = time.Time{} }

// kick writes a goodbye with write under a short deadline. The deadline is set
// before the lock is taken, so a writer stuck behind a silent client gives up
// within kickWriteTimeout and the kick goes out (or fails) soon after.
func (w *clientWriter) kick(write func() error) error {
	dl := time.Now().Add(w.kickTimeout)
	_ = w.net.SetWriteDeadline(dl)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = dl
	_ = w.net.SetWriteDeadline(dl) // a writer that held the lock may have renewed it
	return write()
}
