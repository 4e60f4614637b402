//go:build linux

package rawtcp

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrPollerClosed is what a call that must wait returns once its Poller is closed.
var ErrPollerClosed = errors.New("rawtcp: poller closed")

// Poller is where Conns wait when a call cannot finish at once: an epoll set of its
// own, edge-triggered, that a socket joins at its first wait (one epoll_ctl ADD)
// and leaves when it is closed or its fd is taken (one DEL). Its epoll fd is in
// Go's netpoller, so the one goroutine that collects its events parks like any
// network reader and holds no thread; it wakes the waiting Conns.
//
// Why not Go's netpoller for the sockets themselves: a socket enters it only with
// os.NewFile (fcntl, epoll_ctl, an os.File and a pollDesc, the deadline timers) and
// leaves it only by close, so a socket handed to the epoll forwarder afterwards
// costs a dup, a DEL and a close more; in a login's profile that path, taken by
// every backend whose answer was not there at the first read, was 7 % of the CPU.
type Poller struct {
	epfd    int
	file    *os.File // the epoll fd, in Go's netpoller
	rc      syscall.RawConn
	events  []unix.EpollEvent // the loop's alone
	woken   []wake            // the loop's alone
	closing atomic.Bool
	done    chan struct{}
	waiters sync.Pool // *waiter

	mu    sync.Mutex // guards conns, free, gen
	conns []*Conn    // registered Conns by slot
	free  []uint32
	gen   uint32
}

type wake struct {
	c      *Conn
	events uint32
}

// NewPoller starts a Poller; Close stops it.
func NewPoller() (*Poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("rawtcp: epoll_create1: %w", err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("rawtcp: epoll fd non-blocking: %w", err)
	}
	file := os.NewFile(uintptr(epfd), "rawtcp-epoll")
	rc, err := file.SyscallConn()
	if err == nil {
		// A deadline only works on a file in Go's netpoller: this proves it is there.
		err = file.SetReadDeadline(time.Time{})
	}
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("rawtcp: epoll fd not pollable by Go: %w", err)
	}
	p := &Poller{epfd: epfd, file: file, rc: rc, events: make([]unix.EpollEvent, 128), done: make(chan struct{})}
	go p.run()
	return p, nil
}

// Close stops the Poller: every wait on it, now or later, returns ErrPollerClosed.
// The Conns stay open; their owners close them.
func (p *Poller) Close() error {
	if p.closing.Swap(true) {
		return nil
	}
	_ = p.file.SetReadDeadline(time.Unix(1, 0)) // wakes the loop
	<-p.done
	err := p.file.Close()
	p.mu.Lock()
	conns := append([]*Conn(nil), p.conns...)
	p.mu.Unlock()
	for _, c := range conns {
		if c != nil {
			c.wakeAll()
		}
	}
	return err
}

func (p *Poller) closed() bool { return p.closing.Load() }

func (p *Poller) run() {
	defer close(p.done)
	for !p.closing.Load() {
		if err := p.rc.Read(p.collect); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return // the epoll fd is gone: only Close does that, after we exit
		}
	}
}

// collect takes the events that are ready and wakes their Conns. Returning false
// parks the goroutine until Go's netpoller sees the epoll fd readable again (Go
// records any edge since the Read began, so none is slept through).
func (p *Poller) collect(epfd uintptr) bool {
	for {
		if p.closing.Load() {
			return true
		}
		n, err := pollEvents(int(epfd), p.events)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return true // EBADF/EINVAL: cannot happen while we hold the fd
		}
		p.mu.Lock()
		for _, ev := range p.events[:n] {
			slot := uint32(ev.Fd)
			if int(slot) < len(p.conns) {
				if c := p.conns[slot]; c != nil && c.gen == uint32(ev.Pad) {
					p.woken = append(p.woken, wake{c, ev.Events})
				}
			}
		}
		p.mu.Unlock()
		for i, w := range p.woken {
			w.c.notify(w.events)
			p.woken[i] = wake{}
		}
		p.woken = p.woken[:0]
		if n < len(p.events) {
			return false
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

// add registers c's socket (c.mu held, so the fd is c's): the event data names the
// Conn by slot and generation, never by fd number, so an event that comes after
// the Conn let go of its slot is dropped.
func (p *Poller) add(c *Conn) error {
	if p.closed() {
		return ErrPollerClosed
	}
	p.mu.Lock()
	p.gen++
	c.gen = p.gen
	if n := len(p.free); n > 0 {
		c.slot = p.free[n-1]
		p.free = p.free[:n-1]
		p.conns[c.slot] = c
	} else {
		c.slot = uint32(len(p.conns))
		p.conns = append(p.conns, c)
	}
	p.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(c.slot), Pad: int32(c.gen)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		p.remove(c)
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// remove gives c's slot back; the caller closes the fd or deletes it from the set.
func (p *Poller) remove(c *Conn) {
	p.mu.Lock()
	if int(c.slot) < len(p.conns) && p.conns[c.slot] == c {
		p.conns[c.slot] = nil
		p.free = append(p.free, c.slot)
	}
	p.mu.Unlock()
}

// del takes c's socket out of the set (c.mu held), for an fd that stays open.
func (p *Poller) del(c *Conn) {
	if !p.closed() { // a closed Poller's epoll fd number may belong to another file now
		_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	}
	p.remove(c)
}
