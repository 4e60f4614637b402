//go:build linux

package rawtcp

import (
	"net"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/epoll"
)

// Listener is a net.Listener whose Accept returns *Conn: the listening socket waits
// in Go's netpoller, the accepted sockets do not (accept4 and nothing else, unless
// TCP_NODELAY turns out not to be inherited).
type Listener struct {
	file   *os.File // the listening socket, in Go's netpoller: Accept waits on it
	poller *Poller  // where the accepted Conns wait
	rc     syscall.RawConn
	addr   net.Addr
	closed atomic.Bool
	// nodelay says whether accepted sockets are known to inherit TCP_NODELAY:
	// Linux copies the listening socket's to the sockets it accepts, so it is set
	// once on the listener and looked at until one accepted socket shows it. A
	// socket queued before the listener had it set does not show it, and says
	// nothing of the ones after; it gets the option set (Minecraft's many small
	// packets need Nagle off).
	nodelay atomic.Bool
}

// NewListener takes over ln's socket: on success ln is closed and the Listener
// owns the socket (Close it to stop Accept); on error ln is left as it was. The
// Conns it accepts wait in p.
func NewListener(ln *net.TCPListener, p *Poller) (*Listener, error) {
	f, err := ln.File() // a duplicate fd, non-blocking and in Go's netpoller
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}); err != nil || serr != nil {
		f.Close()
		if err == nil {
			err = os.NewSyscallError("setsockopt", serr)
		}
		return nil, err
	}
	l := &Listener{file: f, rc: rc, addr: ln.Addr(), poller: p}
	ln.Close()
	return l, nil
}

// Accept takes the next connection (accept4, non-blocking and close-on-exec),
// waiting in Go's netpoller while none is pending. After Close it returns an error
// that errors.Is net.ErrClosed.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		var nfd int
		var sa syscall.Sockaddr
		var aerr error
		err := l.rc.Read(func(fd uintptr) bool {
			for {
				nfd, sa, aerr = epoll.Accept4(int(fd))
				if aerr != syscall.EINTR {
					return aerr != syscall.EAGAIN
				}
			}
		})
		if err != nil {
			if l.closed.Load() {
				err = net.ErrClosed
			}
			return nil, l.opError(err)
		}
		switch aerr {
		case nil:
		case syscall.ECONNABORTED:
			continue // the client left before it was taken
		default:
			return nil, l.opError(os.NewSyscallError("accept4", aerr))
		}
		if err := l.noDelay(nfd); err != nil {
			_ = epoll.Close(nfd)
			continue // the socket is dead already (reset before it was taken)
		}
		return newConn(nfd, tcpAddr(sa), l.poller), nil
	}
}

// noDelay makes sure an accepted socket has Nagle off: inherited from the listener
// (one getsockopt, until a socket shows it inherited) or set on the socket.
func (l *Listener) noDelay(fd int) error {
	if l.nodelay.Load() {
		return nil
	}
	v, err := epoll.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	if err != nil {
		return err
	}
	if v != 0 {
		l.nodelay.Store(true)
		return nil
	}
	return epoll.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
}

// Close closes the listening socket; a waiting Accept returns net.ErrClosed.
func (l *Listener) Close() error {
	if l.closed.Swap(true) {
		return l.opError(net.ErrClosed)
	}
	return l.file.Close()
}

// Addr is the listening address.
func (l *Listener) Addr() net.Addr { return l.addr }

func (l *Listener) opError(err error) error {
	return &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: err}
}
