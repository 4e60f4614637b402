//go:build linux

// Package rawtcp holds a TCP socket as a bare non-blocking fd behind a net.Conn, for
// sockets on their way to the epoll forwarder.
//
// Why: a passthrough login reads the handshake (already there: the listener defers
// accept until it arrives), dials the backend (on loopback or a fast LAN connected
// by the time connect returns), writes, reads one answer, and hands both sockets to
// the epoll forwarder. Through Go's net package every socket costs an epoll_ctl ADD
// at accept or dial, getsockname/getpeername/getsockopt for its bookkeeping, and at
// the hand-over a dup, an epoll_ctl DEL and a close, so that the forwarder gets an
// fd Go no longer watches: ten system calls a login that do no work. A Conn makes
// each call itself on the non-blocking fd. Only a call that returns EAGAIN waits,
// in a Poller (poller_linux.go): the socket joins the Poller's epoll set at its
// first wait and leaves it when TakeFD gives the fd away, as it is, with no dup.
package rawtcp

import (
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/epoll"
)

// Conn is one TCP socket. It is safe for concurrent use like a net.Conn: a read and a
// write may run at once, and Close from another goroutine ends both.
type Conn struct {
	rmu, wrmu  sync.Mutex // one Read at a time, one Write at a time (as net's fdMutex)
	mu         sync.Mutex // held across every call on fd (none can block) and fd's end
	fd         int        // -1 once closed or taken
	poller     *Poller
	registered bool      // fd is in the poller's set (since the first wait)
	watchOut   bool      // its registration includes EPOLLOUT (since the first wait to write)
	rdl, wdl   time.Time // deadlines
	local      net.Addr  // filled on first LocalAddr
	remote     *net.TCPAddr
	// shortOut: the last read(2), made while not registered, filled less than
	// its buffer. A TryRead then joins the set instead of reading (readNow).
	shortOut bool

	slot, gen uint32 // the Conn's place in the poller (set by Poller.add under its mu)

	wmu    sync.Mutex // guards the wait state below
	dirs   [2]waitDir
	closed bool // closed or taken: waiters return net.ErrClosed
}

// The two directions a call may wait for.
const (
	dirRead  = 0
	dirWrite = 1
)

// waitDir is the readiness protocol of one direction, as Go's own pollDesc: an
// event sets ready; a call clears it before it tries, so an event that comes after
// the try's EAGAIN is seen by the wait that follows, not slept through.
type waitDir struct {
	ready bool
	w     *waiter                // while a call waits: kicked once (event, deadline change, Close)
	fn    func(onLoop bool) bool // instead of w, while a reader waits without a goroutine (OnReadable)
	// drained (reads only): the last read(2) filled less than its buffer, so the
	// socket was empty after it; until an event comes, a read would fail with
	// EAGAIN and is not made (nginx's way with edge-triggered epoll). ended: the
	// peer's FIN, a hang-up or an error was seen, after which a short read says
	// nothing of what is left (the end is still to be read).
	drained, ended bool
}

// waiter is what one wait blocks on, taken from the Poller's pool for the wait's
// length: most sockets wait once or twice in their life (a status ping's client,
// a backend's first answer), so a channel and a timer of their own would be
// allocated for one use.
type waiter struct {
	ch    chan struct{} // capacity 1, and at most one send per wait
	timer *time.Timer
}

func newConn(fd int, remote *net.TCPAddr, p *Poller) *Conn {
	return &Conn{fd: fd, remote: remote, poller: p}
}

// errClosed is what calls on a closed Conn return, wrapped as net's are.
var errClosed = net.ErrClosed

// Read reads from the socket, waiting in the Poller while nothing is there.
func (c *Conn) Read(b []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	for {
		n, deadline, err := c.readNow(b, false)
		if n > 0 || err != nil || len(b) == 0 {
			return n, err
		}
		if err := c.wait(dirRead, deadline); err != nil {
			return 0, c.opError("read", err)
		}
	}
}

