package proxy

import (
	"io"
	"net"
	"testing"
)

// BenchmarkForward pushes 128 KiB chunks player → backend through forward on real
// loopback TCP: "splice" is what sessions use (raw *net.TCPConn), "userspace" hides
// the *net.TCPConn behind a wrapper, which is what any bufio/counting wrapper would
// cost. -benchmem shows the per-chunk allocations (there must be none).
func BenchmarkForward(b *testing.B) {
	for _, mode := range []string{"splice", "userspace"} {
		b.Run(mode, func(b *testing.B) {
			pair := func() (*net.TCPConn, *net.TCPConn) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				defer ln.Close()
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				s, err := ln.Accept()
				if err != nil {
					b.Fatal(err)
				}
				return c.(*net.TCPConn), s.(*net.TCPConn)
			}
			player, pc := pair()
			bc, server := pair()
			var client, backend net.Conn = pc, bc
			if mode == "userspace" {
				client, backend = struct{ net.Conn }{pc}, struct{ net.Conn }{bc}
			}
			done := make(chan struct{})
			go func() { defer close(done); copyBoth(client, backend) }()
			sunk := make(chan int64)
			go func() {
				n, _ := io.Copy(io.Discard, struct{ io.Reader }{server})
				sunk <- n
			}()
			buf := make([]byte, 128<<10)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := player.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			_ = player.CloseWrite()
			n := <-sunk
			b.StopTimer()
			player.Close()
			server.Close()
			<-done
			if n < int64(b.N)*int64(len(buf)) {
				b.Fatalf("backend got %d bytes, want %d", n, int64(b.N)*int64(len(buf)))
			}
		})
	}
}
