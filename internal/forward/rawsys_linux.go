//go:build linux

package forward

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The per-packet syscalls of the epoll forwarder, made with RawSyscall: every fd they
// touch is non-blocking (the sockets, the pipes, and epoll_wait with a zero timeout),
// so none can wait, and skipping the scheduler's entersyscall/exitsyscall saves a
// little on each of the three calls a small packet costs.

func rawErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), rawErr(e)
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), rawErr(e)
}

func rawSplice(in, out, n int) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_SPLICE, uintptr(in), 0, uintptr(out), 0, uintptr(n), unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
	return int(r), rawErr(e)
}

// rawPollEvents is epoll_wait with a zero timeout (epoll_pwait, present on every
// Linux architecture, with no signal mask).
func rawPollEvents(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	return int(n), rawErr(e)
}
