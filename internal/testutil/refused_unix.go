//go:build unix

package testutil

import (
	"net"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// RefusedAddr is a loopback host:port that refuses connections for the whole test:
// a socket is bound there but never listens, so the kernel answers with a reset and
// no other listener can take the port meanwhile (a closed listener's port can be
// handed to the next one, which made "dead address" tests flaky).
func RefusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	unix.CloseOnExec(fd)
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
}
