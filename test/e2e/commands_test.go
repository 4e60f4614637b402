package e2e

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// commandVersions span the chat packet's forms: chat before 1.19, chat_command
// 1.19+, with last-seen acknowledgements from 1.19.3; completion before 1.13
// (legacy answers) and the command tree from 1.13.
var commandVersions = []string{"1.8.8", "1.12.2", "1.16.5", "1.19.4", "1.20.4", "1.21.4"}

// Players and staff drive the network from the game. Pat, a player, types
// /send (not his: the backend gets it, the proxy stays invisible), /say (the
// backend's) and /server games (his: he lands on games, and games' keep-alives and
// plugin messages reach him), and asks the completion of "/server ". Boss, an
// admin recognised after Mojang authentication, lists everyone with /glist all and
// sends Pat back to the lobby with /send. The command tree each client receives
// carries the proxy's commands that player may use, merged into the backend's.
func TestRealClientCommands(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	for _, v := range commandVersions {
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
				s := intercepted(config.ModeClientOnly, id+"-cmd-"+tag+".e2e.test", b.Addr)
				s.ID, s.Network = id, "main"
				return s
			}
			lobby, games := mk("lobby", lobbyB), mk("games", gamesB)
			ss := nmp.StartSessionServer(t)
			proxyAddr, adminURL := startWithAdminWith(t, func(c *config.Config) {
				c.Auth.SessionServer = ss.URL
				c.Permissions.Admins = []string{"Boss"}
			}, lobby, games)
			api := admin.NewClient(adminURL, e2eAdminKey)
			client := h.StartClient(t)
			online := func(name string) *nmp.OnlineLogin {
				token, profile := ss.AddProfile(name)
				return &nmp.OnlineLogin{SessionServer: ss.URL, AccessToken: token, ProfileID: profile.ID}
			}
			legacy := v == "1.8.8" || v == "1.12.2"

			patOpts := heldLogin(proxyAddr, lobby.Domains[0], v, "Pat")
			patOpts.Online = online("Pat")
			patOpts.Commands = []string{"/send Boss games", "/say hello there", "/server games"}
			patOpts.Tab = []string{"/server "}
			if legacy {
				patOpts.Tab = append(patOpts.Tab, "/s")
			}
			patOpts.CommandGap = 600 * time.Millisecond
			pat := goLogin(ctx, client, patOpts)

			// A player's /send is not the proxy's for him: the backend gets it as typed.
			if _, err := lobbyB.Wait(ctx, func(e nmp.Event) bool {
				return e.Event == "command" && e.Username == "Pat" && e.Command == "send Boss games"
			}); err != nil {
				t.Fatalf("the lobby never got Pat's /send: %v", err)
			}
			if _, err := lobbyB.Wait(ctx, func(e nmp.Event) bool { return e.Event == "command" && e.Command == "say hello there" }); err != nil {
				t.Fatalf("a backend command did not reach the backend: %v", err)
			}
			if _, err := gamesB.Wait(ctx, nmp.Match("join", "Pat")); err != nil {
				t.Fatalf("/server games did not move Pat: %v", err)
			}
			waitAlive(ctx, t, gamesB, "Pat", 2)

			bossOpts := heldLogin(proxyAddr, lobby.Domains[0], v, "Boss")
			bossOpts.Online = online("Boss")
			bossOpts.Commands = []string{"/glist all", "/send Pat lobby"}
			bossOpts.CommandGap = 600 * time.Millisecond
			boss := goLogin(ctx, client, bossOpts)
			seen := 0
			if _, err := lobbyB.Wait(ctx, func(e nmp.Event) bool {
				if e.Event == "join" && e.Username == "Pat" {
					seen++
				}
				return seen == 2
			}); err != nil {
				t.Fatalf("Boss's /send did not bring Pat back to the lobby: %v", err)
			}
			waitAlive(ctx, t, lobbyB, "Pat", 3)
			// Boss is told once the move is done, right after it is counted; on a
			// loaded machine Pat's client can be faster than that.
			for metric(ctx, t, adminURL, `infrarust_moves_total{outcome="moved",reason="send"}`) < 1 {
				select {
				case <-ctx.Done():
					t.Fatal("Boss's /send was never counted")
				case <-time.After(20 * time.Millisecond):
				}
			}

			for _, name := range []string{"Pat", "Boss"} {
				if _, err := api.KickPlayer(ctx, name, kickReason); err != nil {
					t.Fatal(err)
				}
			}
			patRes, bossRes := kickedByUs(t, "Pat", pat), kickedByUs(t, "Boss", boss)

			for _, srv := range []*nmp.Server{lobbyB, gamesB} {
				for _, e := range srv.Events() {
					if e.Event == "command" && (strings.HasPrefix(e.Command, "server") || e.Username == "Boss") {
						t.Errorf("a proxy command reached a backend: %+v", e)
					}
				}
			}
			if !containsLine(bossRes.Chats, "[games] (1): Pat") || !containsLine(bossRes.Chats, "Sent 1 of 1 to lobby") {
				t.Errorf("Boss's /glist all and /send answers are missing: %q", bossRes.Chats)
			}
			if !containsLine(patRes.Chats, "Connecting you to games") {
				t.Errorf("Pat was not told he is moved: %q", patRes.Chats)
			}
			if len(patRes.TabResults) == 0 || !slices.Equal(patRes.TabResults[0].Matches, []string{"games", "lobby"}) {
				t.Errorf("the completion of \"/server \" = %+v, want games and lobby", patRes.TabResults)
			} else if !legacy && (patRes.TabResults[0].Start == nil || *patRes.TabResults[0].Start != len("/server ")) {
				t.Errorf("the completion starts at %v, want %d", patRes.TabResults[0].Start, len("/server "))
			}
			if legacy {
				if len(patRes.TabResults) < 2 || !slices.Equal(patRes.TabResults[1].Matches, []string{"/say", "/server"}) {
					t.Errorf("the root completion of \"/s\" = %+v, want the backend's /say and the proxy's /server", patRes.TabResults)
				}
				return
			}
			for _, want := range []string{"say", "server", "glist", "find", "tp"} {
				if !slices.Contains(patRes.CommandRoots, want) {
					t.Errorf("Pat's command tree lacks %q: %v", want, patRes.CommandRoots)
				}
			}
			if slices.Contains(patRes.CommandRoots, "send") {
				t.Errorf("Pat's command tree offers /send: %v", patRes.CommandRoots)
			}
			for _, want := range []string{"send", "kick", "broadcast", "infrarust", "ir", "say"} {
				if !slices.Contains(bossRes.CommandRoots, want) {
					t.Errorf("Boss's command tree lacks %q: %v", want, bossRes.CommandRoots)
				}
			}
		})
	}
}