// TryRead reads what has arrived without waiting; 0 and no error mean nothing
// has (the end of the stream is io.EOF), or, right after a short read of a
// socket that never waited, that it joined the Poller's set instead of reading
// again: a wait then ends at once for whatever came. With WaitReadable it lets
// a reader hold no buffer while it waits (mc.Conn lends its buffer out).
func (c *Conn) TryRead(b []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	n, _, err := c.readNow(b, true)
	return n, err
}

// WaitReadable waits until bytes (or the end) may have arrived since a read
// last found none, the read deadline passes or changes, or the Conn closes; nil
// means: read again.
func (c *Conn) WaitReadable() error {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.mu.Lock()
	if c.fd < 0 {
		c.mu.Unlock()
		return c.opError("read", errClosed)
	}
	deadline := c.rdl
	if expired(deadline) {
		c.mu.Unlock()
		return c.opError("read", os.ErrDeadlineExceeded)
	}
	err := c.registerLocked(dirRead)
	c.mu.Unlock()
	if err == nil {
		err = c.wait(dirRead, deadline)
	}
	if err != nil {
		return c.opError("read", err)
	}
	return nil
}

// OnReadable is WaitReadable without a waiting goroutine: it arranges for fn to
// run once bytes may have arrived since a read last found none, the read
// deadline changes, or the Conn closes; a held player's relay parks this way
// and costs no stack while the peer is silent. false means fn will not run
// because there is no need to wait (or no way to): read again. A Conn with a
// read deadline set never parks (nothing would fire at the deadline); its
// reader waits the ordinary way.
//
// When bytes arrive while the Poller is not busy, fn runs on its event loop
// (onLoop true), saving the hand-off to a goroutine: it must then wait for
// nothing (TryRead, TryWrite) and return true to be run again, on a goroutine
// of its own (the Poller's resumers, onLoop false), for whatever would wait.
// Any other wake-up (a deadline change, Close) runs it off the loop.
func (c *Conn) OnReadable(fn func(onLoop bool) bool) bool {
	// c.mu is held to the end: a deadline set or a Close meanwhile either comes
	// first (and is seen here) or finds fn armed (and runs it).
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 || !c.rdl.IsZero() || c.registerLocked(dirRead) != nil {
		return false
	}
	armed, _ := c.arm(dirRead, nil, fn)
	return armed
}

// Unpark takes back the callback OnReadable armed, if it has not run yet: the
// caller runs it itself (a session that ends runs its parked pump's end on its
// own goroutine rather than have Close hand it to another). nil: none is armed.
func (c *Conn) Unpark() func(onLoop bool) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	fn := c.dirs[dirRead].fn
	c.dirs[dirRead].fn = nil
	return fn
}

// readNow is one read(2) without waiting: n bytes, or 0 and no error when the
// socket had nothing (then the Conn is registered for the wait, and deadline
// is the one to wait under). try: a TryRead, which may report nothing without
// the read (see shortOut).
func (c *Conn) readNow(b []byte, try bool) (n int, deadline time.Time, err error) {
	c.mu.Lock()
	if c.fd < 0 {
		c.mu.Unlock()
		return 0, deadline, c.opError("read", errClosed)
	}
	deadline = c.rdl
	if expired(deadline) {
		c.mu.Unlock()
		return 0, deadline, c.opError("read", os.ErrDeadlineExceeded)
	}
	if len(b) == 0 {
		c.mu.Unlock()
		return 0, deadline, nil
	}
	if c.registered && c.emptyRead() {
		c.mu.Unlock()
		return 0, deadline, nil // as EAGAIN, without the system call
	}
	if try && c.shortOut && !c.registered {
		// A relay about to park tries its socket right after the login's last
		// short read: the read would be an EAGAIN. The socket joins the set
		// instead, as drained; whatever came since that read is reported by
		// the ADD itself (epoll polls a socket as it joins), so nothing is
		// slept through. An intercepted login's client saves a read(2) so.
		err = c.registerLocked(dirRead)
		if err == nil {
			c.readShort()
		}
		c.mu.Unlock()
		if err != nil {
			return 0, deadline, c.opError("read", err)
		}
		return 0, deadline, nil
	}
	n, err = ignoringEINTR(func() (int, error) { return epoll.Read(c.fd, b) })
	if err != unix.EAGAIN {
		short := err == nil && n > 0 && n < len(b)
		if c.registered {
			if short {
				c.readShort()
			}
		} else {
			c.shortOut = short
		}
		c.mu.Unlock()
		switch {
		case err != nil:
			return 0, deadline, c.opError("read", os.NewSyscallError("read", err))
		case n == 0:
			return 0, deadline, io.EOF
		}
		return n, deadline, nil
	}
	err = c.registerLocked(dirRead)
	c.mu.Unlock()
	if err != nil {
		return 0, deadline, c.opError("read", err)
	}
	return 0, deadline, nil
}

