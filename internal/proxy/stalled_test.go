package proxy

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// A player who stops reading holds up no one: their server's frames pile up
// in the sockets until the relay towards them waits (off the event loop, where
// relays run when few sockets wake at once), while another player on the same
// proxy goes on being served; once the first reads again, every frame arrives,
// in order. With compression off on both sides the frames are relayed as they
// came (written from the loop); with it on for the client only, each is
// re-framed (which the loop hands off). Only the relay towards the client is
// driven to a full socket: the backend's receive buffer (autotuned to tens of
// MiB on Linux) takes the 8 MB whole, so the relay towards the server never waits.
func TestAStalledClientHoldsUpNoOne(t *testing.T) {
	for _, threshold := range []int{-1, 256} {
		t.Run(fmt.Sprintf("client_threshold_%d", threshold), func(t *testing.T) {
			a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
			lobby, games := networkServers(a, b)
			tp := startProxy(t, func(c *config.Config) { c.CompressionThreshold = threshold }, lobby, games)
			stalled := joinAndPlay(t, tp.addr, "lobby.test", "Stalled")
			stalled.await(t, "hello from A")
			other := joinAndPlay(t, tp.addr, "games.test", "Other")
			other.await(t, "hello from B")

			// The backend echoes each plugin message. The stalled client reads
			// none of them: its message queue is full already, so its reader
			// waits, and its socket takes little (a 32 KiB receive buffer). 8 MB
			// of echoes then fill the proxy's socket towards it (at most 4 MiB
			// here), and the relay towards the client has to wait.
			for len(stalled.messages) < cap(stalled.messages) {
				stalled.messages <- "filler"
			}
			_ = stalled.net.(*net.TCPConn).SetReadBuffer(32 << 10)
			const n = 1000
			id, _ := stalled.reg.ID(mc.PlayState, mc.Serverbound, mc.PacketPluginMessage)
			var sent atomic.Int64
			go func() {
				pad := strings.Repeat("x", 8000)
				for i := range n {
					payload, _ := mc.PluginMessage{Channel: "test:echo", Data: fmt.Appendf(nil, "m%d %s", i, pad)}.AppendPayload(nil, modernProtocol)
					if stalled.conn.WritePacket(id, payload) != nil {
						return
					}
					sent.Add(1)
					// In spurts, as a game's traffic comes: the relays park
					// between them, and wake on the event loop.
					time.Sleep(200 * time.Microsecond)
				}
			}()
			// Until the sockets between are full: the sender stops, or is done.
			deadline := time.Now().Add(20 * time.Second)
			var before int64
			for still := 0; still < 5 && before < n; {
				time.Sleep(40 * time.Millisecond)
				if now := sent.Load(); now != before {
					before, still = now, 0
				} else {
					still++
				}
				if time.Now().After(deadline) {
					t.Fatalf("the sender never stopped (%d of %d messages sent)", sent.Load(), n)
				}
			}

			for range 3 { // the other player hears from their server all along
				other.drain()
				other.await(t, "hello from B")
			}

			next := 0
			deadline = time.Now().Add(30 * time.Second)
			for next < n {
				select {
				case m, ok := <-stalled.messages:
					if !ok {
						t.Fatalf("the stalled client's connection ended after %d echoes", next)
					}
					if !strings.HasPrefix(m, "m") {
						continue // its server's hellos
					}
					if want := fmt.Sprintf("m%d ", next); !strings.HasPrefix(m, want) {
						t.Fatalf("echo %d reads %.12q", next, m)
					}
					next++
				case <-time.After(time.Until(deadline)):
					t.Fatalf("%d of %d echoes arrived once the client read again (%d sent)", next, n, sent.Load())
				}
			}
		})
	}
}

