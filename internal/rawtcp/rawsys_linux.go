//go:build linux

package rawtcp

import (
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The calls of a login's path on non-blocking sockets are made with RawSyscall:
// none of them can sleep, so the scheduler's entersyscall/exitsyscall is skipped,
// and a connect or close that runs long in the kernel (on loopback connect runs the
// whole TCP handshake, close the FIN) no longer has sysmon hand the thread's P to
// another thread, nor keeps sysmon polling every 20 µs.

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawClose(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errnoErr(e)
}

func rawShutdown(fd, how int) error {
	_, _, e := unix.RawSyscall(unix.SYS_SHUTDOWN, uintptr(fd), uintptr(how), 0)
	return errnoErr(e)
}

// rawConnect starts a connect to ap (IPv4 or IPv6, zone as an interface index).
func rawConnect(fd int, ap netip.AddrPort, zone uint32) error {
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
	return errnoErr(e)
}

// pollEvents is epoll_wait with a zero timeout (epoll_pwait, present on every Linux
// architecture, with no signal mask).
func pollEvents(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