// Write writes all of b, waiting in the Poller while the send buffer is full.
func (c *Conn) Write(b []byte) (int, error) {
	c.wrmu.Lock()
	defer c.wrmu.Unlock()
	written := 0
	for {
		c.mu.Lock()
		if c.fd < 0 {
			c.mu.Unlock()
			return written, c.opError("write", errClosed)
		}
		deadline := c.wdl
		if expired(deadline) {
			c.mu.Unlock()
			return written, c.opError("write", os.ErrDeadlineExceeded)
		}
		c.clearReady(dirWrite)
		for written < len(b) {
			n, err := ignoringEINTR(func() (int, error) { return epoll.Write(c.fd, b[written:]) })
			if err == unix.EAGAIN {
				break
			}
			if err != nil {
				c.mu.Unlock()
				return written, c.opError("write", os.NewSyscallError("write", err))
			}
			written += n
		}
		if written == len(b) {
			c.mu.Unlock()
			return written, nil
		}
		err := c.registerLocked(dirWrite)
		c.mu.Unlock()
		if err == nil {
			err = c.wait(dirWrite, deadline)
		}
		if err != nil {
			return written, c.opError("write", err)
		}
	}
}

// TryWrite writes what the socket takes now, without waiting: perhaps all of
// b, perhaps nothing (0 and no error also when another Write is under way). A
// relay on the Poller's event loop writes this way (OnReadable).
func (c *Conn) TryWrite(b []byte) (int, error) {
	if !c.wrmu.TryLock() {
		return 0, nil
	}
	defer c.wrmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return 0, c.opError("write", errClosed)
	}
	if expired(c.wdl) {
		return 0, c.opError("write", os.ErrDeadlineExceeded)
	}
	written := 0
	for written < len(b) {
		n, err := ignoringEINTR(func() (int, error) { return epoll.Write(c.fd, b[written:]) })
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			return written, c.opError("write", os.NewSyscallError("write", err))
		}
		written += n
	}
	return written, nil
}

// registerLocked puts the socket in the poller's set at its first wait (c.mu
// held), for input only; the first wait to write adds EPOLLOUT. A fresh socket is
// writable, and with EPOLLOUT in every registration each one (two a login) woke
// the Poller at its ADD for nothing, as did every ACK that freed room after a
// write: the epoll forwarder registers the same way for the same reason. The
// ADD or MOD that adds EPOLLOUT reports the socket writable at once if room came
// since the try that failed, so no edge is slept through.
func (c *Conn) registerLocked(dir int) error {
	out := dir == dirWrite
	switch {
	case !c.registered:
		if err := c.poller.add(c, out); err != nil {
			return err
		}
		c.registered, c.watchOut = true, out
	case out && !c.watchOut:
		if err := c.poller.watchOut(c); err != nil {
			return err
		}
		c.watchOut = true
	}
	return nil
}

// emptyRead is the read direction's clearReady (c.mu held, registered): true
// when the socket is known to be empty (drained, no event since), so the read
// is not made.
func (c *Conn) emptyRead() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	d := &c.dirs[dirRead]
	if d.drained && !d.ready && !d.ended {
		return true
	}
	d.ready, d.drained = false, false
	return false
}

// readShort notes a read that did not fill its buffer (c.mu held, registered):
// an event that came meanwhile has set ready, which wins over drained.
func (c *Conn) readShort() {
	c.wmu.Lock()
	c.dirs[dirRead].drained = true
	c.wmu.Unlock()
}

