package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

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
