//go:build linux

package rawtcp

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/epoll"
)

// ErrPollerClosed is what a call that must wait returns once its Poller is closed.
var ErrPollerClosed = errors.New("rawtcp: poller closed")

// Poller is where Conns wait when a call cannot finish at once: an epoll set of its
// own (an epoll.Set, parked in Go's netpoller), edge-triggered, that a socket joins
// at its first wait (one epoll_ctl ADD) and leaves when it is closed or its fd is
// taken (one DEL). The one goroutine that collects its events holds no thread while
// nothing happens; it wakes the waiting Conns.
//
// Why not Go's netpoller for the sockets themselves: a socket enters it only with
// os.NewFile (fcntl, epoll_ctl, an os.File and a pollDesc, the deadline timers) and
// leaves it only by close, so a socket handed to the epoll forwarder afterwards
// costs a dup, a DEL and a close more; in a login's profile that path, taken by
// every backend whose answer was not there at the first read, was 7 % of the CPU.
type Poller struct {
	set     *epoll.Set
	events  []unix.EpollEvent // the loop's alone
	woken   []wake            // the loop's alone
	closing atomic.Bool
	done    chan struct{}
	waiters sync.Pool // *waiter

	// A parked reader's callback (OnReadable) runs on the loop itself when few
	// events came at once (runParked), else, or for what would wait, on a
	// resumer: a goroutine that ran one before and waits for the next, when one
	// is idle, so the callback starts on a stack grown already; else on a new
	// goroutine, which stays as a resumer while fewer than maxIdleResumers are idle.
	resumes chan func(bool) bool // unbuffered: a send succeeds only into an idle resumer
	idle    atomic.Int32

	mu    sync.Mutex // guards conns
	conns epoll.Table[*Conn]
}

type wake struct {
	c      *Conn
	events uint32
}

// NewPoller starts a Poller; Close stops it.
func NewPoller() (*Poller, error) {
	set, err := epoll.Open("rawtcp-epoll")
	if err != nil {
		return nil, fmt.Errorf("rawtcp: %w", err)
	}
	p := &Poller{set: set, events: make([]unix.EpollEvent, 128), done: make(chan struct{}), resumes: make(chan func(bool) bool)}
	go p.run()
	return p, nil
}

// Close stops the Poller: every wait on it, now or later, returns ErrPollerClosed.
// The Conns stay open; their owners close them.
func (p *Poller) Close() error {
	if p.closing.Swap(true) {
		return nil
	}
	p.set.Wake()
	<-p.done
	err := p.set.Close()
	var conns []*Conn
	p.mu.Lock()
	p.conns.Each(func(c *Conn) { conns = append(conns, c) })
	p.mu.Unlock()
	for _, c := range conns {
		c.wakeAll()
	}
	return err
}

func (p *Poller) closed() bool { return p.closing.Load() }

func (p *Poller) run() {
	defer close(p.done)
	for !p.closing.Load() {
		if err := p.set.Serve(p.collect); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return // the epoll fd is gone: only Close does that, after we exit
		}
	}
}

// collect takes the events that are ready and wakes their Conns; false parks the
// loop until more come (epoll.Set.Serve).
func (p *Poller) collect(epfd uintptr) bool {
	for {
		if p.closing.Load() {
			return true
		}
		n, err := epoll.Wait(int(epfd), p.events)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return true // EBADF/EINVAL: cannot happen while we hold the fd
		}
		p.mu.Lock()
		for _, ev := range p.events[:n] {
			if c, ok := p.conns.Get(uint32(ev.Fd), uint32(ev.Pad)); ok {
				p.woken = append(p.woken, wake{c, ev.Events})
			}
		}
		p.mu.Unlock()
		onLoop := len(p.woken) <= maxOnLoop
		for i, w := range p.woken {
			if fn := w.c.notify(w.events); fn != nil {
				p.runParked(fn, onLoop)
			}
			p.woken[i] = wake{}
		}
		p.woken = p.woken[:0]
		if n < len(p.events) {
			return false
		}
	}
}

// maxOnLoop is how many sockets may wake in one batch for their callbacks to run
// on the loop. A wake-up handed to a goroutine costs a few microseconds of
// scheduling, and, when the other cores sleep, a thread's wake: in a relay
// of a few frames that is most of the work (a quiet proxy's login). When
// more wake at once, the cores are better used by goroutines of their own,
// and one socket's frames do not wait behind another's.
const maxOnLoop = 4

// runParked runs a parked reader's callback, on the loop when onLoop (and on a
// resumer again for what it could not do there).
func (p *Poller) runParked(fn func(bool) bool, onLoop bool) {
	if !onLoop || fn(true) {
		p.resume(fn)
	}
}

// maxIdleResumers bounds the goroutines kept for callbacks to come: enough for a
// burst of events on every core, few enough that their stacks cost nothing.
const maxIdleResumers = 64

// resume runs fn off the loop, on an idle resumer or on a new goroutine.
func (p *Poller) resume(fn func(bool) bool) {
	select {
	case p.resumes <- fn:
	default:
		go p.resumer(fn)
	}
}

// resumer runs fn, then the callbacks handed to it, until enough others are
// idle or the Poller is closed.
func (p *Poller) resumer(fn func(bool) bool) {
	for {
		fn(false)
		fn = nil // an idle resumer holds nothing of the callback it ran
		if p.idle.Add(1) <= maxIdleResumers {
			select {
			case fn = <-p.resumes:
			case <-p.done:
			}
		}
		p.idle.Add(-1)
		if fn == nil {
			return // enough are idle, or the Poller is closed
		}
	}
}

func (p *Poller) waiter() *waiter {
	if w, ok := p.waiters.Get().(*waiter); ok {
		return w
	}
	return &waiter{ch: make(chan struct{}, 1)}
}

func (p *Poller) putWaiter(w *waiter) { p.waiters.Put(w) }

// add registers c's socket (c.mu held, so the fd is c's) for input, and for
// output too when out: the event data names the Conn by slot and generation
// (epoll.Table), never by fd number.
func (p *Poller) add(c *Conn, out bool) error {
	if p.closed() {
		return ErrPollerClosed
	}
	p.mu.Lock()
	c.slot, c.gen = p.conns.Add(c)
	p.mu.Unlock()
	if err := p.set.Add(c.fd, pollEvents(out), int32(c.slot), int32(c.gen)); err != nil {
		p.remove(c)
		return err
	}
	return nil
}

// watchOut adds EPOLLOUT to c's registration (c.mu held, registered).
func (p *Poller) watchOut(c *Conn) error {
	if p.closed() {
		return ErrPollerClosed
	}
	return p.set.Modify(c.fd, pollEvents(true), int32(c.slot), int32(c.gen))
}

func pollEvents(out bool) uint32 {
	ev := uint32(unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET)
	if out {
		ev |= unix.EPOLLOUT
	}
	return ev
}

// remove gives c's slot back; the caller closes the fd or deletes it from the set.
func (p *Poller) remove(c *Conn) {
	p.mu.Lock()
	p.conns.Remove(c.slot, c)
	p.mu.Unlock()
}

// del takes c's socket out of the set (c.mu held), for an fd that stays open.
func (p *Poller) del(c *Conn) {
	if !p.closed() { // a closed Poller's epoll fd number may belong to another file now
		_ = p.set.Delete(c.fd)
	}
	p.remove(c)
}