// containsLine reports whether a chat line, without its § formatting codes,
// contains part.
func containsLine(lines []string, part string) bool {
	for _, l := range lines {
		if strings.Contains(formatCode.ReplaceAllString(l, ""), part) {
			return true
		}
	}
	return false
}

var formatCode = regexp.MustCompile(`§.`)

// /hub (alias /lobby), once enabled, takes a real client to his network's
// lobby (the first fallback of the server he is on) and only there: a
// player on a network without one is told so, and his backend never sees
// the line.
func TestRealClientHub(t *testing.T) {
	h := nmp.Setup(t)
	const v = "1.21.4"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := func() *nmp.Server {
		return h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, Commands: true})
	}
	lobbyB, gamesB, soloB := start(), start(), start()
	lobby := intercepted(config.ModeOffline, "lobby-hub.e2e.test", lobbyB.Addr)
	lobby.ID, lobby.Network = "lobby", "main"
	games := intercepted(config.ModeOffline, "games-hub.e2e.test", gamesB.Addr)
	games.ID, games.Network, games.FallbackServers = "games", "main", []string{"lobby"}
	solo := intercepted(config.ModeOffline, "solo-hub.e2e.test", soloB.Addr)
	solo.ID, solo.Network = "solo", "other"
	proxyAddr, adminURL := startWithAdminWith(t, func(c *config.Config) { c.Commands.Hub.Enabled = true }, lobby, games, solo)
	api := admin.NewClient(adminURL, e2eAdminKey)
	client := h.StartClient(t)

	patOpts := heldLogin(proxyAddr, games.Domains[0], v, "Pat")
	patOpts.Commands, patOpts.CommandGap = []string{"/hub"}, 600*time.Millisecond
	pat := goLogin(ctx, client, patOpts)
	if _, err := lobbyB.Wait(ctx, nmp.Match("join", "Pat")); err != nil {
		t.Fatalf("/hub did not take Pat from games to the lobby: %v", err)
	}
	solOpts := heldLogin(proxyAddr, solo.Domains[0], v, "Sol")
	solOpts.Commands, solOpts.CommandGap = []string{"/lobby", "/say after"}, 600*time.Millisecond
	sol := goLogin(ctx, client, solOpts)
	if _, err := soloB.Wait(ctx, func(e nmp.Event) bool { return e.Event == "command" && e.Command == "say after" }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Pat", "Sol"} {
		if _, err := api.KickPlayer(ctx, name, "e2e: done"); err != nil {
			t.Fatal(err)
		}
	}
	p := kickedByUs(t, "Pat", pat)
	if !slices.ContainsFunc(p.CommandTrees, func(tree []string) bool { return slices.Contains(tree, "hub") && slices.Contains(tree, "lobby") }) {
		t.Errorf("Pat's command lists lack /hub and /lobby: %v", p.CommandTrees)
	}
	s := kickedByUs(t, "Sol", sol)
	if !slices.ContainsFunc(s.Chats, func(l string) bool { return strings.Contains(l, "There is no lobby") }) {
		t.Errorf("Sol was not told his network has no lobby: %q", s.Chats)
	}
	for _, b := range []*nmp.Server{soloB, gamesB} {
		if slices.ContainsFunc(b.Events(), func(e nmp.Event) bool { return e.Event == "command" && (e.Command == "hub" || e.Command == "lobby") }) {
			t.Error("a backend got /hub or /lobby")
		}
	}
}

