//go:build linux

// Package rawtcp holds a TCP socket as a bare non-blocking fd behind a net.Conn that
// enters Go's netpoller only when a call must wait.
//
// Why: a passthrough login reads the handshake (already there: the listener defers
// accept until it arrives), dials the backend (on a LAN or loopback connected by the
// time connect returns), writes, reads one answer, and hands both sockets to the
// epoll forwarder. Through Go's net package every socket costs an epoll_ctl ADD at
// accept or dial, getsockname/getpeername/getsockopt for its bookkeeping, and at the
// hand-over a dup, an epoll_ctl DEL and a close, so the forwarder gets an fd Go no
// longer watches: ten system calls a login that do no work. A Conn makes the call
// itself on the non-blocking fd; only when it returns EAGAIN does the fd go into Go's
// netpoller (os.NewFile), from then on with deadlines and wakeups exactly as a
// net.Conn's. TakeFD gives the socket away: the same fd, no dup, when Go never held it.
package rawtcp

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is one TCP socket. It is safe for concurrent use like a net.Conn: a read and a
// write may run at once, and Close from another goroutine ends both.
type Conn struct {
	mu     sync.Mutex // held across every call made on fd directly (they never block)
	fd     int        // -1 once closed or taken
	file   *os.File   // non-nil once a call had to wait: Go's netpoller holds fd
	rdl    time.Time  // deadlines, kept for the file that may come
	wdl    time.Time
	local  net.Addr // filled on first LocalAddr
	remote *net.TCPAddr
}

func newConn(fd int, remote *net.TCPAddr) *Conn { return &Conn{fd: fd, remote: remote} }

// errClosed is what calls on a closed Conn return, wrapped as net's are.
var errClosed = net.ErrClosed

// Read reads from the socket, waiting in Go's netpoller only if nothing is there.
func (c *Conn) Read(b []byte) (int, error) {
	c.mu.Lock()
	if c.file == nil {
		if c.fd < 0 {
			c.mu.Unlock()
			return 0, c.opError("read", errClosed)
		}
		if expired(c.rdl) {
			c.mu.Unlock()
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		if len(b) == 0 {
			c.mu.Unlock()
			return 0, nil
		}
		n, err := ignoringEINTR(func() (int, error) { return unix.Read(c.fd, b) })
		if err != unix.EAGAIN {
			c.mu.Unlock()
			switch {
			case err != nil:
				return 0, c.opError("read", os.NewSyscallError("read", err))
			case n == 0:
				return 0, io.EOF
			}
			return n, nil
		}
		// Nothing there: from now on the fd waits in Go's netpoller. The file's Read
		// reads once more before it parks (Go clears the poller's readiness when a
		// read begins, so bytes that came meanwhile must be looked for, not waited for).
		if err := c.pollLocked(); err != nil {
			c.mu.Unlock()
			return 0, c.opError("read", err)
		}
	}
	f := c.file
	c.mu.Unlock()
	n, err := f.Read(b)
	if err == io.EOF {
		return n, err
	}
	return n, c.opError("read", err)
}

// Write writes all of b, waiting in Go's netpoller only if the send buffer is full.
func (c *Conn) Write(b []byte) (int, error) {
	c.mu.Lock()
	written := 0
	if c.file == nil {
		if c.fd < 0 {
			c.mu.Unlock()
			return 0, c.opError("write", errClosed)
		}
		if expired(c.wdl) {
			c.mu.Unlock()
			return 0, c.opError("write", os.ErrDeadlineExceeded)
		}
		for written < len(b) {
			n, err := ignoringEINTR(func() (int, error) { return unix.Write(c.fd, b[written:]) })
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
		if err := c.pollLocked(); err != nil {
			c.mu.Unlock()
			return written, c.opError("write", err)
		}
	}
	f := c.file
	c.mu.Unlock()
	n, err := f.Write(b[written:])
	return written + n, c.opError("write", err)
}

// pollLocked hands the fd to Go's netpoller (one fcntl and one epoll_ctl), with the
// deadlines set so far.
func (c *Conn) pollLocked() error {
	f := os.NewFile(uintptr(c.fd), "tcp")
	if f == nil {
		return errors.New("rawtcp: bad fd")
	}
	if err := f.SetReadDeadline(c.rdl); err != nil {
		// Not pollable (cannot happen for a socket): give the fd back to the Conn.
		_ = f.Close()
		c.fd = -1
		return err
	}
	_ = f.SetWriteDeadline(c.wdl)
	c.file = f
	return nil
}

// Close closes the socket; a Read or Write waiting on it returns net.ErrClosed.
// Closing a Conn whose socket was taken does nothing.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.file != nil:
		f := c.file
		c.file, c.fd = nil, -1
		return f.Close()
	case c.fd >= 0:
		fd := c.fd
		c.fd = -1
		return unix.Close(fd)
	}
	return nil
}

