package session

import (
	"net"
	"sync"
	"time"
)

// clientWriteTimeout bounds every write the proxy makes to the player of its
// own (a chat line, a title, the limbo's keep-alives, a switch), and the
// relay's write it waits behind: a client that takes nothing from its socket
// for this long is gone (a full send buffer for half a minute is no player).
const clientWriteTimeout = 30 * time.Second

// kickWriteTimeout bounds a kick's last words, which come while the session
// is ending and must not wait on a writer stuck behind a silent client.
const kickWriteTimeout = 5 * time.Second

// clientWriter is the one way to the player's socket. Every write to him holds
// its lock: the relay's frames, a switch leaving a backend (no packet of the old
// server reaches the client after the switch began), Tell, Kick, the limbo's
// keep-alives and titles, a filter's injections. So two writers never
// interleave frames.
//
// The proxy's own writes (Lock) run under a write deadline, set when they take
// the writer and lifted when they give it back. The relay's (lockRelay,
// tryLock on the event loop) set none: a deadline per frame would cost a clock
// read and a system call each, and a relay write that waits is the relay's
// back-pressure. When one of the proxy's writes finds the writer taken, it
// first puts the deadline on the socket, so a relay write stuck behind a client
// that reads nothing gives up within clientWriteTimeout and lets it through.
type clientWriter struct {
	mu  sync.Mutex
	net net.Conn
	// timeout and kickTimeout are clientWriteTimeout and kickWriteTimeout
	// (shorter in tests).
	timeout, kickTimeout time.Duration
}

func (w *clientWriter) init(c net.Conn) {
	w.net, w.timeout, w.kickTimeout = c, clientWriteTimeout, kickWriteTimeout
}

// Lock takes the writer for one of the proxy's own writes, under the write
// deadline. (Lock and Unlock make it a sync.Locker, limbo.Player.Writer.)
func (w *clientWriter) Lock() {
	if !w.mu.TryLock() {
		w.bound(w.timeout) // whoever holds it gives up in time
		w.mu.Lock()
	}
	w.bound(w.timeout)
}

// Unlock lifts the deadline Lock set and gives the writer back.
func (w *clientWriter) Unlock() {
	w.bound(0)
	w.mu.Unlock()
}

// lockRelay takes the writer for the relay's writes off the event loop:
// no deadline of its own (see clientWriter).
func (w *clientWriter) lockRelay() { w.mu.Lock() }

// tryLock takes the writer if it is free, for the event loop, which never waits.
func (w *clientWriter) tryLock() bool { return w.mu.TryLock() }

// unlockRelay gives back a writer lockRelay or tryLock took.
func (w *clientWriter) unlockRelay() { w.mu.Unlock() }

// bound sets the socket's write deadline d from now (0: none).
func (w *clientWriter) bound(d time.Duration) {
	if w.net == nil {
		return
	}
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	_ = w.net.SetWriteDeadline(t)
}

// kick writes a goodbye with write under a short deadline. The deadline is set
// before the lock is taken, so a writer stuck behind a silent client gives up
// within kickWriteTimeout and the kick goes out (or fails) soon after. The
// deadline stays: the session ends.
func (w *clientWriter) kick(write func() error) error {
	w.bound(w.kickTimeout)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.bound(w.kickTimeout) // a writer that held the lock may have lifted it
	return write()
}
