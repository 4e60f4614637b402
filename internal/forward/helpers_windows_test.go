//go:build windows

package forward

import (
	"syscall"
	"testing"
)

// pipeSizeBound: Windows has no splice; the goroutine forwarder holds one 32 KiB buffer.
const pipeSizeBound = 32 << 10

// peek reports one byte queued: Windows tests do not wait for bytes to land first.
func peek(uintptr, []byte) (int, error) { return 1, nil }

// sockBufSizes is the socket's send plus receive limit.
func sockBufSizes(t testing.TB, fd uintptr) int {
	t.Helper()
	snd, err := syscall.GetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := syscall.GetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	if err != nil {
		t.Fatal(err)
	}
	return snd + rcv
}
