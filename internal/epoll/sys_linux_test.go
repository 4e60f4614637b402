package epoll

import (
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Accept4 takes a pending connection as a non-blocking, close-on-exec socket
// and names its peer as the peer knows itself, over IPv4 and IPv6; on an empty
// listener it says EAGAIN. The socket options round-trip an int.
func TestAccept4AndSocketOptions(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "tcp6" {
				addr = "[::1]:0"
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				if network == "tcp6" {
					t.Logf("no IPv6 loopback here: %v", err)
					return
				}
				t.Fatal(err)
			}
			defer ln.Close()
			f, err := ln.(*net.TCPListener).File()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lfd := int(f.Fd())
			if err := unix.SetNonblock(lfd, true); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Accept4(lfd); err != unix.EAGAIN {
				t.Fatalf("empty listener: %v, want EAGAIN", err)
			}
			c, err := net.Dial(network, ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var fd int
			var sa syscall.Sockaddr
			for {
				if fd, sa, err = Accept4(lfd); err != unix.EAGAIN {
					break
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			defer Close(fd)
			want := c.LocalAddr().(*net.TCPAddr)
			var port int
			var ip net.IP
			switch a := sa.(type) {
			case *syscall.SockaddrInet4:
				port, ip = a.Port, a.Addr[:]
			case *syscall.SockaddrInet6:
				port, ip = a.Port, a.Addr[:]
			default:
				t.Fatalf("peer address %T", sa)
			}
			if port != want.Port || !ip.Equal(want.IP) {
				t.Fatalf("peer %v:%d, want %v", ip, port, want)
			}
			fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
			if err != nil || fl&unix.O_NONBLOCK == 0 {
				t.Fatalf("accepted socket flags %#x (%v): not non-blocking", fl, err)
			}
			fdfl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
			if err != nil || fdfl&unix.FD_CLOEXEC == 0 {
				t.Fatalf("accepted socket fd flags %#x (%v): not close-on-exec", fdfl, err)
			}
			for _, v := range []int{1, 0} {
				if err := SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, v); err != nil {
					t.Fatal(err)
				}
				got, err := GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
				if err != nil || (got != 0) != (v != 0) {
					t.Fatalf("TCP_NODELAY set %d, read %d (%v)", v, got, err)
				}
			}
			if _, err := GetsockoptInt(-1, unix.SOL_SOCKET, unix.SO_ERROR); err != unix.EBADF {
				t.Fatalf("getsockopt on a bad fd: %v, want EBADF", err)
			}
		})
	}
}
