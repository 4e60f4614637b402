package session

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// playing is a session of a 1.21.4 client in play on clientSide; peer is the
// player's end of the socket.
func playing(t *testing.T) (s *Session, peer net.Conn, reg *mc.Registry) {
	t.Helper()
	reg, _ = mc.RegistryFor(mc.V1_21_4)
	clientSide, peer := tcpPair(t)
	client := &Client{Conn: mc.NewConn(bufio.NewReader(clientSide), clientSide, nil), Registry: reg, Protocol: mc.V1_21_4, State: mc.PlayState}
	return New(client, clientSide, nil, nil), peer, reg
}

// The relay and the proxy's own lines share one writer: a backend's frames
// and chat lines told at the same time reach the client whole, each stream
// in its order, none lost.
func TestRelayAndTellNeverSplitAFrame(t *testing.T) {
	s, peer, reg := playing(t)
	backendSide, backendPeer := tcpPair(t)
	b := &Backend{Side: Side{Conn: mc.NewConn(bufio.NewReader(backendSide), backendSide, nil), Net: backendSide}, Server: "a", Address: "a:1", Release: func() { backendSide.Close() }}
	relayed := make(chan [2]int64, 1)
	go func() {
		up, down := s.Run(b)
		relayed <- [2]int64{up, down}
	}()

	const frames, tells = 3000, 300
	kaID, _ := reg.ID(mc.PlayState, mc.Clientbound, mc.PacketKeepAlive)
	chatID, _ := reg.ID(mc.PlayState, mc.Clientbound, mc.PacketSystemChat)
	go func() {
		bc := mc.NewConn(nil, backendPeer, nil)
		for i := range frames {
			if bc.WritePacket(kaID, binary.BigEndian.AppendUint64(nil, uint64(i))) != nil {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range tells {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Tell(fmt.Sprintf("line %d", i)); err != nil {
				t.Errorf("tell %d: %v", i, err)
			}
		}()
	}

	_ = peer.SetReadDeadline(time.Now().Add(20 * time.Second))
	pc := mc.NewConn(bufio.NewReader(peer), peer, nil)
	next, chats := uint64(0), 0
	for next < frames || chats < tells {
		f, err := pc.ReadFrame()
		if err != nil {
			t.Fatalf("after %d frames and %d lines: %v", next, chats, err)
		}
		switch f.ID {
		case kaID:
			if n := binary.BigEndian.Uint64(f.Payload); n != next {
				t.Fatalf("backend frame %d arrived as number %d", n, next)
			}
			next++
		case chatID:
			if _, err := mc.DecodeSystemChat(f.Payload, mc.V1_21_4); err != nil {
				t.Fatalf("line %d does not decode: %v", chats, err)
			}
			chats++
		default:
			t.Fatalf("frame id 0x%02x: a frame was split or mixed", f.ID)
		}
	}
	wg.Wait()
	peer.Close()
	select {
	case counts := <-relayed:
		if counts[1] == 0 {
			t.Fatal("the session counted no bytes down")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end when the client left")
	}
}

// A player who reads nothing cannot hold the proxy's writer: a line told to
// him fails at the write deadline, and a kick still goes out within its own.
func TestWritesToAClientThatReadsNothingEnd(t *testing.T) {
	s, peer, _ := playing(t)
	s.w.timeout, s.w.kickTimeout = 300*time.Millisecond, 300*time.Millisecond
	_ = peer // never read

	long := string(make([]byte, 200))
	failed := make(chan error, 1)
	go func() {
		for { // fill both socket buffers
			if err := s.Tell(long); err != nil {
				failed <- err
				return
			}
		}
	}()
	select {
	case err := <-failed:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("a write to a client that reads nothing failed with %v, want a timeout", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Tell to a client that reads nothing never returned")
	}

	kicked := make(chan struct{})
	go func() { s.Kick("bye"); close(kicked) }()
	select {
	case <-kicked:
	case <-time.After(5 * time.Second):
		t.Fatal("Kick waited on the writer of a client that reads nothing")
	}
}

// Titles go to a client in play as the version's packets, and are not
// written to one between worlds.
func TestShowTitle(t *testing.T) {
	s, peer, reg := playing(t)
	if err := s.ShowTitle(mc.Title{Action: mc.TitleActionBar, Text: mc.TextComponent("above the hotbar")},
		mc.Title{Action: mc.TitleShow, Text: mc.TextComponent("big")}); err != nil {
		t.Fatal(err)
	}
	_ = peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	pc := mc.NewConn(bufio.NewReader(peer), peer, nil)
	for _, want := range []mc.PacketType{mc.PacketSetActionBarText, mc.PacketSetTitleText} {
		f, err := pc.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := reg.Type(mc.PlayState, mc.Clientbound, f.ID); got != want {
			t.Fatalf("frame 0x%02x is %v, want %v", f.ID, got, want)
		}
	}
	s.mu.Lock()
	s.joining = true // waiting for a new world
	s.mu.Unlock()
	if err := s.ShowTitle(mc.Title{Action: mc.TitleShow, Text: mc.TextComponent("lost")}); err != nil {
		t.Fatal(err)
	}
	_ = peer.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if f, err := pc.ReadFrame(); err == nil {
		t.Fatalf("a title was written to a client between worlds (frame 0x%02x)", f.ID)
	}
}
