package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

func writeServerFile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Reload adds, changes and removes servers; a broken file keeps its previous
// version; a domain conflict rejects the whole reload; live sessions are untouched.
func TestReloadServers(t *testing.T) {
	a := startBackend(t, fakemc.Options{Name: "a", MOTD: "motd a"})
	b := startBackend(t, fakemc.Options{Name: "b", MOTD: "motd b"})
	dir := t.TempDir()
	writeServerFile(t, dir, "lobby.toml", "domains = [\"lobby.com\"]\naddresses = [\""+a.Addr()+"\"]\n")
	tp := startProxy(t, func(c *config.Config) {
		c.ServersPath = dir
		servers, errs := config.LoadServersDir(dir, c)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		c.Servers = servers
		c.StatusCache.TTL = 0
	})
	motd := func(host string) string { return mc.DescriptionText(pingVia(t, tp.addr, host).Description) }
	if got := motd("lobby.com"); got != "motd a" {
		t.Fatalf("before reload: %q", got)
	}

	// Change lobby to b, add survival.
	writeServerFile(t, dir, "lobby.toml", "domains = [\"lobby.com\"]\naddresses = [\""+b.Addr()+"\"]\n")
	writeServerFile(t, dir, "survival.toml", "domains = [\"smp.com\"]\naddresses = [\""+a.Addr()+"\"]\n")
	if err := tp.ReloadServers("test"); err != nil {
		t.Fatal(err)
	}
	if got := motd("lobby.com"); got != "motd b" {
		t.Fatalf("changed server: %q", got)
	}
	if got := motd("smp.com"); got != "motd a" {
		t.Fatalf("added server: %q", got)
	}

	// A broken file is rejected with its error; its previous version stays.
	writeServerFile(t, dir, "lobby.toml", "domains = [\"lobby.com\"]\nadresses = [\"x\"]\n")
	err := tp.ReloadServers("test")
	if err == nil || !strings.Contains(err.Error(), "lobby.toml:2") {
		t.Fatalf("broken file error should name file and line: %v", err)
	}
	if got := motd("lobby.com"); got != "motd b" {
		t.Fatalf("broken file must keep the old version: %q", got)
	}

	// A conflict rejects the whole reload.
	writeServerFile(t, dir, "lobby.toml", "domains = [\"lobby.com\"]\naddresses = [\""+b.Addr()+"\"]\n")
	writeServerFile(t, dir, "thief.toml", "domains = [\"smp.com\"]\naddresses = [\""+b.Addr()+"\"]\n")
	if err := tp.ReloadServers("test"); err == nil || !strings.Contains(err.Error(), "already claimed") {
		t.Fatalf("conflict: %v", err)
	}
	if got := motd("smp.com"); got != "motd a" {
		t.Fatalf("after a rejected reload the old routing stays: %q", got)
	}

	// Removing a file removes the server.
	os.Remove(filepath.Join(dir, "thief.toml"))
	os.Remove(filepath.Join(dir, "survival.toml"))
	if err := tp.ReloadServers("test"); err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.Server("survival"); ok {
		t.Fatal("removed server still routed")
	}
	if got := motd("smp.com"); !strings.Contains(got, "no server is configured") {
		t.Fatalf("removed server's domain: %q", got)
	}
}

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
	for tp.active.Load() < 2 && time.Now().Before(deadline) {
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
	if got := tp.active.Load(); got != 2 {
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
