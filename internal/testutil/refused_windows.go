package testutil

import (
	"net"
	"strconv"
	"testing"

	"golang.org/x/sys/windows"
)

// RefusedAddr is a loopback host:port that refuses connections for the whole test:
// a socket is bound there but never listens, so connecting is refused and no other
// listener can take the port meanwhile.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	s, err := windows.Socket(windows.AF_INET, windows.SOCK_STREAM, windows.IPPROTO_TCP)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { windows.Closesocket(s) })
	if err := windows.Bind(s, &windows.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	sa, err := windows.Getsockname(s)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*windows.SockaddrInet4).Port))
}
