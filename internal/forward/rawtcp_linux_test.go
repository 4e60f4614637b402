package forward

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/rawtcp"
)

// rawPair is a connection whose proxy-side end is a rawtcp Conn: accepted by a
// rawtcp.Listener (the player's side) or dialled by rawtcp.Dial (the backend's).
func rawPair(t *testing.T, p *rawtcp.Poller, accepted bool) (peer *net.TCPConn, proxySide *rawtcp.Conn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if !accepted {
		defer ln.Close()
		c, err := rawtcp.Dial(context.Background(), p, ln.Addr().(*net.TCPAddr).AddrPort(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		peer, err := ln.AcceptTCP()
		if err != nil {
			t.Fatal(err)
		}
		return peer, c
	}
	rl, err := rawtcp.NewListener(ln, p)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	peer, err = net.DialTCP("tcp", nil, rl.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	c, err := rl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return peer, c.(*rawtcp.Conn)
}

// TestRawConnsAreForwarded hands both forwarders rawtcp Conns, one that never
// waited and one that did (so it was in the rawtcp Poller's epoll set): bytes both
// ways are exact, a half-close comes through, and the result counts them.
func TestRawConnsAreForwarded(t *testing.T) {
	eachImpl(t, func(t *testing.T, f Forwarder) {
		p, err := rawtcp.NewPoller()
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		player, client := rawPair(t, p, true)
		server, backend := rawPair(t, p, false)
		defer player.Close()
		defer server.Close()
		player.SetDeadline(time.Now().Add(60 * time.Second))
		server.SetDeadline(time.Now().Add(60 * time.Second))
		// The backend's first read waits, as a login's does for the backend's answer.
		_ = backend.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := backend.Read(make([]byte, 1)); err == nil {
			t.Fatal("read a byte nobody sent")
		}
		_ = backend.SetReadDeadline(time.Time{})

		res := make(chan Result, 1)
		f.Forward(client, backend, func(r Result) { res <- r })

		const size = 3 << 20
		sent := make(chan transfer, 1)
		go func() {
			var tr transfer
			tr.n, tr.sum, tr.err = newStream(7).send(server, size)
			sent <- tr
		}()
		if _, err := player.Write([]byte("hello backend")); err != nil {
			t.Fatal(err)
		}
		player.CloseWrite()
		got := make([]byte, len("hello backend"))
		if _, err := io.ReadFull(server, got); err != nil || string(got) != "hello backend" {
			t.Fatalf("server read %q, %v", got, err)
		}
		if n, err := server.Read(got); n != 0 || err != io.EOF {
			t.Fatalf("the player's half-close did not reach the server: %d, %v", n, err)
		}
		n, sum, err := drainN(player, size)
		s := <-sent
		if err != nil || s.err != nil || n != size || !bytes.Equal(sum, s.sum) {
			t.Fatalf("backend to player: got %d (%v), sent %d (%v), hashes equal %v", n, err, s.n, s.err, bytes.Equal(sum, s.sum))
		}
		server.CloseWrite()
		select {
		case r := <-res:
			if r.Err != nil || r.Up != int64(len("hello backend")) || r.Down != size {
				t.Fatalf("result %+v, want up %d down %d", r, len("hello backend"), size)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("session never ended")
		}
	})
}