// clearReady forgets the direction's past events before a try (c.mu held, so
// registered is stable; a socket not in the set has none).
func (c *Conn) clearReady(dir int) {
	if !c.registered {
		return
	}
	c.wmu.Lock()
	c.dirs[dir].ready = false
	c.wmu.Unlock()
}

// wait blocks until the direction had an event since its last clear, its deadline
// passed, its deadline changed, or the Conn or Poller closed. nil means: try again.
func (c *Conn) wait(dir int, deadline time.Time) error {
	var until time.Duration
	if !deadline.IsZero() {
		if until = time.Until(deadline); until <= 0 {
			return os.ErrDeadlineExceeded
		}
	}
	w := c.poller.waiter()
	defer c.poller.putWaiter(w)
	if armed, err := c.arm(dir, w, nil); !armed {
		return err
	}
	if until == 0 {
		<-w.ch
		return nil
	}
	if w.timer == nil {
		w.timer = time.NewTimer(until)
	} else {
		w.timer.Reset(until)
	}
	select {
	case <-w.ch:
		w.timer.Stop()
		return nil
	case <-w.timer.C:
		c.stopWaiting(dir, w)
		return os.ErrDeadlineExceeded
	}
}

// arm puts a waiter on the direction: w, whose channel a goroutine waits on,
// or fn, run by the Poller (OnReadable). Whoever kicks the
// direction later (an event, a deadline change, Close, the Poller's Close)
// finds it. Not armed, and nil: an event came since the last try, read again;
// an error: nothing will come. A direction has one reader (rmu, wrmu), so a
// second fn is refused.
func (c *Conn) arm(dir int, w *waiter, fn func(bool) bool) (bool, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	d := &c.dirs[dir]
	switch {
	case c.closed:
		return false, errClosed
	case c.poller.closed(): // under wmu: the Poller's Close kicks after us, or we see it
		return false, ErrPollerClosed
	case d.ready, fn != nil && (d.fn != nil || d.w != nil):
		return false, nil
	}
	if w != nil {
		d.w = w
	} else {
		d.fn = fn
	}
	return true, nil
}

// stopWaiting takes w back from the direction; if a kick got there first, its
// send is consumed so that w goes back to the pool empty.
func (c *Conn) stopWaiting(dir int, w *waiter) {
	c.wmu.Lock()
	d := &c.dirs[dir]
	kicked := d.w != w
	if !kicked {
		d.w = nil
	}
	c.wmu.Unlock()
	if kicked {
		<-w.ch
	}
}

// notify applies one epoll event (from the Poller's goroutine). A reader parked
// with OnReadable is not resumed here but handed back, for the Poller to run.
func (c *Conn) notify(events uint32) (parked func(onLoop bool) bool) {
	c.wmu.Lock()
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		d := &c.dirs[dirRead]
		if events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			d.ended = true
		}
		parked, d.fn = d.fn, nil
		c.readyLocked(dirRead)
	}
	if events&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		c.readyLocked(dirWrite)
	}
	c.wmu.Unlock()
	return parked
}

func (c *Conn) readyLocked(dir int) {
	d := &c.dirs[dir]
	d.ready = true
	c.kickLocked(dir)
}

// kickLocked wakes the direction's waiter, if any, to look again.
func (c *Conn) kickLocked(dir int) {
	d := &c.dirs[dir]
	if d.w != nil {
		d.w.ch <- struct{}{} // never blocks: one send per wait, into capacity 1
		d.w = nil
	}
	if d.fn != nil {
		c.poller.resume(d.fn)
		d.fn = nil
	}
}

func (c *Conn) kick(dir int) {
	c.wmu.Lock()
	c.kickLocked(dir)
	c.wmu.Unlock()
}

// wakeAll wakes both directions' waiters to look again (Poller.Close).
func (c *Conn) wakeAll() {
	c.wmu.Lock()
	c.kickLocked(dirRead)
	c.kickLocked(dirWrite)
	c.wmu.Unlock()
}

// endWaits marks the Conn closed for waiters, then wakes them (Close, TakeFD).
func (c *Conn) endWaits() {
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
	c.wakeAll()
}