// CloseWrite half-closes the socket (shutdown SHUT_WR).
func (c *Conn) CloseWrite() error {
	return c.control(func(fd int) error { return unix.Shutdown(fd, unix.SHUT_WR) })
}

// SetNoDelay sets TCP_NODELAY, as *net.TCPConn's does (the dial and Accept set it on).
func (c *Conn) SetNoDelay(on bool) error {
	v := 0
	if on {
		v = 1
	}
	return c.control(func(fd int) error { return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, v) })
}

// control runs fn on the socket's fd, wherever it is held.
func (c *Conn) control(fn func(fd int) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.file != nil:
		rc, err := c.file.SyscallConn()
		if err != nil {
			return err
		}
		var ferr error
		if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
			return err
		}
		return ferr
	case c.fd >= 0:
		return fn(c.fd)
	}
	return errClosed
}

// TakeFD gives the socket to the caller, who closes it; the Conn is closed without
// touching it. When Go's netpoller never held the socket this is the Conn's own fd
// (no system call); otherwise a duplicate, with the netpoller's copy closed so it
// stops watching.
func (c *Conn) TakeFD() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == nil {
		if c.fd < 0 {
			return -1, errClosed
		}
		fd := c.fd
		c.fd = -1
		return fd, nil
	}
	f := c.file
	c.file, c.fd = nil, -1
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(orig uintptr) { fd, dupErr = unix.FcntlInt(orig, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, os.NewSyscallError("fcntl", dupErr)
	}
	return fd, nil
}

// LocalAddr is the socket's own address (one getsockname, on first use).
func (c *Conn) LocalAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.local == nil {
		c.local = &net.TCPAddr{}
		fd, file := c.fd, c.file
		get := func(fd int) {
			if sa, err := syscall.Getsockname(fd); err == nil {
				c.local = tcpAddr(sa)
			}
		}
		switch {
		case file != nil:
			if rc, err := file.SyscallConn(); err == nil {
				_ = rc.Control(func(fd uintptr) { get(int(fd)) })
			}
		case fd >= 0:
			get(fd)
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

// SetReadDeadline bounds reads, as net.Conn's does (a waiting Read wakes up).
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rdl = t
	if c.file != nil {
		return c.file.SetReadDeadline(t)
	}
	if c.fd < 0 {
		return errClosed
	}
	return nil
}

// SetWriteDeadline bounds writes, as net.Conn's does.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wdl = t
	if c.file != nil {
		return c.file.SetWriteDeadline(t)
	}
	if c.fd < 0 {
		return errClosed
	}
	return nil
}

// opError wraps err as net's own errors are (a *net.OpError), with os.File's
// "file already closed" spelled as net.ErrClosed, so callers' errors.Is and
// net.Error checks work the same on a Conn and a *net.TCPConn.
func (c *Conn) opError(op string, err error) error {
	if err == nil {
		return nil
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, os.ErrClosed) {
		err = net.ErrClosed
	}
	return &net.OpError{Op: op, Net: "tcp", Addr: c.remote, Err: err}
}

// waitError spells an error of a raw wait in the netpoller (RawConn.Read/Write,
// which os.File does not translate) as os.File's own calls would.
func (c *Conn) waitError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	c.mu.Lock()
	closed := c.file == nil
	c.mu.Unlock()
	if closed {
		return net.ErrClosed
	}
	return err
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
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
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
