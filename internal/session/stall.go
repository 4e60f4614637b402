package session

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// stallWatch ends a backend's pending read once nothing has arrived from it for
// its clock's timeout. The pump counts frames (an atomic add per frame, where a
// read deadline per frame cost a clock read and a runtime timer change: 15 % of
// an offline relay's CPU) and the clock looks at every count each quarter of
// the timeout. A stall is noticed between timeout and 1.25 × timeout after the
// last frame.
type stallWatch struct {
	frames atomic.Uint64
	conn   net.Conn
	clock  *stallClock
	// Under clock.mu: where the watch sits in clock.watches (-1: not watched),
	// the count the clock saw last and for how long it has not changed.
	at    int
	seen  uint64
	quiet time.Duration
}

// stallClock watches every backend with one timeout: one timer for all of them
// rather than one a session, so a login does not start a runtime timer and
// 8 000 held players cost one look every quarter timeout, not 8 000.
type stallClock struct {
	limit, step time.Duration

	mu      sync.Mutex
	watches []*stallWatch
	timer   *time.Timer // armed while ticking
	ticking bool        // false once a look found nothing to watch; add arms the timer again
}

// clocks holds a clock per timeout in use (a reload may change stall_timeout:
// sessions that started before keep theirs until they end).
var clocks struct {
	sync.Mutex
	by   map[time.Duration]*stallClock
	last atomic.Pointer[stallClock] // the one asked for last: every login asks, nearly always for it
}

func clockFor(timeout time.Duration) *stallClock {
	if c := clocks.last.Load(); c != nil && c.limit == timeout {
		return c // no process-wide lock on a login's path
	}
	clocks.Lock()
	defer clocks.Unlock()
	c := clocks.by[timeout]
	if c == nil {
		if clocks.by == nil {
			clocks.by = map[time.Duration]*stallClock{}
		}
		c = &stallClock{limit: timeout, step: max(timeout/4, time.Millisecond)}
		clocks.by[timeout] = c
	}
	clocks.last.Store(c)
	return c
}

// watch starts watching conn on the clock of timeout; the pump calls frame for
// what arrives and stop when it is done.
func (w *stallWatch) watch(conn net.Conn, timeout time.Duration) {
	w.conn, w.clock = conn, clockFor(timeout)
	w.clock.add(w)
}

// frame records that something arrived.
func (w *stallWatch) frame() { w.frames.Add(1) }

// stop ends the watch; the connection's deadline is left as it is.
func (w *stallWatch) stop() {
	if w.clock != nil {
		w.clock.remove(w)
	}
}

func (c *stallClock) add(w *stallWatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The first look may come at once: it counts as a change, so the timeout
	// runs from there, never from before the watch began.
	w.seen, w.quiet = ^uint64(0), 0
	w.at = len(c.watches)
	c.watches = append(c.watches, w)
	if !c.ticking {
		c.ticking = true
		if c.timer == nil {
			c.timer = time.AfterFunc(c.step, c.look)
		} else {
			c.timer.Reset(c.step)
		}
	}
}

func (c *stallClock) remove(w *stallWatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(w)
}

func (c *stallClock) removeLocked(w *stallWatch) {
	i := w.at
	if i < 0 || i >= len(c.watches) || c.watches[i] != w {
		return // already gone (stalled)
	}
	last := len(c.watches) - 1
	c.watches[i] = c.watches[last]
	c.watches[i].at = i
	c.watches[last] = nil
	c.watches = c.watches[:last]
	w.at = -1
	// The timer stops at its next look once nothing is watched: a login after
	// a quiet spell then does not start one.
}

// look is the clock's tick: a watch whose count has not moved for the timeout
// leaves the clock, and its connection's pending read fails with
// os.ErrDeadlineExceeded (the stall the pump reports). The deadline is set
// after the lock is let go (setting it may wake the pump, which may stop its
// watch): a pump that ends meanwhile may still get it on a connection it is
// done with, which closes anyway.
func (c *stallClock) look() {
	var stalled []net.Conn
	c.mu.Lock()
	for i := 0; i < len(c.watches); {
		w := c.watches[i]
		if n := w.frames.Load(); n != w.seen {
			w.seen, w.quiet = n, 0
		} else if w.quiet += c.step; w.quiet >= c.limit {
			stalled = append(stalled, w.conn)
			c.removeLocked(w) // the last watch moves to i: look at it next
			continue
		}
		i++
	}
	if len(c.watches) > 0 {
		c.timer.Reset(c.step)
	} else {
		c.ticking = false
	}
	if cap(c.watches) > 64 && len(c.watches) < cap(c.watches)/4 {
		c.watches = append([]*stallWatch(nil), c.watches...) // the crowd left: give the room back
	}
	c.mu.Unlock()
	for _, conn := range stalled {
		_ = conn.SetReadDeadline(time.Now())
	}
}
