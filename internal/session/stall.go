package session

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// stallWatch ends a backend's pending read once nothing has arrived from it for
// timeout. The pump counts frames and a timer looks at the count every quarter
// of the timeout, so the relay pays an atomic add per frame where a read
// deadline per frame cost a clock read and a runtime timer change (15 % of an
// offline relay's CPU). A stall is noticed between timeout and 1.25 × timeout
// after the last frame.
type stallWatch struct {
	frames atomic.Uint64
	conn   net.Conn
	limit  time.Duration

	mu      sync.Mutex // guards the rest: the timer's goroutine and stop
	timer   *time.Timer
	seen    uint64
	quiet   time.Duration
	stopped bool
}

func watchStall(conn net.Conn, timeout time.Duration) *stallWatch {
	w := &stallWatch{conn: conn, limit: timeout}
	w.mu.Lock()
	w.timer = time.AfterFunc(w.step(), w.look)
	w.mu.Unlock()
	return w
}

func (w *stallWatch) step() time.Duration { return max(w.limit/4, time.Millisecond) }

// frame records that something arrived.
func (w *stallWatch) frame() { w.frames.Add(1) }

func (w *stallWatch) look() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if n := w.frames.Load(); n != w.seen {
		w.seen, w.quiet = n, 0
	} else if w.quiet += w.step(); w.quiet >= w.limit {
		// The pump's read fails with os.ErrDeadlineExceeded: the stall.
		_ = w.conn.SetReadDeadline(time.Now())
		return
	}
	w.timer.Reset(w.step())
}

// stop ends the watch; the connection's deadline is left as it is.
func (w *stallWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}
