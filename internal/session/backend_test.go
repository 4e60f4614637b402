package session

import (
	"bufio"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
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

// loginBackend plays a backend on conn: it reads the handshake and login start,
// answers Login Success for profile, then sends the ids of the next n frames it
// reads (fewer if the connection fails).
func loginBackend(conn net.Conn, reg *mc.Registry, profile auth.Profile, n int) <-chan []int32 {
	got := make(chan []int32, 1)
	go func() {
		defer conn.Close()
		bc := mc.NewConn(bufio.NewReader(conn), conn, nil)
		var ids []int32
		defer func() { got <- ids }()
		for range 2 { // handshake, login start
			if _, err := bc.ReadFrame(); err != nil {
				return
			}
		}
		successID, _ := reg.ID(mc.LoginState, mc.Clientbound, mc.PacketLoginSuccess)
		ls := mc.LoginSuccess{UUID: profile.ID, Name: profile.Name}
		if bc.WritePacket(successID, ls.AppendPayload(nil, reg.Protocol())) != nil {
			return
		}
		for range n {
			f, err := bc.ReadFrame()
			if err != nil {
				return
			}
			ids = append(ids, f.ID)
		}
	}()
	return got
}

func ackLaterLogin(reg *mc.Registry, profile auth.Profile, later bool) BackendLogin {
	return BackendLogin{
		Registry:  reg,
		Handshake: mc.Handshake{ProtocolVersion: int32(reg.Protocol()), ServerAddress: "backend", ServerPort: 25565, NextState: mc.StateLogin},
		Player:    forwarding.Player{Profile: profile},
		AckLater:  later,
	}
}

// A 1.20.2+ backend login with AckLater leaves the Login Acknowledged for the
// next write: the backend gets it first, in the same write as the packet after
// it; without AckLater it is a write of its own.
func TestBackendLoginAckLater(t *testing.T) {
	reg, _ := mc.RegistryFor(mc.V1_20_2)
	ackID, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged)
	infoID, _ := reg.ID(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation)
	profile := OfflineProfile("Steve")
	for _, later := range []bool{false, true} {
		proxySide, backendSide := tcpPair(t)
		counted := &countingConn{Conn: proxySide}
		_ = backendSide.SetDeadline(time.Now().Add(5 * time.Second))
		_ = proxySide.SetDeadline(time.Now().Add(5 * time.Second))
		got := loginBackend(backendSide, reg, profile, 2)

		conn := mc.NewConn(bufio.NewReader(counted), counted, nil)
		out, err := ackLaterLogin(reg, profile, later).Run(conn)
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
		if ids := <-got; len(ids) != 2 || ids[0] != ackID || ids[1] != infoID {
			t.Errorf("AckLater=%v: backend read %v, want the ack (0x%02x) then the packet (0x%02x)", later, ids, ackID, infoID)
		}
		proxySide.Close()
	}
}

// A queued ack goes out alone with a Flush when nothing follows it.
func TestBackendLoginAckLaterFlushed(t *testing.T) {
	reg, _ := mc.RegistryFor(mc.V1_20_2)
	ackID, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged)
	profile := OfflineProfile("Alex")
	proxySide, backendSide := tcpPair(t)
	defer proxySide.Close()
	_ = backendSide.SetDeadline(time.Now().Add(5 * time.Second))
	got := loginBackend(backendSide, reg, profile, 1)
	conn := mc.NewConn(bufio.NewReader(proxySide), proxySide, nil)
	if _, err := ackLaterLogin(reg, profile, true).Run(conn); err != nil {
		t.Fatal(err)
	}
	if err := conn.Flush(); err != nil {
		t.Fatal(err)
	}
	if ids := <-got; len(ids) != 1 || ids[0] != ackID {
		t.Fatalf("backend read %v after the flush, want the ack 0x%02x", ids, ackID)
	}
}
