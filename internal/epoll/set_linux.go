// Package epoll holds what an event loop over an epoll set needs in Go: the set,
// parked in Go's own netpoller; the system calls a turn makes on non-blocking
// sockets, without the scheduler; and the table that names a registrant in event
// data by slot and generation. The epoll forwarder (internal/forward) and the
// sockets on their way to it (internal/rawtcp) are its two users.
package epoll

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Set is an epoll set whose fd is itself in Go's netpoller (an epoll fd is
// pollable), so the goroutine that serves it parks in RawConn.Read like any network
// reader: no OS thread sits blocked in epoll_wait and no P is held. When one of its
// sockets becomes ready, Go wakes the goroutine, which collects the events with Wait.
type Set struct {
	FD   int
	file *os.File
	rc   syscall.RawConn
}

// aLongTimeAgo is a read deadline in the past: it wakes a Set parked in Serve.
var aLongTimeAgo = time.Unix(1, 0)

// Open creates a Set; name labels its fd.
func Open(name string) (*Set, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("%s: epoll_create1: %w", name, err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("%s: epoll fd non-blocking: %w", name, err)
	}
	file := os.NewFile(uintptr(epfd), name)
	rc, err := file.SyscallConn()
	if err == nil {
		// A deadline only works on a file in Go's netpoller: this proves it is there.
		err = file.SetReadDeadline(time.Time{})
	}
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("%s: epoll fd not pollable by Go: %w", name, err)
	}
	return &Set{FD: epfd, file: file, rc: rc}, nil
}

// Serve calls collect with the epoll fd and parks the goroutine whenever collect
// returns false, until the fd is readable again, then calls it again. Go clears the
// fd's readiness before the first call and records every edge after it, so an
// event that comes while collect works is never slept through, and a collect that
// found fewer events than it asked for may return false at once. Serve returns nil
// when collect returns true, os.ErrDeadlineExceeded after Wake, or the error of a
// closed Set.
func (s *Set) Serve(collect func(epfd uintptr) bool) error { return s.rc.Read(collect) }

// Wake makes the Serve in progress, or the next one, return os.ErrDeadlineExceeded:
// a doorbell for work that does not come from the set (an inbox, Close).
func (s *Set) Wake() { _ = s.file.SetReadDeadline(aLongTimeAgo) }

// Rearm undoes Wake, before the rung-for work is looked at, so that a ring that
// lands in between is seen by the next Serve.
func (s *Set) Rearm() { _ = s.file.SetReadDeadline(time.Time{}) }

// Close closes the epoll fd; a Serve still parked returns an error.
func (s *Set) Close() error { return s.file.Close() }

// Add registers fd with events and the event data (fd, pad) of a Table's Data.
func (s *Set) Add(fd int, events uint32, data, pad int32) error {
	ev := unix.EpollEvent{Events: events, Fd: data, Pad: pad}
	if err := epollCtl(s.FD, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Modify changes fd's registration (EPOLL_CTL_MOD reports the socket ready at once
// if it is ready now).
func (s *Set) Modify(fd int, events uint32, data, pad int32) error {
	ev := unix.EpollEvent{Events: events, Fd: data, Pad: pad}
	if err := epollCtl(s.FD, unix.EPOLL_CTL_MOD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Delete takes fd out of the set (for an fd that stays open; close does it itself).
func (s *Set) Delete(fd int) error {
	if err := epollCtl(s.FD, unix.EPOLL_CTL_DEL, fd, nil); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}
