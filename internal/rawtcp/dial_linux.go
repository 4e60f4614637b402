//go:build linux

package rawtcp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/epoll"
)

// Dial connects to addr before deadline (none if zero) unless ctx ends first:
// socket, TCP_NODELAY, connect. A connect that completes while connect runs (on
// loopback and a fast LAN the kernel does the whole handshake inside it), known
// with one getpeername, costs nothing more, no timer included; otherwise the socket
// waits for it in p.
func Dial(ctx context.Context, p *Poller, addr netip.AddrPort, deadline time.Time) (*Conn, error) {
	raddr := net.TCPAddrFromAddrPort(addr)
	fail := func(err error) (*Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: raddr, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return fail(mapContextErr(err))
	}
	ip := addr.Addr().Unmap()
	family := unix.AF_INET6
	var zone uint32
	if ip.Is4() {
		family = unix.AF_INET
	} else if z := ip.Zone(); z != "" {
		if ifi, err := net.InterfaceByName(z); err == nil {
			zone = uint32(ifi.Index)
		}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return fail(os.NewSyscallError("socket", err))
	}
	if err := epoll.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return fail(os.NewSyscallError("setsockopt", err))
	}
	c := newConn(fd, raddr, p)
	for {
		err = epoll.Connect(fd, addr, zone)
		if err != unix.EINTR {
			break
		}
	}
	switch err {
	case nil, unix.EISCONN:
		return c, nil
	case unix.EINPROGRESS, unix.EALREADY:
	default:
		c.Close()
		return fail(os.NewSyscallError("connect", err))
	}
	if _, err := syscall.Getpeername(fd); err == nil {
		return c, nil // connected while connect ran
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if err := c.waitConnected(ctx, deadline); err != nil {
		c.Close()
		return fail(err)
	}
	return c, nil
}

// errStillConnecting is waitConnected's "not yet".
var errStillConnecting = errors.New("still connecting")

// waitConnected waits in the Poller for a connect in progress, until deadline or
// the end of ctx.
func (c *Conn) waitConnected(ctx context.Context, deadline time.Time) error {
	stop := context.AfterFunc(ctx, func() { c.kick(dirWrite) })
	defer stop()
	for {
		if err := ctx.Err(); err != nil {
			return mapContextErr(err)
		}
		c.mu.Lock()
		err := c.connectResultLocked()
		if err == errStillConnecting {
			err = c.registerLocked(dirWrite)
			c.mu.Unlock()
			if err == nil {
				err = c.wait(dirWrite, deadline)
			}
			if err != nil {
				if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
					return mapContextErr(ctxErr)
				}
				return err
			}
			continue
		}
		c.mu.Unlock()
		return err
	}
}

// connectResultLocked says how the connect ended: nil (connected), its error, or
// errStillConnecting. It clears the write readiness first, as any try does.
func (c *Conn) connectResultLocked() error {
	if c.fd < 0 {
		return errClosed
	}
	c.clearReady(dirWrite)
	soErr, err := epoll.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	switch {
	case err != nil:
		return os.NewSyscallError("getsockopt", err)
	case soErr == int(unix.EINPROGRESS) || soErr == int(unix.EALREADY) || soErr == int(unix.EINTR):
		return errStillConnecting
	case soErr != 0:
		return os.NewSyscallError("connect", unix.Errno(soErr))
	}
	if _, err := syscall.Getpeername(c.fd); err != nil {
		return errStillConnecting
	}
	return nil
}

// mapContextErr spells a dial's ended context as net's Dialer does: a deadline is a
// timeout (net.Error with Timeout true), a cancel is context.Canceled.
func mapContextErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return os.ErrDeadlineExceeded
	}
	return err
}
