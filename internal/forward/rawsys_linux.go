//go:build linux

package forward

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The per-packet syscalls of the epoll forwarder. Those a small packet costs (epoll_wait
// with a zero timeout, read, write of at most 16 KiB, all on non-blocking fds) are made
// with RawSyscall: none can wait, and skipping the scheduler's entersyscall/exitsyscall
// took a third off the CPU of a single-session round trip.

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

// splice moves up to n bytes between a socket and a pipe. It goes through Syscall,
// not RawSyscall: moving a megabyte takes long enough that the scheduler should know
// the thread is in the kernel (raw, bulk throughput fell by a third under load).
func splice(in, out, n int) (int, error) {
	r, _, e := unix.Syscall6(unix.SYS_SPLICE, uintptr(in), 0, uintptr(out), 0, uintptr(n), unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
	return int(r), rawErr(e)
}

// rawPollEvents is epoll_wait with a zero timeout (epoll_pwait, present on every
// Linux architecture, with no signal mask).
func rawPollEvents(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	return int(n), rawErr(e)
}

// rawClose and rawShutdown end a session's sockets with RawSyscall too: both run the
// TCP teardown (FIN, and on loopback the peer's side of it) inside the call, long
// enough that through Syscall sysmon would hand the shard's P to another thread
// and keep polling every 20 µs, yet neither can sleep on a non-blocking socket
// without SO_LINGER.
func rawClose(fd int) {
	_, _, _ = unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}

func rawShutdown(fd, how int) error {
	_, _, e := unix.RawSyscall(unix.SYS_SHUTDOWN, uintptr(fd), uintptr(how), 0)
	return rawErr(e)
}
