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
)

// Dial connects to addr within ctx: socket, TCP_NODELAY, connect. A connect that
// completes at once (the usual case on loopback and a LAN, known with one
// getpeername) costs nothing more; otherwise the socket waits for it in Go's netpoller.
func Dial(ctx context.Context, addr netip.AddrPort) (*Conn, error) {
	raddr := net.TCPAddrFromAddrPort(addr)
	fail := func(err error) (*Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: raddr, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return fail(mapContextErr(err))
	}
	ip := addr.Addr().Unmap()
	var sa unix.Sockaddr
	family := unix.AF_INET6
	if ip.Is4() {
		family = unix.AF_INET
		sa = &unix.SockaddrInet4{Port: int(addr.Port()), Addr: ip.As4()}
	} else {
		s6 := &unix.SockaddrInet6{Port: int(addr.Port()), Addr: ip.As16()}
		if z := ip.Zone(); z != "" {
			if ifi, err := net.InterfaceByName(z); err == nil {
				s6.ZoneId = uint32(ifi.Index)
			}
		}
		sa = s6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return fail(os.NewSyscallError("socket", err))
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return fail(os.NewSyscallError("setsockopt", err))
	}
	c := newConn(fd, raddr)
	for {
		err = unix.Connect(fd, sa)
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
		return c, nil // connected while connect ran (loopback, a fast LAN)
	}
	if err := c.waitConnected(ctx); err != nil {
		c.Close()
		return fail(err)
	}
	return c, nil
}

// waitConnected waits in Go's netpoller for a connect in progress, until ctx ends.
func (c *Conn) waitConnected(ctx context.Context) error {
	c.mu.Lock()
	err := c.pollLocked()
	f := c.file
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok {
		_ = f.SetWriteDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	// The check runs before the first wait too: Go clears the poller's readiness
	// when a wait begins, so a connect that finished meanwhile must be looked for.
	var result error
	err = rc.Write(func(fd uintptr) bool {
		soErr, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		switch {
		case err != nil:
			result = os.NewSyscallError("getsockopt", err)
		case soErr == int(unix.EINPROGRESS) || soErr == int(unix.EALREADY) || soErr == int(unix.EINTR):
			return false
		case soErr != 0:
			result = os.NewSyscallError("connect", unix.Errno(soErr))
		default:
			if _, err := syscall.Getpeername(int(fd)); err != nil {
				return false // still connecting
			}
		}
		return true
	})
	_ = f.SetWriteDeadline(time.Time{})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return mapContextErr(ctxErr)
		}
		return c.waitError(err)
	}
	return result
}

// mapContextErr spells a dial's ended context as net's Dialer does: a deadline is a
// timeout (net.Error with Timeout true), a cancel is context.Canceled.
func mapContextErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return os.ErrDeadlineExceeded
	}
	return err
}
