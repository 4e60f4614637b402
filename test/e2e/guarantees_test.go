package e2e

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust"
	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// connectedLog records the ServerConnected events a compiled-in handler sees.
type connectedLog struct {
	mu   sync.Mutex
	seen []string // "player@server<previous"
}

// await waits (a handler runs beside the move) for a ServerConnected of
// player on server from previous.
func (l *connectedLog) await(ctx context.Context, player, server, previous string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		l.mu.Lock()
		found := slices.Contains(l.seen, player+"@"+server+"<"+previous)
		l.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// joinsOf counts srv's joins of name.
func joinsOf(srv *nmp.Server, name string) int {
	n := 0
	for _, e := range srv.Events() {
		if e.Event == "join" && e.Username == name {
			n++
		}
	}
	return n
}

// Every way into a server asks what that server requires of the player, and
// what the player has proven travels with him (docs/security.md). On one
// network with an open server beside an "auth" lobby, a client_only server
// and a "verify" server, with real clients:
//   - Victim registers on the lobby through its auth limbo; the ServerConnected
//     handlers hear of it (a limbo exit is a move like any other).
//   - While he plays, a bare offline login as Victim on the open server is
//     refused: it proved less than the session it would replace.
//   - An impostor who joined the open server as Victim can neither change nor
//     delete Victim's password, and his /server lobby takes him to the
//     lobby's auth limbo, not its backend: he is kicked when the time to log
//     in is up, and the lobby's backend never sees him.
//   - Victim himself, on the open server, /server lobby then /login: he lands
//     on the lobby.
//   - An offline AdminGuy's /server to the client_only server is refused (he
//     stays where he is, told why); an idle client's /server to the verify
//     server is checked, and fails: neither backend ever sees them.
func TestRealClientEveryWayInAsksForProof(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	for _, v := range gateVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			start := func() *nmp.Server {
				return h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true, Commands: true})
			}
			openB, lobbyB, coB, vvB := start(), start(), start(), start()
			tag := strings.ReplaceAll(v, ".", "-")
			mk := func(id string, mode config.ProxyMode, b *nmp.Server, handlers ...config.LimboHandler) *config.Server {
				s := intercepted(mode, id+"-proof-"+tag+".e2e.test", b.Addr)
				s.ID, s.Network, s.LimboHandlers = id, "main", handlers
				return s
			}
			open := mk("open", config.ModeOffline, openB)
			lobby := mk("lobby", config.ModeOffline, lobbyB, config.LimboAuth)
			co := mk("co", config.ModeClientOnly, coB)
			vv := mk("vv", config.ModeOffline, vvB, config.LimboVerify)

			connected := &connectedLog{}
			r := infrarust.NewRegistry()
			infrarust.On(r, "connected", func(_ context.Context, e *infrarust.ServerConnected) {
				connected.mu.Lock()
				connected.seen = append(connected.seen, e.Profile.Name+"@"+e.Server+"<"+e.Previous)
				connected.mu.Unlock()
			})
			proxyAddr, adminURL := startWithPlugins(t, func(c *config.Config) {
				c.AuthLimbo.Remember = 0 // every client here is 127.0.0.1: nobody is remembered
				c.AuthLimbo.Timeout = config.Duration(5 * time.Second)
				c.AuthLimbo.MaxAttempts = 3
				c.AuthLimbo.Argon2 = config.Argon2{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}
				c.Verify.Mode = config.VerifyAlways
			}, r, open, lobby, co, vv)
			api := admin.NewClient(adminURL, e2eAdminKey)
			refusals := moveRefusals(ctx, t, api)
			client := h.StartClient(t)
			held := func(domain, name string, gap time.Duration, commands ...string) <-chan loginRun {
				o := heldLogin(proxyAddr, domain, v, name)
				o.Commands, o.CommandGap = commands, gap
				return goLogin(ctx, client, o)
			}

			// Victim registers on the lobby, through its limbo.
			owner := held(lobby.Domains[0], "Victim", 300*time.Millisecond, "/register owner-pass1 owner-pass1")
			if _, err := lobbyB.Wait(ctx, nmp.Match("join", "Victim")); err != nil {
				t.Fatalf("Victim never reached the lobby after /register: %v", err)
			}
			waitAlive(ctx, t, lobbyB, "Victim", 2)
			if !connected.await(ctx, "Victim", "lobby", "") {
				t.Errorf("no ServerConnected for Victim on the lobby after /register: %q", connected.seen)
			}

			// A bare offline login as Victim does not replace him.
			bare, err := client.Login(ctx, nmp.LoginOptions{Addr: proxyAddr, ServerHost: open.Domains[0], Version: v, Username: "Victim", Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !bare.Kicked || bare.KickReason != "You are already connected to this proxy!" {
				t.Errorf("a bare login of an online password-proven player: want refused, got %s", bare.Raw)
			}
			if list, err := api.Players(ctx, ""); err != nil || len(list) != 1 || list[0].Server != "lobby" {
				t.Fatalf("Victim must still be on the lobby: %+v, %v", list, err)
			}
			kick(ctx, t, api, "Victim")
			kickedByUs(t, "Victim", owner)

			// The impostor: no account command, and /server lobby is the auth limbo.
			impostor := held(open.Domains[0], "Victim", 1500*time.Millisecond,
				"/changepassword guess-1 stolen-pw1", "/unregister guess-2", "/server lobby")
			run := <-impostor
			if run.err != nil {
				t.Fatal(run.err)
			}
			res := run.res
			if !res.Kicked || res.KickReason != "You took too long to log in." {
				t.Errorf("the impostor moved to the lobby must wait in its auth limbo until the timeout: %s", res.Raw)
			}
			if got := plain(res.Chats); !slices.Contains(got, "Log in to your account first: join a server that asks for your password.") ||
				!slices.Contains(got, "Please log in: /login <password>") {
				t.Errorf("the impostor's chat: %q", got)
			}
			if n := joinsOf(lobbyB, "Victim"); n != 1 {
				t.Fatalf("the lobby's backend saw Victim %d times; only the owner's login may reach it", n)
			}

			// The owner, from the open server, proves himself on the way.
			back := held(open.Domains[0], "Victim", 1500*time.Millisecond, "/server lobby", "/login owner-pass1")
			seen := 0
			if _, err := lobbyB.Wait(ctx, func(e nmp.Event) bool {
				if e.Event == "join" && e.Username == "Victim" {
					seen++
				}
				return seen == 2
			}); err != nil {
				t.Fatalf("Victim's /server lobby and /login did not take him to the lobby: %v", err)
			}
			waitAlive(ctx, t, lobbyB, "Victim", 3)
			if !connected.await(ctx, "Victim", "lobby", "open") {
				t.Errorf("no ServerConnected for Victim's move from the open server to the lobby through its limbo: %q", connected.seen)
			}
			kick(ctx, t, api, "Victim")
			kickedByUs(t, "Victim", back)

			// An offline player never reaches the client_only server.
			adminGuy := held(open.Domains[0], "AdminGuy", 600*time.Millisecond, "/server co", "/say after")
			if m := nextRefusal(ctx, t, refusals); m.Username != "AdminGuy" || m.ToServer != "co" || m.Rule != "proof" || m.Reason != "command" {
				t.Errorf("the refusal of AdminGuy's move: %+v", m)
			}
			// His next line reaching the backend means the refusal's words were
			// written to him before it (the event is published before they are).
			if _, err := openB.Wait(ctx, func(e nmp.Event) bool {
				return e.Event == "command" && e.Username == "AdminGuy" && e.Command == "say after"
			}); err != nil {
				t.Fatal(err)
			}
			if list, err := api.Players(ctx, ""); err != nil || len(list) != 1 || list[0].Server != "open" {
				t.Fatalf("AdminGuy must stay on the open server: %+v, %v", list, err)
			}
			kick(ctx, t, api, "AdminGuy")
			agRes := kickedByUs(t, "AdminGuy", adminGuy)
			if !anyMatch(plain(agRes.Chats), "co needs a Minecraft account signed in with Mojang") {
				t.Errorf("AdminGuy must be told why: %q", agRes.Chats)
			}

			// An idle client is checked on its way to the verify server.
			idle := held(open.Domains[0], "Idle", 600*time.Millisecond, "/server vv")
			run = <-idle
			if run.err != nil {
				t.Fatal(run.err)
			}
			if !run.res.Kicked || !strings.HasPrefix(run.res.KickReason, "Bot verification failed") {
				t.Errorf("an idle client moved to the verify server must fail its check: %s", run.res.Raw)
			}
			if sawPlayer(coB, "AdminGuy") || sawPlayer(vvB, "Idle") {
				t.Fatal("a backend saw a player who had not proven what its server requires")
			}
		})
	}
}

