//go:build linux

package session

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/rawtcp"
)

// When the player leaves while the backend is silent, the backend's pump is
// parked on its socket (it holds no goroutine). The session's end takes that
// park back and ends the pump itself: the backend is closed and released once,
// and the session reports what it relayed.
func TestEndTakesBackTheParkedBackendPump(t *testing.T) {
	poller, err := rawtcp.NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer poller.Close()

	// The backend: a plain listener; the proxy's side dials it through the Poller.
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	peers := make(chan net.Conn, 1)
	go func() {
		c, _ := srv.Accept()
		peers <- c
	}()
	bNet, err := rawtcp.Dial(context.Background(), poller, netip.MustParseAddrPort(srv.Addr().String()), time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	backendPeer := <-peers
	if backendPeer == nil {
		t.Fatal("the backend did not accept")
	}
	defer backendPeer.Close()

	// The player: dials the proxy's listener, whose Conns wait in the Poller.
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := rawtcp.NewListener(tl.(*net.TCPListener), poller)
	tl.Close() // the Listener holds its own copy of the socket
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	player, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer player.Close()
	cNet, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}

	reg, ok := mc.RegistryFor(mc.V1_20_2)
	if !ok {
		t.Fatal("no registry for 1.20.2")
	}
	client := &Client{Conn: mc.NewConn(mc.GetReader(cNet), cNet, nil), Registry: reg, Protocol: mc.V1_20_2, State: mc.PlayState}
	client.Conn.LendBuffers(cNet.(mc.Waiter))
	bConn := mc.NewConn(mc.GetReader(bNet), bNet, nil)
	bConn.LendBuffers(bNet)
	var released atomic.Int32
	backend := &Backend{Side: Side{Conn: bConn, Net: bNet}, Release: func() { released.Add(1); bNet.Close() }}

	type counts struct{ up, down int64 }
	done := make(chan counts, 2)
	New(client, cNet, nil, nil).Start(backend, func(up, down int64) { done <- counts{up, down} })

	// One frame from the backend reaches the player; the pump then parks.
	frame := []byte{3, 0x7e, 1, 2} // length 3: an id the relay only passes on, and two bytes
	if _, err := backendPeer.Write(frame); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(frame))
	_ = player.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(player, got); err != nil {
		t.Fatalf("the player did not get the backend's frame: %v", err)
	}
	if string(got) != string(frame) {
		t.Fatalf("the player got % x, want % x", got, frame)
	}
	time.Sleep(50 * time.Millisecond) // the pump parks once it has written the frame

	player.Close()
	select {
	case c := <-done:
		if c.up != 0 || c.down != int64(len(frame)) {
			t.Fatalf("the session reported up %d, down %d; want 0 and %d", c.up, c.down, len(frame))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not end after the player left")
	}
	_ = backendPeer.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := backendPeer.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("the backend's read after the player left: %d, %v; want the proxy's close", n, err)
	}
	if r := released.Load(); r != 1 {
		t.Fatalf("the backend was released %d times, want once", r)
	}
	select {
	case c := <-done:
		t.Fatalf("the session reported twice (again: %+v)", c)
	case <-time.After(100 * time.Millisecond):
	}
}
