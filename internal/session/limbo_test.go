package session

import (
	"bufio"
	"context"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// A limbo stay at the session alone: a 1.21.4 player fresh from his login is
// held in the proxy's world (a join game, keep-alives he must answer), the
// stay's Until gives him a backend once he is in, and he is taken back
// through configuration into it; the stay is reported entered and left, and
// Moved is told (none → the backend).
func TestLimboStayHandsTheBackendOver(t *testing.T) {
	reg, _ := mc.RegistryFor(mc.V1_21_4)
	id := func(s mc.State, d mc.Direction, pt mc.PacketType) int32 { v, _ := reg.ID(s, d, pt); return v }
	moved := make(chan string, 1)
	reports := make(chan bool, 2)
	policy := &Policy{
		Moved: func(_ *Session, from, to *Backend) {
			if from == nil {
				moved <- to.Server
			}
		},
		Limbo: func(handler string, entered bool, _ time.Duration) { reports <- entered },
	}
	clientSide, player := tcpPair(t)
	s := New(&Client{Conn: mc.NewConn(bufio.NewReader(clientSide), clientSide, nil), Registry: reg, Protocol: mc.V1_21_4, State: mc.ConfigState}, clientSide, policy, nil)

	seen := make(chan string, 64)
	go func() { // a vanilla client's answers
		pc := mc.NewConn(bufio.NewReader(player), player, nil)
		state := mc.ConfigState
		for {
			f, err := pc.ReadFrame()
			if err != nil {
				close(seen)
				return
			}
			t, _ := reg.Type(state, mc.Clientbound, f.ID)
			switch {
			case t == mc.PacketKnownPacks && state == mc.ConfigState:
				_ = pc.WritePacket(id(mc.ConfigState, mc.Serverbound, mc.PacketKnownPacks), []byte{0})
			case t == mc.PacketFinishConfiguration && state == mc.ConfigState:
				_ = pc.WritePacket(id(mc.ConfigState, mc.Serverbound, mc.PacketFinishConfiguration), nil)
				state = mc.PlayState
			case t == mc.PacketStartConfiguration && state == mc.PlayState:
				_ = pc.WritePacket(id(mc.PlayState, mc.Serverbound, mc.PacketConfigurationAck), nil)
				state = mc.ConfigState
			case t == mc.PacketKeepAlive:
				_ = pc.WritePacket(id(state, mc.Serverbound, mc.PacketKeepAlive), f.Payload)
				if len(f.Payload) > 0 && f.Payload[0] == 'b' {
					seen <- string(f.Payload)
				}
			case t == mc.PacketJoinGame:
				seen <- "join_game"
			}
		}
	}()

	b, bPeer := backendOn(t, "b")
	inLimbo := make(chan struct{})
	stay := Stay{Handler: "wake", Until: func(ctx context.Context) (*Backend, error) {
		select {
		case <-inLimbo:
			return b, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	ended := make(chan struct{})
	go s.StartInLimbo(stay, func(up, down int64) { close(ended) })
	expect(t, seen, "join_game") // the limbo's world
	if entered := <-reports; !entered {
		t.Fatal("the stay was not reported entered")
	}
	close(inLimbo)

	bw := mc.NewConn(bufio.NewReader(bPeer), bPeer, nil)
	_ = bw.WritePacket(id(mc.ConfigState, mc.Clientbound, mc.PacketFinishConfiguration), nil)
	_ = bPeer.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		f, err := bw.ReadFrame()
		if err != nil {
			t.Fatalf("the backend never got the client's finish configuration: %v", err)
		}
		if f.ID == id(mc.ConfigState, mc.Serverbound, mc.PacketFinishConfiguration) {
			break
		}
	}
	_ = bw.WritePacket(id(mc.PlayState, mc.Clientbound, mc.PacketKeepAlive), []byte("b's keep-alive"))
	expect(t, seen, "b's keep-alive")
	if left := <-reports; left {
		t.Fatal("the stay was not reported left")
	}
	if to := <-moved; to != "b" {
		t.Fatalf("Moved told none → %q, want b", to)
	}
	player.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end when the player left")
	}
}