// Networks are how two tenants share a proxy: what a player's commands see
// and complete keeps to his network. Bob plays on network b; Pat, on network
// a, cannot find him, /glist all lists a's servers only (b's player count
// included nowhere), and "/server " and "/find " complete a's servers and
// players only, including a server /server's list would hide.
func TestRealClientNetworksIsolateCommands(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	const v = "1.21.4"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := func() *nmp.Server {
		return h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true, Commands: true})
	}
	aB, a2B, bB := start(), start(), start()
	mk := func(id, network string, b *nmp.Server) *config.Server {
		s := intercepted(config.ModeOffline, id+"-net.e2e.test", b.Addr)
		s.ID, s.Network = id, network
		return s
	}
	hubA, gamesA, hubB := mk("hub-a", "a", aB), mk("games-a", "a", a2B), mk("hub-b", "b", bB)
	proxyAddr, adminURL := startWithAdmin(t, hubA, gamesA, hubB)
	api := admin.NewClient(adminURL, e2eAdminKey)
	client := h.StartClient(t)
	bob := goLogin(ctx, client, heldLogin(proxyAddr, hubB.Domains[0], v, "Bob"))
	waitAlive(ctx, t, bB, "Bob", 1)
	patOpts := heldLogin(proxyAddr, hubA.Domains[0], v, "Pat")
	patOpts.Commands, patOpts.CommandGap = []string{"/find Bob", "/glist all", "/glist hub-b"}, 500*time.Millisecond
	patOpts.Tab = []string{"/server ", "/find "}
	pat := goLogin(ctx, client, patOpts)
	waitAlive(ctx, t, aB, "Pat", 1)
	time.Sleep(3 * time.Second) // his commands and completions are answered
	kick(ctx, t, api, "Pat")
	kick(ctx, t, api, "Bob")
	r := kickedByUs(t, "Pat", pat)
	kickedByUs(t, "Bob", bob)
	chats := plain(r.Chats)
	for _, want := range []string{"Bob is not online.", "There is no server called hub-b.", "There are 1 players online."} {
		if !slices.Contains(chats, want) {
			t.Errorf("Pat's chat lacks %q: %q", want, chats)
		}
	}
	for _, c := range chats {
		if strings.Contains(c, "hub-b") && !strings.Contains(c, "no server called") || strings.Contains(c, "Bob is on") {
			t.Errorf("Pat saw network b: %q", c)
		}
	}
	if len(r.TabResults) != 2 || !slices.Equal(r.TabResults[0].Matches, []string{"games-a", "hub-a"}) || !slices.Equal(r.TabResults[1].Matches, []string{"Pat"}) {
		t.Errorf("Pat's completions: %+v, want network a's servers and players only", r.TabResults)
	}
}