// Close closes the socket; a Read or Write waiting on it returns net.ErrClosed.
// Closing a Conn whose socket was taken does nothing.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.fd < 0 {
		c.mu.Unlock()
		return nil
	}
	fd := c.fd
	c.fd = -1
	if c.registered {
		c.poller.remove(c) // close takes the socket out of the epoll set
		c.registered, c.watchOut = false, false
	}
	err := epoll.Close(fd)
	c.mu.Unlock()
	c.endWaits()
	if err != nil {
		return c.opError("close", os.NewSyscallError("close", err))
	}
	return nil
}

// CloseWrite half-closes the socket (shutdown SHUT_WR).
func (c *Conn) CloseWrite() error {
	return c.control(func(fd int) error { return epoll.Shutdown(fd, unix.SHUT_WR) })
}

// control runs fn on the socket's fd.
func (c *Conn) control(fn func(fd int) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return errClosed
	}
	return fn(c.fd)
}

// TakeFD gives the socket to the caller, who closes it; the Conn is closed without
// touching it. The fd is the Conn's own (no dup); if the socket ever waited it
// leaves the Poller's set (one epoll_ctl DEL).
func (c *Conn) TakeFD() (int, error) {
	c.mu.Lock()
	if c.fd < 0 {
		c.mu.Unlock()
		return -1, errClosed
	}
	if c.registered {
		c.poller.del(c)
		c.registered, c.watchOut = false, false
	}
	fd := c.fd
	c.fd = -1
	c.mu.Unlock()
	c.endWaits()
	return fd, nil
}

// LocalAddr is the socket's own address (one getsockname, on first use).
func (c *Conn) LocalAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.local == nil {
		c.local = &net.TCPAddr{}
		if c.fd >= 0 {
			if sa, err := syscall.Getsockname(c.fd); err == nil {
				c.local = tcpAddr(sa)
			}
		}
	}
	return c.local
}

// RemoteAddr is the peer's address, from accept or dial.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds reads, as net.Conn's does (a waiting Read looks again).
func (c *Conn) SetReadDeadline(t time.Time) error { return c.setDeadline(dirRead, t) }

// SetWriteDeadline bounds writes, as net.Conn's does.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.setDeadline(dirWrite, t) }

func (c *Conn) setDeadline(dir int, t time.Time) error {
	c.mu.Lock()
	if c.fd < 0 {
		c.mu.Unlock()
		return errClosed
	}
	if dir == dirRead {
		c.rdl = t
	} else {
		c.wdl = t
	}
	registered := c.registered
	c.mu.Unlock()
	if registered {
		c.kick(dir) // a waiter takes the new deadline
	}
	return nil
}

// opError wraps err as net's own errors are (a *net.OpError), so callers'
// errors.Is and net.Error checks work the same on a Conn and a *net.TCPConn.
func (c *Conn) opError(op string, err error) error {
	if err == nil {
		return nil
	}
	return &net.OpError{Op: op, Net: "tcp", Addr: c.remote, Err: err}
}

func expired(t time.Time) bool { return !t.IsZero() && !time.Now().Before(t) }

func ignoringEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// tcpAddr converts an address of accept4, getsockname or getpeername. Those calls
// are made through the syscall package, not golang.org/x/sys/unix: unix's
// conversion asks the socket for SO_PROTOCOL on every IPv4 or IPv6 address (to tell
// L2TP/IP apart), one more getsockopt per call.
func tcpAddr(sa syscall.Sockaddr) *net.TCPAddr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		// A 4-byte IP, as Go's net gives for an IPv4 peer: TCPAddr.AddrPort then is
		// 127.0.0.1, not ::ffff:127.0.0.1, in logs, events and forwarding alike.
		return &net.TCPAddr{IP: net.IP(append([]byte(nil), a.Addr[:]...)), Port: a.Port}
	case *syscall.SockaddrInet6:
		ip := netip.AddrFrom16(a.Addr)
		return &net.TCPAddr{IP: ip.AsSlice(), Port: a.Port, Zone: zoneName(a.ZoneId)}
	}
	return &net.TCPAddr{}
}

func zoneName(id uint32) string {
	if id == 0 {
		return ""
	}
	if ifi, err := net.InterfaceByIndex(int(id)); err == nil {
		return ifi.Name
	}
	return ""
}
