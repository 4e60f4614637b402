package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// Shutdown lets a live session finish within the budget, and closes it after.
func TestShutdownDrainsThenCloses(t *testing.T) {
	held := make(chan struct{})
	b := startBackend(t, fakemc.Options{Name: "hold", OnLogin: func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		_, _ = c.Write(loginSuccessFrame())
		close(held)
		_, _ = io.Copy(io.Discard, br) // until the proxy closes the session
	}})
	tp := startProxy(t, nil, newServer("hold", []string{"hold.com"}, b.Addr()))
	c, br, _, err := login(t, tp.addr, "hold.com", "Alex")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-held
	_ = c.SetDeadline(time.Time{})

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = tp.Shutdown(ctx)
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("a session still running at the deadline must be closed and reported: %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the session should have been closed")
	}
	if _, err := net.DialTimeout("tcp", tp.addr, time.Second); err == nil {
		t.Fatal("the listener should be closed after Shutdown")
	}
}

// max_connections: the permit is held for the connection's life; the next client is
// accepted only when one closes.
func TestMaxConnectionsHoldsPermits(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "m", MOTD: "served"})
	tp := startProxy(t, func(c *config.Config) {
		c.MaxConnections = 2
		c.HandshakeTimeout = config.Duration(time.Minute)
	}, newServer("m", []string{"m.com"}, b.Addr()))
	var silent []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
	}
	deadline := time.Now().Add(5 * time.Second)
	for tp.door.active.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// The third client completes TCP (kernel backlog) but waits for a permit.
	third, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	done := make(chan string, 1)
	go func() {
		_ = third.SetDeadline(time.Now().Add(10 * time.Second))
		body, _, err := mc.QueryStatus(third, "m.com", 25565, 767)
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- string(body)
	}()
	if got := tp.door.active.Load(); got != 2 {
		t.Fatalf("%d connections handled with max_connections = 2", got)
	}
	silent[0].Close()
	select {
	case got := <-done:
		if !strings.Contains(got, "served") {
			t.Fatalf("third client after a permit freed: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the third client was never served after a permit was freed")
	}
}

// An intercepted player still on when the grace ends reads [messages]
// shutdown on their screen instead of a dropped connection.
func TestShutdownTellsInterceptedPlayersWhy(t *testing.T) {
	be := startPlayBackend(t, "A")
	srv := interceptedServer("a", config.ModeOffline, be.addr)
	srv.Domains = []string{"a.test"}
	tp := startProxy(t, func(c *config.Config) { c.Messages.Shutdown = "§eUpdating, back in a minute" }, srv)
	pc := joinAndPlay(t, tp.addr, "a.test", "Alex")
	pc.await(t, "hello from A")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := tp.Shutdown(ctx); err != nil && !strings.Contains(err.Error(), "closed") {
		t.Fatal(err)
	}
	expectKick(t, pc, "§eUpdating, back in a minute")
	if el := time.Since(start); el > goodbyeWait+5*time.Second {
		t.Fatalf("shutdown took %v", el)
	}
}
