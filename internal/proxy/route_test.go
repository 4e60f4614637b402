package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/hooks"
)

// Velocity's "try": a login whose server does not answer goes on to the next
// server of its network's order (the routed server's fallback_servers), each
// tried once; a server of another network is never tried, and the player
// reads the last server's words when none takes him, never an address.
func TestLoginTriesTheNextServer(t *testing.T) {
	games := startPlayBackend(t, "GAMES")
	down := interceptedServer("down", config.ModeOffline, deadAddress(t))
	other := interceptedServer("other", config.ModeOffline, startPlayBackend(t, "OTHER").addr)
	next := interceptedServer("games", config.ModeOffline, games.addr)
	down.Network, next.Network, other.Network = "main", "main", "elsewhere"
	down.FallbackServers = []string{"other", "games"}
	lonely := interceptedServer("lonely", config.ModeOffline, deadAddress(t))
	lonely.FallbackServers = []string{"other"}
	tp := startProxy(t, nil, down, other, next, lonely)

	pc := joinAndPlay(t, tp.addr, "down.test", "Steve")
	pc.await(t, "hello from GAMES")
	awaitPlayer(t, tp, "Steve", "games", games.addr)

	lost := joinAndPlay(t, tp.addr, "lonely.test", "Alex")
	select {
	case k := <-lost.kicked:
		if k != lonely.DisconnectMessage || strings.Contains(k, "127.0.0.1") {
			t.Fatalf("a login nothing takes: kicked %q, want %q", k, lonely.DisconnectMessage)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a login nothing takes was not kicked")
	}
}

// SendToLimbo (a KickedFromServer handler's, or a webhook's "limbo" verdict)
// holds the player in the limbo, and the server is tried again until it takes
// him: at login, and once in play.
func TestSendToLimboHoldsAndRetries(t *testing.T) {
	addr := laterAddress(t)
	s := interceptedServer("flaky", config.ModeOffline, addr)
	reg := hooks.NewRegistry()
	hooks.On(reg, "hold", func(_ context.Context, e *hooks.KickedFromServer) { e.SendToLimbo() })
	d, err := hooks.New(hooks.Options{Handlers: reg})
	if err != nil {
		t.Fatal(err)
	}
	tp := startProxyOpts(t, nil, Options{Hooks: d}, s)
	pc := joinAndPlay(t, tp.addr, "flaky.test", "Steve")
	pc.awaitJoin(t) // the limbo's world: the server is down
	awaitPlayer(t, tp, "Steve", "flaky", "limbo")
	b := startPlayBackendAt(t, addr, "FLAKY", 0)
	pc.await(t, "hello from FLAKY")
	awaitPlayer(t, tp, "Steve", "flaky", addr)

	// In play: the server kicks him; the handler holds him until it takes him again.
	b.kickAll("restarting")
	pc.awaitJoin(t) // the limbo again
	pc.drain()
	pc.await(t, "hello from FLAKY")
}