// Guessing is limited per account, not per connection, and registrations per
// address, with real clients: after Victim registers, a second registration
// from the same address is refused; "VICTIM" guesses until his connection is
// kicked, "victim" on a new connection gets one more guess and is then told
// the account cools down: the limit counts the account, whatever the case of
// the name or the connection. (That the owner from an address of his own
// still gets in is TestGuardLimitsGuessesPerAccount's: every client here is
// 127.0.0.1.)
func TestRealClientGuessingLimitedPerAccount(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	const v = "1.21.4"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true})
	lobby := intercepted(config.ModeOffline, "guess.e2e.test", srv.Addr)
	lobby.ID, lobby.LimboHandlers = "lobby", []config.LimboHandler{config.LimboAuth}
	proxyAddr, adminURL := startWithAdminWith(t, func(c *config.Config) {
		c.AuthLimbo.Remember = 0
		c.AuthLimbo.Timeout = config.Duration(5 * time.Second)
		c.AuthLimbo.MaxAttempts = 3
		c.AuthLimbo.MaxAttemptsPerAccount = 4
		c.AuthLimbo.MaxRegistrationsPerIP = 1
		c.AuthLimbo.Argon2 = config.Argon2{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}
	}, lobby)
	api := admin.NewClient(adminURL, e2eAdminKey)
	client := h.StartClient(t)
	typing := func(name string, commands ...string) nmp.LoginResult {
		t.Helper()
		o := heldLogin(proxyAddr, lobby.Domains[0], v, name)
		o.Commands, o.CommandGap = commands, 700*time.Millisecond
		run := <-goLogin(ctx, client, o)
		if run.err != nil {
			t.Fatal(run.err)
		}
		return run.res
	}
	owner := goLogin(ctx, client, func() nmp.LoginOptions {
		o := heldLogin(proxyAddr, lobby.Domains[0], v, "Victim")
		o.Commands, o.CommandGap = []string{"/register owner-pass1 owner-pass1"}, 300*time.Millisecond
		return o
	}())
	waitAlive(ctx, t, srv, "Victim", 2)
	kick(ctx, t, api, "Victim")
	kickedByUs(t, "Victim", owner)

	second := typing("Second", "/register other-pass1 other-pass1")
	if !slices.Contains(plain(second.Chats), "Too many accounts were registered from your address; try again later.") {
		t.Errorf("a second registration from one address: %q", second.Chats)
	}
	first := typing("VICTIM", "/login guess-1", "/login guess-2", "/login guess-3")
	if first.KickReason != "Too many wrong passwords." {
		t.Errorf("the first guesser: %s", first.Raw)
	}
	next := typing("victim", "/login guess-4", "/login guess-5")
	got := plain(next.Chats)
	if !slices.Contains(got, "Wrong password. Attempts left: 2.") || !anyMatch(got, `^Too many wrong passwords for this account: try again in \d+m?\d*s\.$`) {
		t.Errorf("a new connection guessing the same account: %q", got)
	}
	if joinsOf(srv, "Victim")+joinsOf(srv, "VICTIM")+joinsOf(srv, "victim")+joinsOf(srv, "Second") != 1 {
		t.Fatal("the server saw a guesser or a refused registration")
	}
}
