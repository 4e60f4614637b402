package hookstest

import (
	"context"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/hooks"
)

// login plays a passthrough login's event points the way the proxy calls them (the
// template for the proxy's own tests: replace this function by a real client
// logging in through the proxy). It returns the server the player ended on, or the
// reason they were refused.
func login(d *hooks.Dispatcher, name string, up map[string]bool) (server, refused string) {
	ctx := context.Background()
	c := hooks.Connection{ID: d.NextConnection(), Host: "play.example.com", ProxyMode: "passthrough"}
	profile := hooks.Profile{Name: name}
	outcome := hooks.OutcomeDenied
	defer func() {
		hooks.Fire(d, ctx, &hooks.Disconnect{Connection: c, Profile: profile, Server: server, Outcome: outcome})
	}()
	if res := hooks.Fire(d, ctx, &hooks.PreLogin{Connection: c, Server: "lobby", Username: name}); res.Denied() {
		return "", res.Reason
	}
	if res := hooks.Fire(d, ctx, &hooks.Login{Connection: c, Server: "lobby", Profile: profile}); res.Denied() {
		return "", res.Reason
	}
	hooks.Fire(d, ctx, &hooks.PostLogin{Connection: c, Server: "lobby", Profile: profile})
	target := "lobby"
	if res := hooks.Fire(d, ctx, &hooks.ChooseInitialServer{Connection: c, Profile: profile, Server: target}); res.Redirected() {
		target = res.Server
	}
	for range 3 { // a bounded number of redirects
		res := hooks.Fire(d, ctx, &hooks.ServerPreConnect{Connection: c, Profile: profile, Server: target})
		if res.Denied() {
			return "", res.Reason
		}
		if res.Redirected() {
			target = res.Server
		}
		if !up[target] {
			k := hooks.Fire(d, ctx, &hooks.KickedFromServer{Connection: c, Profile: profile, Server: target, Cause: hooks.CauseUnreachable, Reason: "down", DuringLogin: true})
			if k.Redirected() {
				target = k.Server
				continue
			}
			outcome = hooks.OutcomeFailed
			return "", "down"
		}
		hooks.Fire(d, ctx, &hooks.ServerConnected{Connection: c, Profile: profile, Server: target, Address: target + ":25565"})
		outcome = hooks.OutcomePlayed
		return target, ""
	}
	outcome = hooks.OutcomeFailed
	return "", "too many redirects"
}

// TestHarness drives the recorder, a deciding webhook and the order checker
// together over simulated logins.
func TestHarness(t *testing.T) {
	wh := NewWebhookServer(t, "secret")
	wh.Deny("griefer", "go away")
	wh.Redirect("vip", "vip-lobby")
	rec := NewRecorder()
	rec.Redirect(hooks.KindKickedFromServer, "alice", "fallback")
	reg := hooks.NewRegistry()
	rec.Register(reg)
	d := New(t, hooks.Options{Handlers: reg, Webhooks: []config.Webhook{{
		URL: wh.URL, Secret: "secret", Decide: true, Events: []string{"pre_login", "server_pre_connect"},
	}}})
	up := map[string]bool{"vip-lobby": true, "fallback": true} // lobby is down

	cases := []struct{ player, server, refused string }{
		{"griefer", "", "go away"},
		{"vip", "vip-lobby", ""},
		{"alice", "fallback", ""},
		{"bob", "", "down"},
	}
	for _, c := range cases {
		server, refused := login(d, c.player, up)
		if server != c.server || refused != c.refused {
			t.Errorf("%s: on %q, refused %q; want %q, %q", c.player, server, refused, c.server, c.refused)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := rec.Wait(ctx, c.player, hooks.KindDisconnect); err != nil {
			t.Error(err)
		}
		cancel()
		if err := CheckOrder(rec.Kinds(c.player), true); err != nil {
			t.Errorf("%s: %v", c.player, err)
		}
	}
	for _, dl := range wh.Deliveries() {
		if !dl.Signed {
			t.Errorf("unsigned delivery %s", dl.ID)
		}
	}
}
