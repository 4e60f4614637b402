package epoll

import (
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls of an event loop's turn and of a login's path, on non-blocking
// fds, made with RawSyscall: none of them can sleep, so the scheduler's
// entersyscall/exitsyscall is skipped (a third of a single-session round trip's CPU
// in the forwarder), and a connect or close that runs long in the kernel (on
// loopback connect runs the whole TCP handshake, close the FIN) no longer has sysmon
// hand the thread's P to another thread and keep polling every 20 µs. Splice is the
// exception: moving a megabyte takes long enough that the scheduler should know the
// thread is in the kernel.

func errno(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// Read is read(2).
func Read(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Write is write(2).
func Write(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Close is close(2).
func Close(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errno(e)
}

// Shutdown is shutdown(2).
func Shutdown(fd, how int) error {
	_, _, e := unix.RawSyscall(unix.SYS_SHUTDOWN, uintptr(fd), uintptr(how), 0)
	return errno(e)
}

// Splice moves up to n bytes between a socket and a pipe, without blocking; through
// Syscall, not RawSyscall (raw, bulk throughput fell by a third under load).
func Splice(in, out, n int) (int, error) {
	r, _, e := unix.Syscall6(unix.SYS_SPLICE, uintptr(in), 0, uintptr(out), 0, uintptr(n), unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Wait is epoll_wait with a zero timeout (epoll_pwait, present on every Linux
// architecture, with no signal mask).
func Wait(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Connect starts a connect to ap (IPv4 or IPv6; zone is an interface index).
func Connect(fd int, ap netip.AddrPort, zone uint32) error {
	ip := ap.Addr().Unmap()
	port := ap.Port()
	var e unix.Errno
	if ip.Is4() {
		sa := unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: ip.As4()}
		pp := (*[2]byte)(unsafe.Pointer(&sa.Port))
		pp[0], pp[1] = byte(port>>8), byte(port)
		_, _, e = unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))
	} else {
		sa := unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: ip.As16(), Scope_id: zone}
		pp := (*[2]byte)(unsafe.Pointer(&sa.Port))
		pp[0], pp[1] = byte(port>>8), byte(port)
		_, _, e = unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))
	}
	return errno(e)
}
