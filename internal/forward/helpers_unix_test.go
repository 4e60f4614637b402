//go:build unix

package forward

import (
	"testing"

	"golang.org/x/sys/unix"
)

// pipeSizeBound is the most a splice pipe holds in either forwarder (both ask 1 MiB).
const pipeSizeBound = 1 << 20

// peek looks at queued bytes without consuming them or blocking.
func peek(fd uintptr, buf []byte) (int, error) {
	n, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return n, err
}

// sockBufSizes is the socket's send plus receive limit, as the kernel reports it.
func sockBufSizes(t testing.TB, fd uintptr) int {
	t.Helper()
	snd, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
	if err != nil {
		t.Fatal(err)
	}
	return snd + rcv
}
