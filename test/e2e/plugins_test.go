package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust"
	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// The plugin surfaces with real clients: a plugin's /ping answers; a
// serverbound packet filter drops chat lines with a banned word before the
// backend sees them; a clientbound filter that panics on every keep-alive is
// turned off for the session and the player plays on; a PermissionsSetup
// handler grants an offline player /send; and an offline player listed in
// [permissions] admins is not recognised (anyone can type that name), so his
// /kick goes to the backend untouched.
func TestRealClientPluginSurfaces(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	for _, v := range []string{"1.12.2", "1.20.4"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			start := func() *nmp.Server {
				return h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true, Commands: true})
			}
			lobbyB, gamesB := start(), start()
			tag := strings.ReplaceAll(v, ".", "-")
			mk := func(id string, b *nmp.Server) *config.Server {
				s := intercepted(config.ModeOffline, id+"-plug-"+tag+".e2e.test", b.Addr)
				s.ID, s.Network = id, "main"
				return s
			}
			lobby, games := mk("lobby", lobbyB), mk("games", gamesB)

			r := infrarust.NewRegistry()
			infrarust.RegisterCommand(r, &infrarust.Command{
				Name: "ping",
				Run: func(ctx context.Context, inv infrarust.CommandInvocation) error {
					inv.Source.Tell("pong from " + inv.Source.Server())
					return nil
				},
			})
			infrarust.OnPacket(r, "no-bad-words", infrarust.Serverbound, []string{"chat_message"}, func(p *infrarust.Packet) {
				if strings.Contains(string(p.Payload), "badword") {
					p.Drop()
				}
			})
			var panics atomic.Int32
			infrarust.OnPacket(r, "broken", infrarust.Clientbound, []string{"keep_alive"}, func(p *infrarust.Packet) {
				panics.Add(1)
				panic("a plugin bug")
			})
			infrarust.On(r, "grant", func(ctx context.Context, e *infrarust.PermissionsSetup) {
				if e.Profile.Name == "Pat" {
					base := e.Permission
					e.Permission = func(perm string) bool { return perm == "infrarust.command.send" || base(perm) }
				}
			})
			proxyAddr, adminURL := startWithPlugins(t, func(c *config.Config) {
				c.Permissions.Admins = []string{"Eve"}
			}, r, lobby, games)
			api := admin.NewClient(adminURL, e2eAdminKey)
			client := h.StartClient(t)

			patOpts := heldLogin(proxyAddr, lobby.Domains[0], v, "Pat")
			patOpts.Commands = []string{"/ping", "a badword here", "fine words", "/send Pat games"}
			patOpts.CommandGap = 500 * time.Millisecond
			pat := goLogin(ctx, client, patOpts)
			if _, err := gamesB.Wait(ctx, nmp.Match("join", "Pat")); err != nil {
				t.Fatalf("the /send PermissionsSetup granted did not move Pat: %v", err)
			}
			waitAlive(ctx, t, gamesB, "Pat", 2)

			eveOpts := heldLogin(proxyAddr, lobby.Domains[0], v, "Eve")
			eveOpts.Commands = []string{"/kick Pat"}
			eve := goLogin(ctx, client, eveOpts)
			if _, err := lobbyB.Wait(ctx, func(e nmp.Event) bool { return e.Event == "command" && e.Username == "Eve" && e.Command == "kick Pat" }); err != nil {
				t.Fatalf("an offline \"admin\"'s /kick did not go to the backend: %v", err)
			}
			for _, name := range []string{"Pat", "Eve"} {
				if _, err := api.KickPlayer(ctx, name, kickReason); err != nil {
					t.Fatal(err)
				}
			}
			patRes := kickedByUs(t, "Pat", pat)
			kickedByUs(t, "Eve", eve)

			if !containsLine(patRes.Chats, "pong from lobby") {
				t.Errorf("the plugin's /ping did not answer: %q", patRes.Chats)
			}
			var fine bool
			for _, e := range lobbyB.Events() {
				if e.Event == "chat" && strings.Contains(e.Message, "badword") {
					t.Errorf("the filter let a banned word through: %+v", e)
				}
				if e.Event == "command" && (e.Command == "ping" || strings.HasPrefix(e.Command, "send")) {
					t.Errorf("a command the proxy handled reached the backend: %+v", e)
				}
				fine = fine || (e.Event == "chat" && e.Message == "fine words")
			}
			if !fine {
				t.Error("the filter dropped a clean chat line too")
			}
			// Off after its first panic in each of the two sessions.
			if n := panics.Load(); n < 1 || n > 2 {
				t.Errorf("the panicking filter ran %d times, want once per session (2 sessions)", n)
			}
		})
	}
}
