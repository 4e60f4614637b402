package proxy

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/bungeechannel"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/hooks"
)

// A Go handler's redirect is a move like any other: a KickedFromServer redirect
// to a server whose ip_filter refuses the player sends him on to the next
// fallback, and a ChooseInitialServer redirect to it refuses the login with the
// rule's words; neither backend of the filtered server ever sees him.
func TestHandlerRedirectsHonourTheTargetsRules(t *testing.T) {
	lobbyB, gamesB, secretB := startPlayBackend(t, "LOBBY"), startPlayBackend(t, "GAMES"), startPlayBackend(t, "SECRET")
	lobby, games := networkServers(lobbyB, gamesB)
	secret := interceptedServer("secret", config.ModeOffline, secretB.addr)
	secret.Network = "main"
	secret.IPFilter.Deny = []string{"127.0.0.0/8"}
	games.FallbackServers = []string{"lobby"}
	reg := hooks.NewRegistry()
	hooks.On(reg, "to-secret", func(_ context.Context, e *hooks.KickedFromServer) { e.Redirect("secret") })
	hooks.On(reg, "first-secret", func(_ context.Context, e *hooks.ChooseInitialServer) {
		if e.Profile.Name == "Eve" {
			e.Redirect("secret")
		}
	})
	d, err := hooks.New(hooks.Options{Handlers: reg})
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	sub := bus.Subscribe(16, events.PlayerMoveRefused)
	defer sub.Close()
	tp := startProxyOpts(t, nil, Options{Bus: bus, Hooks: d}, lobby, games, secret)

	pc := joinAndPlay(t, tp.addr, "games.test", "Steve")
	pc.await(t, "hello from GAMES")
	gamesB.kickAll("Server restarting")
	pc.drain()
	pc.await(t, "hello from LOBBY")
	ev, err := sub.Next(ctxTimeout(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if m := ev.Data.(events.MoveRefused); m.ToServer != "secret" || m.Rule != ruleIPFilter || m.FromServer != "games" {
		t.Fatalf("refusal event %+v", m)
	}

	eve := joinAndPlay(t, tp.addr, "lobby.test", "Eve")
	select {
	case k := <-eve.kicked:
		if !strings.Contains(k, "not allowed to join secret") {
			t.Fatalf("Eve's kick %q", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a login redirected to a server that refuses the player must be refused")
	}
	if n := secretB.joined.Load(); n != 0 {
		t.Fatalf("secret's backend saw %d players", n)
	}
}

// A backend's BungeeCord Connect and a drain's move are moves like any other: a
// Connect to a server whose ip_filter refuses the player leaves him where he is
// (the refusal is published), and a drain's move skips a fallback server in
// maintenance and takes the next one.
func TestConnectAndDrainMoveHonourTheTargetsRules(t *testing.T) {
	a, secretB, maintB, restB := startPlayBackend(t, "A"), startPlayBackend(t, "SECRET"), startPlayBackend(t, "MAINT"), startPlayBackend(t, "REST")
	lobby := interceptedServer("lobby", config.ModeOffline, a.addr)
	lobby.BungeeCordChannel = true
	secret := interceptedServer("secret", config.ModeOffline, secretB.addr)
	secret.IPFilter.Deny = []string{"127.0.0.0/8"}
	closed := interceptedServer("closed", config.ModeOffline, maintB.addr)
	rest := interceptedServer("rest", config.ModeOffline, restB.addr)
	lobby.FallbackServers = []string{"closed", "rest"}
	bus := events.NewBus()
	sub := bus.Subscribe(16, events.PlayerMoveRefused)
	defer sub.Close()
	tp := startProxyOpts(t, func(c *config.Config) { c.PluginMessaging.BungeeCord = true }, Options{Bus: bus}, lobby, secret, closed, rest)
	pc := joinAndPlay(t, tp.addr, "lobby.test", "Alex")
	pc.await(t, "hello from A")

	connect, _ := bungeechannel.Request{Op: bungeechannel.OpConnect, Server: "secret"}.AppendTo(nil)
	a.toPlayers("bungeecord:main", connect)
	ev, err := sub.Next(ctxTimeout(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if m := ev.Data.(events.MoveRefused); m.ToServer != "secret" || m.Rule != ruleIPFilter || m.Reason != "plugin" {
		t.Fatalf("the Connect's refusal: %+v", m)
	}
	if info := tp.Players(""); len(info) != 1 || info[0].Server != "lobby" || info[0].Address != a.addr {
		t.Fatalf("a refused Connect must leave the player where he was: %+v", info)
	}

	// The drain's move: lobby has no other address, closed is in maintenance.
	if err := tp.SetMaintenance("closed", true); err != nil {
		t.Fatal(err)
	}
	res, err := tp.MovePlayers(context.Background(), "lobby", a.addr)
	if err != nil || res.Moved != 1 {
		t.Fatalf("drain move: %+v, %v", res, err)
	}
	pc.drain()
	pc.await(t, "hello from REST")
	if maintB.joined.Load() != 0 || secretB.joined.Load() != 0 {
		t.Fatalf("a refused server's backend saw the player: closed %d, secret %d", maintB.joined.Load(), secretB.joined.Load())
	}
}

// A player held in the limbo while his server is in maintenance waits through
// the retries without a refusal recorded at each one: soft refusals of a limbo
// exit are the wait itself; only a hard one (a ban meanwhile) is recorded, and
// ends the stay.
func TestLimboRetriesRecordOnlyHardRefusals(t *testing.T) {
	a := startPlayBackend(t, "A")
	s := interceptedServer("closed", config.ModeOffline, a.addr)
	s.LimboHandlers = []config.LimboHandler{config.LimboMaintenance}
	bus := events.NewBus()
	sub := bus.Subscribe(16, events.PlayerMoveRefused)
	defer sub.Close()
	tp := startProxyOpts(t, nil, Options{Bus: bus}, s)
	if err := tp.SetMaintenance("closed", true); err != nil {
		t.Fatal(err)
	}
	pc := joinAndPlay(t, tp.addr, "closed.test", "Waiter")
	pc.awaitJoin(t)
	awaitPlayer(t, tp, "Waiter", "closed", "limbo")
	cn := &conn{ip: netip.MustParseAddr("127.0.0.1"), player: "Waiter", st: tp.state.Load()}
	for range 5 { // what the stay's retries do
		if _, err := tp.limbos.exitLimbo(cn, tp.state.Load().servers["closed"], pass{}, false); err == nil {
			t.Fatal("a join during maintenance succeeded")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if ev, err := sub.Next(ctx); err == nil {
		t.Fatalf("a soft refusal of a limbo exit was recorded: %+v", ev.Data)
	}
}
