//go:build linux

package forward

// The epoll forwarder: an idle session is its two sockets in one shard's epoll set
// (edge-triggered, registered once, never modified) and one small record; no goroutine,
// no stack, no pipe. Each shard is one goroutine that owns its sessions outright.
//
// How the shard waits: its epoll set is an epoll.Set, parked in Go's own netpoller
// (internal/epoll says how), and when one of its sockets becomes ready, Go wakes the
// shard goroutine, which collects the events with epoll_wait(timeout 0) and moves the
// bytes itself.
//
// How the sockets leave Go. Forward takes each socket out of the *net.TCPConn: it
// duplicates the fd (F_DUPFD_CLOEXEC) and closes the conn, so Go's netpoller forgets
// the socket (no second readiness event per packet, no pollDesc or netFD kept) and
// nothing in Go can read, write or close it any more: a Close by the caller on a conn
// it handed over is a harmless no-op. The session then holds exactly two fds, the
// socket's only ones. Keeping the conns and reaching the fds through RawConn.Control
// instead also works, without the dup, and saves two fcntl and two close calls per
// session; but every packet then also raises an event in Go's poller, every turn
// takes two Control calls, and the conns' Go state stays: measured side by side
// (BenchmarkIdle, 9 872 sessions) an idle session cost 2.5 KB of RSS that way against
// 0.5 KB detached, with CPU per round trip and per short session equal within noise.
//
// Why an fd number is never used after it was closed and reused (the classic bug):
//  1. a session's fds have one owner at a time: Forward until the session goes live,
//     then its shard goroutine, which alone makes syscalls on them, and closes them
//     once, in teardown, after which the session is finished and never served again;
//     Close touches them only after every shard goroutine has exited.
//  2. epoll events carry a slot and a generation, never an fd number: an event queued
//     for a session that has since ended (or whose slot now holds a newer session)
//     fails the generation check and is dropped. close(2) of the last reference removes
//     the socket from the epoll set, so no EPOLL_CTL_DEL is needed.
//  3. events that arrive while Forward still registers a session are only noted; the
//     shard serves the session after Forward hands it over, so a registration that
//     fails is undone by Forward alone, with no shard holding the numbers.
//  4. a pipe is owned by exactly one of: the pool, or one direction of one session;
//     it is closed only by its owner, and one with bytes still in it never goes back.
//
// Moving bytes. A readable socket is first read into the shard's 16 KiB buffer and
// written at once (small Minecraft packets: read+write, no pipe). A read that fills the
// buffer marks the direction bulk: from then on it splices through a pipe taken from a
// pool shared by all shards (zero copy), until a splice brings less than 16 KiB; the
// pipe goes back to the pool at the end of every turn in which it emptied. A write that
// cannot finish (the peer's send buffer is full) leaves the rest in that buffer or
// pipe, which the direction then keeps; the direction stops reading until EPOLLOUT says
// the peer drained. So a session never holds more than one chunk per direction (≤ 16
// KiB of memory or one pipe), and TCP flow control does the rest. A short buffer read
// means the socket is drained: with EPOLLET every later arrival queues a new event,
// unless the event said RDHUP/HUP/ERR, then we read to EOF/EAGAIN. The pool caps the
// pipes alive at once; a direction that finds none free uses the buffer.
//
import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/epoll"
)

const (
	bufSize     = 16 << 10  // the shard's read buffer; a read that fills it means bulk
	spliceMax   = 1 << 20   // bytes asked of one splice(2) into a pipe (the pipe caps it)
	pipeSize    = 1 << 20   // F_SETPIPE_SZ asked for each pipe, as Go's own splice does
	turnBudget  = 512 << 10 // bytes a direction may move before other sessions get a turn
	eventBatch  = 128       // events taken per epoll_wait
	defaultMaxP = 64        // pipes alive at once when EpollOptions.MaxPipes is 0
	// A socket is registered for input only; EPOLLOUT is added the first time a write
	// to it cannot finish, so a new session costs no wakeup for the "writable" that
	// every fresh socket reports, and an idle one never gets it.
	epollIn = unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET
)

// Test hooks into Forward's registration (nil outside tests).
var testHookRegister, testHookBeforeLive func(*shard, *session)

// testHookShutdown sees every half-close the shards make (nil outside tests).
var testHookShutdown func()