// A player who leaves while their server's relay is still replacing the
// server they lost holds up no one: the session's end (run on the event loop
// when the goodbye woke it there) waits for nothing, another player goes on
// being served, and the player is counted out once, when the replacement
// gives up.
func TestALeaverDuringAFallbackHoldsUpNoOne(t *testing.T) {
	a, c := startPlayBackend(t, "A"), startPlayBackend(t, "C")
	// The fallback accepts and then says nothing, so the move to it waits.
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			conn, err := hung.Accept()
			if err != nil {
				return
			}
			accepted <- conn
		}
	}()
	t.Cleanup(func() { hung.Close() })
	games := interceptedServer("games", config.ModeOffline, a.addr)
	lobby := interceptedServer("lobby", config.ModeOffline, hung.Addr().String())
	games.Network, lobby.Network = "main", "main"
	games.FallbackServers = []string{"lobby"}
	other := interceptedServer("other", config.ModeOffline, c.addr)
	// Compression off on both sides: frames are relayed as they came, so the
	// relay (and the end) runs on the event loop. The move waits until the
	// test ends it, longer than the watcher waits for a message: an end that
	// waited for it on the loop would hold the watcher's relay up past that.
	tp := startProxy(t, func(c *config.Config) {
		c.CompressionThreshold = -1
		c.ConnectTimeout = config.Duration(time.Minute)
	}, games, lobby, other)

	leaver := joinAndPlay(t, tp.addr, "games.test", "Leaver")
	leaver.await(t, "hello from A")
	watcher := joinAndPlay(t, tp.addr, "other.test", "Watcher")
	watcher.await(t, "hello from C")

	a.closeAll()
	var held net.Conn
	select {
	case held = <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the relay never tried the fallback")
	}
	leaver.net.Close()
	for range 3 {
		watcher.drain()
		watcher.await(t, "hello from C")
	}
	if n := len(tp.Players("")); n != 2 {
		t.Fatalf("%d players listed while the leaver's move is pending, want 2 (counted out when it gives up)", n)
	}

	held.Close() // the move fails: the relay gives up and the session is over
	deadline := time.Now().Add(10 * time.Second)
	for {
		info := tp.Players("")
		if len(info) == 1 && info[0].Name == "Watcher" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("players after the move gave up: %+v", info)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range []string{"games", "lobby", "other"} {
		s, _ := tp.Server(id, time.Now())
		if want := map[string]int{"other": 1}[id]; s.Players != want {
			t.Fatalf("%s counts %d players, want %d", id, s.Players, want)
		}
	}
	watcher.drain()
	watcher.await(t, "hello from C")
}

// A plugin's Disconnect handler that takes its time holds up no one: the end
// of a session that calls it runs on a goroutine of its own, not on the loop
// that relays every player (passthrough's forwarder, or the intercepted
// relays' Poller).
func TestASlowDisconnectHandlerHoldsUpNoOne(t *testing.T) {
	for _, mode := range []config.ProxyMode{config.ModePassthrough, config.ModeOffline} {
		t.Run(string(mode), func(t *testing.T) {
			b := startPlayBackend(t, "B")
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			gone := make(chan string, 4)
			r := hooks.NewRegistry()
			hooks.On(r, "slow", func(ctx context.Context, e *hooks.Disconnect) {
				gone <- e.Profile.Name
				<-release // past the watcher's patience below, well within the handler's timeout
			}, hooks.Timeout(time.Minute))
			d, err := hooks.New(hooks.Options{Handlers: r})
			if err != nil {
				t.Fatal(err)
			}
			srv := interceptedServer("s", mode, b.addr)
			tp := startProxyOpts(t, func(c *config.Config) { c.CompressionThreshold = -1 }, Options{Hooks: d}, srv)
			leaver := joinAndPlay(t, tp.addr, "s.test", "Leaver")
			leaver.await(t, "hello from B")
			// One watcher per forwarder shard (sessions are dealt to them in
			// turn), so one shares the leaver's loop in either mode.
			var watchers []*playClient
			for i := range runtime.GOMAXPROCS(0) {
				w := joinAndPlay(t, tp.addr, "s.test", fmt.Sprintf("Watcher%d", i))
				w.await(t, "hello from B")
				watchers = append(watchers, w)
			}

			leaver.net.Close()
			select {
			case name := <-gone:
				if name != "Leaver" {
					t.Fatalf("Disconnect for %q", name)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no Disconnect for the leaver")
			}
			for range 3 {
				for _, w := range watchers {
					w.drain()
					w.await(t, "hello from B")
				}
			}
		})
	}
}
