package session

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// backendOn is a backend on a fresh socket pair: the session's side, and the
// server's end (peer) to play the server on.
func backendOn(t *testing.T, name string) (b *Backend, peer net.Conn) {
	t.Helper()
	side, peer := tcpPair(t)
	return &Backend{Side: Side{Conn: mc.NewConn(bufio.NewReader(side), side, nil), Net: side}, Server: name, Address: name + ":1",
		Release: func() { side.Close() }}, peer
}

// A 1.20.2+ switch at the session alone: the client is sent back to its
// configuration phase, nothing of the old server reaches it after that, the
// old server's connection is closed, the new one gets the client's settings
// and serves him once he acknowledged, and Moved is told (old, new).
func TestSwitchThroughConfiguration(t *testing.T) {
	reg, _ := mc.RegistryFor(mc.V1_21_4)
	id := func(s mc.State, d mc.Direction, pt mc.PacketType) int32 { v, _ := reg.ID(s, d, pt); return v }
	moved := make(chan [2]string, 1)
	policy := &Policy{Moved: func(_ *Session, from, to *Backend) { moved <- [2]string{from.Server, to.Server} }}
	clientSide, player := tcpPair(t)
	s := New(&Client{Conn: mc.NewConn(bufio.NewReader(clientSide), clientSide, nil), Registry: reg, Protocol: mc.V1_21_4, State: mc.PlayState}, clientSide, policy, nil)
	a, aPeer := backendOn(t, "a")
	go s.Run(a)

	// The player: answers the switch as a vanilla client does, and reports
	// the play packets' payloads (the servers' names) and when his state changed.
	seen := make(chan string, 64)
	go func() {
		pc := mc.NewConn(bufio.NewReader(player), player, nil)
		state := mc.PlayState
		for {
			f, err := pc.ReadFrame()
			if err != nil {
				close(seen)
				return
			}
			t, _ := reg.Type(state, mc.Clientbound, f.ID)
			switch {
			case state == mc.PlayState && t == mc.PacketStartConfiguration:
				seen <- "start_configuration"
				_ = pc.WritePacket(id(mc.PlayState, mc.Serverbound, mc.PacketConfigurationAck), nil)
				state = mc.ConfigState
			case state == mc.ConfigState && t == mc.PacketFinishConfiguration:
				seen <- "finish_configuration"
				_ = pc.WritePacket(id(mc.ConfigState, mc.Serverbound, mc.PacketFinishConfiguration), nil)
				state = mc.PlayState
			case state == mc.PlayState && t == mc.PacketKeepAlive:
				seen <- string(f.Payload)
			}
		}
	}()
	// Settings the client sent while on a: the new server must get them.
	pc := mc.NewConn(nil, player, nil)
	_ = pc.WritePacket(id(mc.PlayState, mc.Serverbound, mc.PacketClientInformation), []byte("settings"))
	aw := mc.NewConn(bufio.NewReader(aPeer), aPeer, nil)
	_ = aw.WritePacket(id(mc.PlayState, mc.Clientbound, mc.PacketKeepAlive), []byte("from a"))
	expect(t, seen, "from a")

	b, bPeer := backendOn(t, "b")
	bw := mc.NewConn(bufio.NewReader(bPeer), bPeer, nil)
	switched := make(chan error, 1)
	go func() { switched <- s.Switch(b, 5*time.Second) }()
	expect(t, seen, "start_configuration")
	// What a still sends now must never reach the player.
	_ = aw.WritePacket(id(mc.PlayState, mc.Clientbound, mc.PacketKeepAlive), []byte("late from a"))

	_ = bPeer.SetReadDeadline(time.Now().Add(5 * time.Second))
	f, err := bw.ReadFrame()
	if err != nil || f.ID != id(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation) || string(f.Payload) != "settings" {
		t.Fatalf("the new server's first packet: %v %+v, want the client's settings", err, f)
	}
	_ = bw.WritePacket(id(mc.ConfigState, mc.Clientbound, mc.PacketFinishConfiguration), nil)
	expect(t, seen, "finish_configuration")
	if f, err := bw.ReadFrame(); err != nil || f.ID != id(mc.ConfigState, mc.Serverbound, mc.PacketFinishConfiguration) {
		t.Fatalf("the new server did not get the client's finish configuration: %v", err)
	}
	_ = bw.WritePacket(id(mc.PlayState, mc.Clientbound, mc.PacketKeepAlive), []byte("from b"))
	expect(t, seen, "from b")

	if err := <-switched; err != nil {
		t.Fatalf("Switch: %v", err)
	}
	if m := <-moved; m != [2]string{"a", "b"} {
		t.Fatalf("Moved told %v, want a → b", m)
	}
	_ = aPeer.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(aPeer); err != nil {
		t.Fatalf("the old server's connection was not closed: %v", err)
	}
	player.Close()
}

// expect waits for want among what the player saw, failing on anything else
// that came first from the old server.
func expect(t *testing.T, seen <-chan string, want string) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case got, ok := <-seen:
			if !ok {
				t.Fatalf("the player's connection ended waiting for %q", want)
			}
			if got == want {
				return
			}
			if got == "late from a" {
				t.Fatal("a packet of the old server reached the player after the switch began")
			}
		case <-timeout:
			t.Fatalf("no %q within 5s", want)
		}
	}
}