type epollForwarder struct {
	mu     sync.RWMutex // Forward holds it shared while registering; Close exclusively
	closed bool
	shards []*shard
	next   atomic.Uint32
	pool   *pipePool
	move   moveMode
	wg     sync.WaitGroup
	once   sync.Once
}

// NewEpoll starts the epoll forwarder's shard goroutines.
func NewEpoll(opts EpollOptions) (Forwarder, error) {
	n := opts.Shards
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	maxPipes := opts.MaxPipes
	if maxPipes <= 0 {
		maxPipes = defaultMaxP
	}
	f := &epollForwarder{pool: &pipePool{max: maxPipes, keep: n + 2}, move: opts.move}
	for range n {
		sh, err := newShard(f)
		if err != nil {
			for _, sh := range f.shards {
				sh.set.Close()
			}
			return nil, err
		}
		f.shards = append(f.shards, sh)
	}
	f.wg.Add(len(f.shards))
	for _, sh := range f.shards {
		go sh.run()
	}
	return f, nil
}

func (f *epollForwarder) Forward(client, backend net.Conn, done func(Result)) (end func()) {
	f.mu.RLock()
	if f.closed {
		f.mu.RUnlock()
		client.Close()
		backend.Close()
		done(Result{Err: ErrClosed})
		return noEnd
	}
	cfd, err := detach(client)
	if err != nil {
		f.mu.RUnlock()
		backend.Close()
		done(Result{Err: fmt.Errorf("forward: client socket: %w", err)})
		return noEnd
	}
	bfd, err := detach(backend)
	if err != nil {
		f.mu.RUnlock()
		unix.Close(cfd)
		done(Result{Err: fmt.Errorf("forward: backend socket: %w", err)})
		return noEnd
	}
	sh := f.shards[f.next.Add(1)%uint32(len(f.shards))]
	s := &session{sh: sh, done: done, cfd: cfd, bfd: bfd}
	s.up.writable, s.down.writable = true, true
	sh.publish(s)
	if testHookRegister != nil {
		testHookRegister(sh, s)
	}
	err = sh.register(bfd, s, sideBackend)
	if err == nil {
		err = sh.register(cfd, s, sideClient)
	}
	if err != nil {
		// Not live: no shard has touched the fds, and closing them unregisters them.
		sh.unpublish(s)
		f.mu.RUnlock()
		unix.Close(cfd)
		unix.Close(bfd)
		done(Result{Err: err})
		return noEnd
	}
	if testHookBeforeLive != nil {
		testHookBeforeLive(sh, s)
	}
	if sh.goLive(s) {
		sh.post(s) // bytes were waiting already: the shard serves it now
	}
	f.mu.RUnlock()
	return func() {
		// The shard owns the session: it tears it down at its next look at the
		// inbox (a session already over is left alone there).
		if s.ended.CompareAndSwap(false, true) {
			sh.post(s)
		}
	}
}

