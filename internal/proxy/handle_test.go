package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/command"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/player"
)

// A plugin's command acts on its player through the handle alone: Connect
// takes the one route and says how it went in types (connected, already
// there, refused by the target's maintenance or by the network, with the
// rule named), and a plugin message reaches the client.
func TestPlayerHandleConnects(t *testing.T) {
	a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
	lobby := interceptedServer("lobby", config.ModeOffline, a.addr)
	games := interceptedServer("games", config.ModeOffline, b.addr)
	other := interceptedServer("other", config.ModeOffline, b.addr)
	other.Network = "elsewhere"

	type ran struct {
		who player.Player
		res player.ConnectResult
	}
	results := make(chan ran, 1)
	var who player.Player
	r := hooks.NewRegistry()
	hooks.RegisterCommand(r, &command.Command{
		Name: "go", Args: []command.Arg{{Name: "server"}},
		Run: func(ctx context.Context, inv command.Invocation) error {
			results <- ran{inv.Source, inv.Source.Connect(ctx, inv.Args[0])}
			return nil
		},
	})
	hooks.RegisterCommand(r, &command.Command{
		Name: "ping",
		Run: func(ctx context.Context, inv command.Invocation) error {
			return inv.Source.SendPluginMessage("test:pong", []byte("pong from the handle"))
		},
	})
	d, err := hooks.New(hooks.Options{Handlers: r})
	if err != nil {
		t.Fatal(err)
	}
	tp := startProxyOpts(t, nil, Options{Hooks: d}, lobby, games, other)
	pc := joinAndPlay(t, tp.addr, "lobby.test", "Steve")
	pc.await(t, "hello from A")

	run := func(line string) player.ConnectResult {
		t.Helper()
		pc.typeCommand(t, line)
		select {
		case r := <-results:
			who = r.who
			return r.res
		case <-time.After(10 * time.Second):
			t.Fatalf("/%s: no result", line)
			return player.ConnectResult{}
		}
	}
	if res := run("go games"); res.Status != player.Connected || res.Server != "games" {
		t.Fatalf("/go games: %+v, want connected to games", res)
	}
	pc.await(t, "hello from B")
	if who.Name() != "Steve" || who.Server() != "games" || who.ID() == 0 || who.Proven().Mojang {
		t.Fatalf("the handle says %s on %q (id %d, proof %+v)", who.Name(), who.Server(), who.ID(), who.Proven())
	}
	if res := run("go games"); res.Status != player.AlreadyThere {
		t.Fatalf("/go games again: %+v, want already there", res)
	}
	if err := tp.SetMaintenance("lobby", true); err != nil {
		t.Fatal(err)
	}
	if res := run("go lobby"); res.Status != player.Refused || res.Rule != ruleMaintenance || res.Reason == "" {
		t.Fatalf("/go lobby in maintenance: %+v, want refused by maintenance with a reason", res)
	}
	if res := run("go other"); res.Status != player.Refused || res.Rule != ruleNetwork {
		t.Fatalf("/go other (another network): %+v, want refused by the network", res)
	}
	if res := run("go nowhere"); res.Status != player.Refused || res.Rule != ruleNetwork {
		t.Fatalf("/go nowhere: %+v, want refused by the network", res)
	}
	if who.Server() != "games" {
		t.Fatalf("after refusals he is on %q, want games", who.Server())
	}
	pc.typeCommand(t, "ping")
	pc.await(t, "pong from the handle")
}
