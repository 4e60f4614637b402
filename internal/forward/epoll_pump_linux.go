//go:build linux

package forward

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/epoll"
)

// One session in a shard: its two directions, and moving bytes between them
// (read and write, or splice through a pooled pipe).

// session is all an idle forwarded player costs beyond its two sockets.
type session struct {
	sh        *shard
	done      func(Result)
	up, down  dir
	slot, gen uint32
	cfd, bfd  int         // the sockets, owned by this session (see the file comment)
	errSides  uint8       // sockets that reported EPOLLERR, by side bit
	queued    bool        // in the shard's ready or again list
	finished  bool        // torn down: fds closed, done called
	live      bool        // registered: the shard serves it (guarded by shard.mu until set)
	noted     bool        // an event came before live (guarded by shard.mu)
	ended     atomic.Bool // its end func was called: the shard tears it down
}

// dir is one direction of a session: src is read, dst is written.
type dir struct {
	n        int64   // bytes written to dst
	held     []byte  // read from src, not yet written to dst (a tail of *heldBuf)
	heldBuf  *[]byte // buffer holding held
	pipe     *pipe   // splice pipe of a bulk streak, holding pipeLen unwritten bytes
	pipeLen  int
	readable bool // src may have bytes (an event came, no EAGAIN or short read since)
	hup      bool // src reported RDHUP/HUP/ERR: read to EOF, a short read proves nothing
	writable bool // dst is not known full (no EAGAIN since its last EPOLLOUT)
	bulk     bool // a read filled the buffer: splice until a chunk comes out small
	eof      bool // src reached EOF
	shut     bool // dst got its half-close: this direction is over
	watching bool // dst's registration includes EPOLLOUT
}

// other is the direction that is not d.
func (s *session) other(d *dir) *dir {
	if d == &s.up {
		return &s.down
	}
	return &s.up
}

func (d *dir) holding() bool { return d.pipeLen > 0 || len(d.held) > 0 }

// more says the direction stopped only because its turn's budget ran out.
func (d *dir) more() bool { return d.readable && !d.eof && !d.holding() && d.writable }

// note applies one epoll event on one side to both directions.
func (s *session) note(side int32, ev uint32) {
	in, out := &s.up, &s.down // in reads this socket, out writes it
	if side == sideBackend {
		in, out = &s.down, &s.up
	}
	if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		in.readable = true
		if ev&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			in.hup = true
		}
	}
	if ev&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		out.writable = true
	}
	if ev&unix.EPOLLERR != 0 {
		s.errSides |= 1 << side
	}
}

// pendingError surfaces a socket error that no read or write would: the direction
// reading that socket is over and the one writing it has nothing to write. Otherwise
// the read (after the bytes queued before the error) or the write reports it.
func (s *session) pendingError() error {
	for side := int32(0); side < 2; side++ {
		if s.errSides&(1<<side) == 0 {
			continue
		}
		fd, in, out := s.cfd, &s.up, &s.down
		if side == sideBackend {
			fd, in, out = s.bfd, &s.down, &s.up
		}
		if !in.eof || out.holding() {
			continue
		}
		s.errSides &^= 1 << side
		if e, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err == nil && e != 0 {
			return os.NewSyscallError("socket", syscall.Errno(e))
		}
	}
	return nil
}

// pump moves src→dst until src is drained, dst is full, or the turn's budget is spent.
func (sh *shard) pump(s *session, d *dir, src, dst int, dstSide int32) error {
	if d.shut {
		return nil
	}
	budget := turnBudget
	defer sh.endStreak(d)
	for {
		if d.holding() {
			if !d.writable {
				return nil
			}
			if err := sh.flush(d, dst); err != nil {
				return err
			}
			if d.holding() {
				sh.keepHeld(d)
				if !d.watching {
					d.watching = true
					return sh.watchOut(s, dst, dstSide)
				}
				return nil
			}
		}
		if d.eof {
			// As CloseWrite does for the goroutine forwarder: the peer may already
			// be gone, and the other direction will report that if it matters. When
			// the other direction is over too, teardown's close follows at once and
			// sends the same FIN (both sockets were read to EOF, so nothing unread
			// turns it into a reset): the shutdown would be a wasted system call.
			if other := s.other(d); !other.shut {
				_ = epoll.Shutdown(dst, unix.SHUT_WR)
				if testHookShutdown != nil {
					testHookShutdown()
				}
			}
			d.shut = true
			return nil
		}
		if !d.readable || budget <= 0 {
			return nil
		}
		var n int
		var err error
		if d.bulk || sh.f.move == moveSplice {
			n, err = sh.spliceIn(d, src)
		} else {
			n, err = sh.readIn(d, src)
		}
		if err != nil {
			return err
		}
		budget -= n
	}
}

// endStreak gives an empty pipe back when a turn ends: pipes are never kept by idle
// sessions, only by one whose bytes are waiting in them.
func (sh *shard) endStreak(d *dir) {
	if d.pipe != nil && d.pipeLen == 0 {
		sh.f.pool.put(d.pipe)
		d.pipe = nil
	}
}

