package session

import (
	"bufio"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/forwarding"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// countingConn counts the writes that reach the socket: one each is a system call.
type countingConn struct {
	net.Conn
	writes atomic.Int32
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// A 1.20.2+ backend login with AckLater leaves the Login Acknowledged for the
// next write: the backend gets it first, in the same write as the packet after
// it; without AckLater it is a write of its own.
func TestBackendLoginAckLater(t *testing.T) {
	reg, _ := mc.RegistryFor(mc.V1_20_2)
	successID, _ := reg.ID(mc.LoginState, mc.Clientbound, mc.PacketLoginSuccess)
	ackID, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged)
	infoID, _ := reg.ID(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation)
	profile := OfflineProfile("Steve")
	for _, later := range []bool{false, true} {
		proxySide, backendSide := tcpPair(t)
		counted := &countingConn{Conn: proxySide}
		_ = backendSide.SetDeadline(time.Now().Add(5 * time.Second))
		_ = proxySide.SetDeadline(time.Now().Add(5 * time.Second))

		// The backend: handshake and login start in, Login Success out, then the
		// frames that follow, in order.
		got := make(chan []int32, 1)
		go func() {
			defer backendSide.Close()
			bc := mc.NewConn(bufio.NewReader(backendSide), backendSide, nil)
			var ids []int32
			defer func() { got <- ids }()
			for range 2 { // handshake, login start
				if _, err := bc.ReadFrame(); err != nil {
					return
				}
			}
			ls := mc.LoginSuccess{UUID: profile.ID, Name: profile.Name}
			if bc.WritePacket(successID, ls.AppendPayload(nil, mc.V1_20_2)) != nil {
				return
			}
			for range 2 {
				f, err := bc.ReadFrame()
				if err != nil {
					return
				}
				ids = append(ids, f.ID)
			}
		}()

		conn := mc.NewConn(bufio.NewReader(counted), counted, nil)
		out, err := BackendLogin{
			Registry:  reg,
			Handshake: mc.Handshake{ProtocolVersion: int32(mc.V1_20_2), ServerAddress: "backend", ServerPort: 25565, NextState: mc.StateLogin},
			Player:    forwarding.Player{Profile: profile},
			AckLater:  later,
		}.Run(conn)
		if err != nil || out.Kick != "" {
			t.Fatalf("AckLater=%v: login: %v %q", later, err, out.Kick)
		}
		wantAfterLogin := int32(2) // handshake and login start, then the ack
		if later {
			wantAfterLogin = 1
		}
		if n := counted.writes.Load(); n != wantAfterLogin {
			t.Errorf("AckLater=%v: %d writes after the login, want %d", later, n, wantAfterLogin)
		}
		if err := conn.WritePacket(infoID, []byte{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		if n := counted.writes.Load(); n != wantAfterLogin+1 {
			t.Errorf("AckLater=%v: %d writes after the next packet, want %d", later, n, wantAfterLogin+1)
		}
		ids := <-got
		if len(ids) != 2 || ids[0] != ackID || ids[1] != infoID {
			t.Errorf("AckLater=%v: backend read %v, want the ack (0x%02x) then the packet (0x%02x)", later, ids, ackID, infoID)
		}
		proxySide.Close()
	}
}

// A queued ack goes out alone with a Flush when nothing follows it.
func TestBackendLoginAckLaterFlushed(t *testing.T) {
	reg, _ := mc.RegistryFor(mc.V1_20_2)
	successID, _ := reg.ID(mc.LoginState, mc.Clientbound, mc.PacketLoginSuccess)
	ackID, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged)
	profile := OfflineProfile("Alex")
	proxySide, backendSide := tcpPair(t)
	defer proxySide.Close()
	_ = backendSide.SetDeadline(time.Now().Add(5 * time.Second))
	got := make(chan int32, 1)
	go func() {
		defer backendSide.Close()
		bc := mc.NewConn(bufio.NewReader(backendSide), backendSide, nil)
		for range 2 {
			if _, err := bc.ReadFrame(); err != nil {
				got <- -1
				return
			}
		}
		ls := mc.LoginSuccess{UUID: profile.ID, Name: profile.Name}
		if bc.WritePacket(successID, ls.AppendPayload(nil, mc.V1_20_2)) != nil {
			got <- -1
			return
		}
		f, err := bc.ReadFrame()
		if err != nil {
			got <- -1
			return
		}
		got <- f.ID
	}()
	conn := mc.NewConn(bufio.NewReader(proxySide), proxySide, nil)
	if _, err := (BackendLogin{
		Registry:  reg,
		Handshake: mc.Handshake{ProtocolVersion: int32(mc.V1_20_2), ServerAddress: "backend", ServerPort: 25565, NextState: mc.StateLogin},
		Player:    forwarding.Player{Profile: profile},
		AckLater:  true,
	}).Run(conn); err != nil {
		t.Fatal(err)
	}
	if err := conn.Flush(); err != nil {
		t.Fatal(err)
	}
	if id := <-got; id != ackID {
		t.Fatalf("backend read 0x%02x after the flush, want the ack 0x%02x", id, ackID)
	}
}
