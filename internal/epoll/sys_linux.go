package epoll

import (
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls of an event loop's turn and of a login's path, on non-blocking
// fds, made with RawSyscall: none of them can sleep, so the scheduler's
// entersyscall/exitsyscall is skipped (a third of a single-session round trip's CPU
// in the forwarder), and a connect or close that runs long in the kernel (on
// loopback connect runs the whole TCP handshake, close the FIN) no longer has sysmon
// hand the thread's P to another thread and keep polling every 20 µs. Nor does an
// entersyscall wake sysmon from the long sleep it takes while the process is idle
// (back to polling every 20 µs for a millisecond or more): accept4, epoll_ctl and
// the socket options of a login are raw for that (sysmon was 5 % of a passthrough
// login's CPU). Splice is the
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

// Accept4 is accept4(2) on a non-blocking listener, the socket it returns
// non-blocking and close-on-exec; sa is the peer's address.
func Accept4(fd int) (nfd int, sa syscall.Sockaddr, err error) {
	var rsa unix.RawSockaddrAny
	size := uint32(unsafe.Sizeof(rsa))
	r, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&size)),
		unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if e != 0 {
		return -1, nil, e
	}
	return int(r), sockaddr(&rsa), nil
}

// sockaddr converts an IPv4 or IPv6 address from the kernel (nil otherwise).
func sockaddr(rsa *unix.RawSockaddrAny) syscall.Sockaddr {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		in := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		p := (*[2]byte)(unsafe.Pointer(&in.Port))
		return &syscall.SockaddrInet4{Port: int(p[0])<<8 | int(p[1]), Addr: in.Addr}
	case unix.AF_INET6:
		in := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		p := (*[2]byte)(unsafe.Pointer(&in.Port))
		return &syscall.SockaddrInet6{Port: int(p[0])<<8 | int(p[1]), ZoneId: in.Scope_id, Addr: in.Addr}
	}
	return nil
}

// SetsockoptInt is setsockopt(2) with an int value.
func SetsockoptInt(fd, level, opt, v int) error {
	iv := int32(v)
	_, _, e := unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&iv)), 4, 0)
	return errno(e)
}

// GetsockoptInt is getsockopt(2) of an int value.
func GetsockoptInt(fd, level, opt int) (int, error) {
	var iv int32
	size := uint32(4)
	_, _, e := unix.RawSyscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&iv)), uintptr(unsafe.Pointer(&size)), 0)
	return int(iv), errno(e)
}

// epollCtl is epoll_ctl(2).
func epollCtl(epfd, op, fd int, ev *unix.EpollEvent) error {
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(epfd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0)
	return errno(e)
}
