package testutil

import (
	"net"
	"testing"
)

// ServeTCP listens on a loopback port and runs handle for each connection on
// a goroutine of its own, closing the connection when handle returns; the
// listener closes with the test. It returns the listener's address.
func ServeTCP(t testing.TB, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}
