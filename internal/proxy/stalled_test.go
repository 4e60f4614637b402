package proxy

import (
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
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
