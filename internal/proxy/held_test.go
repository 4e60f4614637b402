package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// sessionGoroutines counts the goroutines running or waiting in the session
// package: a relay's pumps.
func sessionGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("/internal/session.")) {
			count++
		}
	}
	return count
}

// A held player costs the proxy no goroutine: while the player and the server
// are silent neither side of the session waits on one (each parks on its
// socket), and each wakes for what comes: the server's messages reach the
// client, and a move, which needs the client's answer, completes. With Go's
// own sockets (the goroutine forwarder, INFRARUST_FORWARDER=goroutine, every
// platform without epoll) nothing parks: each side is one goroutine, no more.
func TestHeldPlayersHoldNoGoroutine(t *testing.T) {
	a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
	lobby, games := networkServers(a, b)
	tp := startProxy(t, nil, lobby, games)
	perPlayer := 0
	if !tp.sockets.raw() {
		perPlayer = 2
	}
	var clients []*playClient
	for i := range 5 {
		pc := joinAndPlay(t, tp.addr, "games.test", fmt.Sprintf("Held%d", i))
		pc.await(t, "hello from B")
		clients = append(clients, pc)
	}
	parked := func(why string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for sessionGoroutines() > perPlayer*len(clients) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d goroutines in the sessions of %d players, want at most %d", why, sessionGoroutines(), len(clients), perPlayer*len(clients))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	parked("5 idle players")

	b.toPlayers("test:news", []byte("news from B"))
	for _, pc := range clients {
		pc.await(t, "news from B")
	}
	parked("after the server spoke")

	for i, pc := range clients {
		pc.drain()
		if _, err := tp.SendPlayer(context.Background(), fmt.Sprintf("Held%d", i), "lobby", false); err != nil {
			t.Fatalf("moving Held%d: %v", i, err)
		}
		pc.await(t, "hello from A")
	}
	parked("after the moves")
	if n := len(tp.Players("lobby")); n != 5 {
		t.Fatalf("%d players on the lobby after the moves, want 5", n)
	}
}

// Bad input where the change moved the reads: a held player who sends garbage
// is ended (the parked relay wakes, fails the frame and ends the session), and
// a client that answers Login Success with another packet where Login
// Acknowledged belongs (read after the backend's login now) is closed without
// becoming a player; the proxy keeps serving.
func TestHeldAndJoiningClientsSendingGarbage(t *testing.T) {
	a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
	lobby, games := networkServers(a, b)
	tp := startProxy(t, nil, lobby, games)
	closed := func(t *testing.T, c net.Conn, what string) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			if _, err := c.Read(make([]byte, 4096)); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatalf("%s: the connection was not closed", what)
				}
				return
			}
		}
	}

	pc := joinAndPlay(t, tp.addr, "games.test", "Garbage")
	pc.await(t, "hello from B")
	if _, err := pc.net.Write([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}); err != nil { // a VarInt too long
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(tp.Players("")) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a player who sent garbage is still on: %+v", tp.Players(""))
		}
		time.Sleep(10 * time.Millisecond)
	}

	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	reg, _ := mc.RegistryFor(modernProtocol)
	z, _ := mc.NewZlib(-1)
	conn := mc.NewConn(bufio.NewReader(c), c, z)
	_ = conn.WritePacket(0, mc.Handshake{ProtocolVersion: int32(modernProtocol), ServerAddress: "games.test", ServerPort: 25565, NextState: mc.StateLogin}.AppendPayload(nil))
	_ = conn.WritePacket(0, mc.LoginStart{Name: "NoAck", HasUUID: true}.AppendPayload(nil, modernProtocol))
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		f, err := conn.ReadFrame()
		if err != nil {
			t.Fatalf("before Login Success: %v", err)
		}
		typ, _ := reg.Type(mc.LoginState, mc.Clientbound, f.ID)
		if typ == mc.PacketSetCompression {
			sc, _ := mc.DecodeSetCompression(f.Payload)
			_ = conn.SetCompression(int(sc.Threshold))
			continue
		}
		if typ == mc.PacketLoginSuccess {
			break
		}
	}
	info, _ := reg.ID(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation)
	_ = conn.WritePacket(info, []byte("settings, not the acknowledgement"))
	closed(t, c, "a login answered with the wrong packet")
	if pl := tp.Players(""); len(pl) != 0 {
		t.Fatalf("a login that never acknowledged became a player: %+v", pl)
	}

	ok := joinAndPlay(t, tp.addr, "games.test", "After")
	ok.await(t, "hello from B")
}