// readIn reads once into the shard buffer; pump writes it next.
func (sh *shard) readIn(d *dir, src int) (int, error) {
	n, err := ignoringEINTR(func() (int, error) { return epoll.Read(src, sh.buf) })
	switch {
	case err == unix.EAGAIN:
		d.readable = false
		return 0, nil
	case err != nil:
		return 0, os.NewSyscallError("read", err)
	case n == 0:
		d.eof = true
		return 0, nil
	}
	if n == len(sh.buf) {
		d.bulk = sh.f.move != moveBuffer // more is likely waiting: splice it
	} else if !d.hup {
		d.readable = false // a short read drained the socket; EPOLLET reports the next bytes
	}
	d.held = sh.buf[:n] // borrowed: pump writes it at once, or keepHeld hands it over
	return n, nil
}

// keepHeld gives the shard's buffer to a direction whose write could not finish,
// and the shard a fresh one: only a direction waiting for room holds a buffer.
func (sh *shard) keepHeld(d *dir) {
	if len(d.held) == 0 || d.heldBuf != nil {
		return
	}
	d.heldBuf = sh.bufp
	sh.bufp = getBuf()
	sh.buf = *sh.bufp
}

// spliceIn moves up to a pipeful from src into the direction's pipe.
func (sh *shard) spliceIn(d *dir, src int) (int, error) {
	if d.pipe == nil {
		if d.pipe = sh.f.pool.get(); d.pipe == nil {
			d.bulk = false // no pipe to spare: this chunk goes through the buffer
			return sh.readIn(d, src)
		}
	}
	n, err := ignoringEINTR(func() (int, error) {
		return epoll.Splice(src, d.pipe.w, spliceMax)
	})
	switch {
	case err == unix.EAGAIN:
		d.readable = false // still bulk: the next streak starts with splice too
		return 0, nil
	case err != nil:
		return 0, os.NewSyscallError("splice", err)
	case n == 0:
		d.eof = true
		return 0, nil
	}
	if n < bufSize {
		// A small chunk: the bulk is over, the next read goes through the buffer.
		// (Splice-only mode keeps the buffer path's rule that a short read drained.)
		d.bulk = false
		if sh.f.move == moveSplice && !d.hup {
			d.readable = false
		}
	}
	d.pipeLen = n
	return n, nil
}

// flush writes what the direction holds; it stops at EAGAIN, which the kernel pairs
// with an EPOLLOUT edge once the peer has room again.
func (sh *shard) flush(d *dir, dst int) error {
	for d.pipeLen > 0 {
		n, err := ignoringEINTR(func() (int, error) {
			return epoll.Splice(d.pipe.r, dst, d.pipeLen)
		})
		if err == unix.EAGAIN {
			d.writable = false
			return nil
		}
		if err != nil {
			return os.NewSyscallError("splice", err)
		}
		d.pipeLen -= n
		d.n += int64(n)
	}
	for len(d.held) > 0 {
		n, err := ignoringEINTR(func() (int, error) { return epoll.Write(dst, d.held) })
		if err == unix.EAGAIN {
			d.writable = false
			return nil
		}
		if err != nil {
			return os.NewSyscallError("write", err)
		}
		d.held = d.held[n:]
		d.n += int64(n)
	}
	d.held = nil
	if d.heldBuf != nil {
		putBuf(d.heldBuf)
		d.heldBuf = nil
	}
	return nil
}

func ignoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// bufPool holds the 16 KiB buffers: one per shard, plus one per direction whose
// write is waiting for room.
var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

func getBuf() *[]byte  { return bufPool.Get().(*[]byte) }
func putBuf(b *[]byte) { bufPool.Put(b) }

type pipe struct{ r, w int }

// pipePool shares splice pipes among all sessions: at most max are open at once,
// at most keep stay open while unused, and a caller finding none gets nil and falls
// back to the buffer.
type pipePool struct {
	mu   sync.Mutex
	free []*pipe
	live int
	max  int
	keep int
}

func (pp *pipePool) get() *pipe {
	pp.mu.Lock()
	if n := len(pp.free); n > 0 {
		p := pp.free[n-1]
		pp.free = pp.free[:n-1]
		pp.mu.Unlock()
		return p
	}
	if pp.live >= pp.max {
		pp.mu.Unlock()
		return nil
	}
	pp.live++
	pp.mu.Unlock()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		pp.mu.Lock()
		pp.live--
		pp.mu.Unlock()
		return nil // out of fds: the buffer path still works
	}
	_, _ = unix.FcntlInt(uintptr(fds[0]), unix.F_SETPIPE_SZ, pipeSize)
	return &pipe{r: fds[0], w: fds[1]}
}

// put takes back an empty pipe.
func (pp *pipePool) put(p *pipe) {
	pp.mu.Lock()
	if len(pp.free) < pp.keep {
		pp.free = append(pp.free, p)
		pp.mu.Unlock()
		return
	}
	pp.live--
	pp.mu.Unlock()
	closePipe(p)
}

// discard closes a pipe that still holds bytes of a session that ended.
func (pp *pipePool) discard(p *pipe) {
	pp.mu.Lock()
	pp.live--
	pp.mu.Unlock()
	closePipe(p)
}

func (pp *pipePool) closeAll() {
	pp.mu.Lock()
	free := pp.free
	pp.free = nil
	pp.live -= len(free)
	pp.mu.Unlock()
	for _, p := range free {
		closePipe(p)
	}
}

func closePipe(p *pipe) {
	unix.Close(p.r)
	unix.Close(p.w)
}
