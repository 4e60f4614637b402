package proxy

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
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
// client, and a move, which needs the client's answer, completes.
func TestHeldPlayersHoldNoGoroutine(t *testing.T) {
	a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
	lobby, games := networkServers(a, b)
	tp := startProxy(t, nil, lobby, games)
	var clients []*playClient
	for i := range 5 {
		pc := joinAndPlay(t, tp.addr, "games.test", fmt.Sprintf("Held%d", i))
		pc.await(t, "hello from B")
		clients = append(clients, pc)
	}
	parked := func(why string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for sessionGoroutines() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d goroutines still in a session", why, sessionGoroutines())
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