// A role limited to a server (LuckPerms' server context) follows the player:
// Bob's lobby-staff group gives him /send on the lobby only; his command list
// there has it, the one he gets on games does not, and /send typed on games
// is not the proxy's.
func TestRealClientRolesFollowTheServer(t *testing.T) {
	h := nmp.Setup(t)
	const v = "1.21.4"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := func() *nmp.Server {
		return h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, Commands: true})
	}
	lobbyB, gamesB := start(), start()
	lobby := intercepted(config.ModeOffline, "lobby-ctx.e2e.test", lobbyB.Addr)
	lobby.ID, lobby.Network = "lobby", "main"
	games := intercepted(config.ModeOffline, "games-ctx.e2e.test", gamesB.Addr)
	games.ID, games.Network = "games", "main"
	proxyAddr, adminURL := startWithAdminWith(t, func(c *config.Config) {
		c.Permissions.TrustOfflineAdmins = true
		c.Permissions.Groups = map[string]config.PermissionGroup{
			"lobby-staff": {Permissions: []string{"infrarust.command.send"}, Members: []string{"Bob"}, Servers: []string{"lobby"}},
		}
	}, lobby, games)
	api := admin.NewClient(adminURL, e2eAdminKey)
	client := h.StartClient(t)
	opts := heldLogin(proxyAddr, lobby.Domains[0], v, "Bob")
	opts.Commands, opts.CommandGap = []string{"/server games", "/send Bob lobby", "/say after"}, 800*time.Millisecond
	bob := goLogin(ctx, client, opts)
	if _, err := gamesB.Wait(ctx, func(e nmp.Event) bool { return e.Event == "command" && e.Command == "say after" }); err != nil {
		t.Fatal(err)
	}
	if _, err := api.KickPlayer(ctx, "Bob", "e2e: done"); err != nil {
		t.Fatal(err)
	}
	res := kickedByUs(t, "Bob", bob)
	trees := res.CommandTrees
	if len(trees) < 2 || !slices.Contains(trees[0], "send") || slices.Contains(trees[len(trees)-1], "send") {
		t.Errorf("Bob's command lists: %v; want /send on the lobby, not on games", trees)
	}
	if !slices.ContainsFunc(gamesB.Events(), func(e nmp.Event) bool { return e.Event == "command" && e.Command == "send Bob lobby" }) {
		t.Error("/send on games was taken by the proxy: the lobby's role applied off the lobby")
	}
}