// detach takes the socket out of c: an FDTaker's own fd, or a duplicate fd that only
// the forwarder knows, with c closed, so Go's netpoller no longer watches the socket.
func detach(conn net.Conn) (int, error) {
	if t, ok := conn.(FDTaker); ok {
		fd, err := t.TakeFD()
		if err != nil {
			return -1, fmt.Errorf("already closed: %w", err)
		}
		return fd, nil
	}
	c, ok := conn.(*net.TCPConn)
	if !ok {
		conn.Close()
		return -1, errNotSocket
	}
	rc, err := c.SyscallConn()
	if err != nil {
		c.Close()
		return -1, err
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(orig uintptr) {
		fd, dupErr = unix.FcntlInt(orig, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		c.Close()
		return -1, fmt.Errorf("already closed: %w", err)
	}
	c.Close()
	if dupErr != nil {
		return -1, fmt.Errorf("dup (out of fds? raise the open-files limit): %w", os.NewSyscallError("fcntl", dupErr))
	}
	return fd, nil
}

func (f *epollForwarder) Close() error {
	f.once.Do(func() {
		f.mu.Lock()
		f.closed = true
		f.mu.Unlock()
		for _, sh := range f.shards {
			sh.stop.Store(true)
			sh.set.Wake()
		}
		f.wg.Wait()
		// Every shard goroutine is gone: what they owned is now ours alone.
		for _, sh := range f.shards {
			sh.takeInbox()      // those sessions are in slots: ended below
			var live []*session // teardown frees slots: collect them first
			sh.slots.Each(func(s *session) { live = append(live, s) })
			for _, s := range live {
				if !s.finished {
					sh.teardown(s, ErrClosed)
				}
			}
			sh.set.Close()
		}
		f.pool.closeAll()
	})
	return nil
}

const (
	sideClient  = 0
	sideBackend = 1
)

// shard is one event loop: an epoll set, the sessions registered in it, and the one
// goroutine that serves them.
type shard struct {
	f      *epollForwarder
	set    *epoll.Set
	stop   atomic.Bool
	events []unix.EpollEvent
	poll   func(uintptr) bool
	ready  []*session // sessions to serve this round
	again  []*session // sessions that spent their budget with bytes still waiting
	spare  []*session // the other again slice, reused
	broken error      // epoll_wait failed: the shard stops (its sessions end at Close)
	buf    []byte     // read buffer; handed to a direction whose write could not finish
	bufp   *[]byte

	mu    sync.Mutex // guards slots (Forward publishes, the shard retires)
	slots epoll.Table[*session]

	inboxMu sync.Mutex
	inbox   []*session // live sessions with events from before they went live
	posted  atomic.Bool
}

func newShard(f *epollForwarder) (*shard, error) {
	set, err := epoll.Open("forward-epoll")
	if err != nil {
		return nil, fmt.Errorf("forward: %w", err)
	}
	sh := &shard{f: f, set: set, events: make([]unix.EpollEvent, eventBatch)}
	sh.bufp = getBuf()
	sh.buf = *sh.bufp
	sh.poll = sh.pollOnce
	return sh, nil
}

func (sh *shard) publish(s *session) {
	sh.mu.Lock()
	s.slot, s.gen = sh.slots.Add(s)
	sh.mu.Unlock()
}

func (sh *shard) unpublish(s *session) {
	sh.mu.Lock()
	sh.slots.Remove(s.slot, s)
	sh.mu.Unlock()
}

// register adds one socket to the epoll set; the event data names the session by
// slot and generation (and the side by the slot word's low bit), never by fd number.
func (sh *shard) register(fd int, s *session, side int32) error {
	if err := sh.set.Add(fd, epollIn, int32(s.slot<<1)|side, int32(s.gen)); err != nil {
		return fmt.Errorf("forward: epoll_ctl add (raise fs.epoll.max_user_watches or use the goroutine forwarder): %w", err)
	}
	return nil
}

// watchOut adds EPOLLOUT to a socket's registration; the modify reports the socket
// writable at once if room came back since the write that could not finish.
func (sh *shard) watchOut(s *session, fd int, side int32) error {
	return sh.set.Modify(fd, epollIn|unix.EPOLLOUT, int32(s.slot<<1)|side, int32(s.gen))
}

// goLive hands a registered session to the shard; true when events came while it
// was not live that the shard has yet to act on.
func (sh *shard) goLive(s *session) bool {
	sh.mu.Lock()
	s.live = true
	noted := s.noted
	sh.mu.Unlock()
	return noted
}

// post asks the shard to serve a session that had events before it went live, and
// wakes the shard.
func (sh *shard) post(s *session) {
	sh.inboxMu.Lock()
	sh.inbox = append(sh.inbox, s)
	sh.inboxMu.Unlock()
	sh.posted.Store(true)
	sh.set.Wake()
}

// takeInbox empties the inbox.
func (sh *shard) takeInbox() []*session {
	if !sh.posted.Load() || !sh.posted.Swap(false) {
		return nil
	}
	sh.inboxMu.Lock()
	in := sh.inbox
	sh.inbox = nil
	sh.inboxMu.Unlock()
	return in
}

func (sh *shard) drainInbox() {
	for _, s := range sh.takeInbox() {
		switch {
		case s.finished:
		case s.ended.Load():
			sh.teardown(s, ErrEnded) // finished: the ready and again lists skip it
		case !s.queued:
			sh.serve(s)
		}
	}
}

// run parks in Go's netpoller on the epoll fd until Close. A read deadline in the
// past is the doorbell: post and Close ring it; the deadline is cleared before the
// inbox is read, so a ring that lands in between is seen by the next Read.
func (sh *shard) run() {
	defer sh.f.wg.Done()
	for !sh.stop.Load() {
		err := sh.set.Serve(sh.poll)
		if sh.stop.Load() || sh.broken != nil {
			return
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			sh.set.Rearm()
			sh.drainInbox()
			continue
		}
		if err != nil {
			// Only a closed epoll fd gets here, and Close closes it after we exit.
			return
		}
	}
}

// pollOnce serves what is ready. Returning false parks the goroutine until Go's
// netpoller sees the epoll fd readable again (epoll.Set.Serve: no edge is slept
// through, so a batch that did not fill needs no extra epoll_wait).
func (sh *shard) pollOnce(epfd uintptr) bool {
	for {
		if sh.stop.Load() {
			return true
		}
		n, err := epoll.Wait(int(epfd), sh.events)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			sh.broken = err // EBADF/EINVAL: cannot happen while we hold the fd
			return true
		}
		// Sessions that ran out of budget last round go after this round's events.
		again := sh.again
		sh.again, sh.spare = sh.spare[:0], nil
		sh.dispatch(sh.events[:n])
		sh.drainInbox()
		for i, s := range again {
			again[i] = nil
			if !s.finished {
				sh.serve(s)
			}
		}
		sh.spare = again[:0]
		if n < len(sh.events) && len(sh.again) == 0 {
			return false
		}
	}
}

// dispatch notes each event on its session and serves each ready session once.
func (sh *shard) dispatch(evs []unix.EpollEvent) {
	if len(evs) == 0 {
		return
	}
	sh.mu.Lock()
	for i := range evs {
		ev := &evs[i]
		s, ok := sh.slots.Get(uint32(ev.Fd)>>1, uint32(ev.Pad))
		if !ok {
			continue // an event for a session that has ended
		}
		s.note(ev.Fd&1, ev.Events)
		if !s.live {
			// Forward is still registering it: remember, goLive tells Forward.
			s.noted = s.noted || ev.Events&^unix.EPOLLOUT != 0
			continue
		}
		if !s.queued {
			s.queued = true
			sh.ready = append(sh.ready, s)
		}
	}
	sh.mu.Unlock()
	for i, s := range sh.ready {
		sh.ready[i] = nil
		if !s.finished {
			sh.serve(s)
		}
	}
	sh.ready = sh.ready[:0]
}

// serve gives one session a turn, and ends it if the turn finished it.
func (sh *shard) serve(s *session) {
	s.queued = false
	err := sh.turn(s)
	switch {
	case err != nil:
		sh.teardown(s, err)
	case s.up.shut && s.down.shut:
		sh.teardown(s, nil)
	case s.up.more() || s.down.more():
		if !s.queued {
			s.queued = true
			sh.again = append(sh.again, s)
		}
	}
}

// turn moves what it can both ways.
func (sh *shard) turn(s *session) error {
	if s.errSides != 0 {
		if err := s.pendingError(); err != nil {
			return err
		}
	}
	if err := sh.pump(s, &s.up, s.cfd, s.bfd, sideBackend); err != nil {
		return fmt.Errorf("forward client→backend: %w", err)
	}
	if err := sh.pump(s, &s.down, s.bfd, s.cfd, sideClient); err != nil {
		return fmt.Errorf("forward backend→client: %w", err)
	}
	return nil
}

// teardown ends a session once: pipes and buffers back, both sockets closed, done.
func (sh *shard) teardown(s *session, err error) {
	s.finished = true
	sh.release(&s.up)
	sh.release(&s.down)
	_ = epoll.Close(s.cfd)
	_ = epoll.Close(s.bfd)
	sh.unpublish(s)
	done := s.done
	s.done = nil
	done(Result{Up: s.up.n, Down: s.down.n, Err: err})
}

func (sh *shard) release(d *dir) {
	if d.pipe != nil {
		if d.pipeLen > 0 {
			sh.f.pool.discard(d.pipe)
		} else {
			sh.f.pool.put(d.pipe)
		}
		d.pipe, d.pipeLen = nil, 0
	}
	if d.heldBuf != nil {
		putBuf(d.heldBuf)
		d.heldBuf = nil
	}
	d.held = nil // or borrowed from the shard's buffer, which stays the shard's
}

// TakesFDs reports whether f works on bare fds (the epoll forwarder), so sockets that
// Go's netpoller never held (FDTaker) reach it with no system call; the goroutine
// forwarder wants Go's own sockets, which it splices between.
func TakesFDs(f Forwarder) bool {
	_, ok := f.(*epollForwarder)
	return ok
}
