package e2e

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// The auth limbo with real clients of every limbo family: a first visit
// registers in the limbo (after a password that is too short) and lands on
// the server; a reconnect from the same address skips /login; after an
// operator's reset-password (CLI) the player must /login: three wrong
// passwords are refused with the kick text and the server never sees that
// attempt; the right one lets them in. The server sees nobody who has not
// proved their name.
func TestRealClientAuthLimbo(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	bin := infrarustBinary(t)
	for _, v := range networkVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			srv := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true, Commands: true})
			lobby := intercepted(config.ModeOffline, "auth-"+strings.ReplaceAll(v, ".", "-")+".e2e.test", srv.Addr)
			lobby.ID = "lobby"
			lobby.LimboHandlers = []config.LimboHandler{config.LimboAuth}
			proxyAddr, adminURL := startWithAdminWith(t, func(c *config.Config) {
				c.AuthLimbo.MaxAttempts = 3
				// A cheap hash: the commands below are 2 s apart, and at the
				// default cost three hashes under -race on a busy 2-core
				// machine took longer than that (the last answer came after
				// the kick). The cost itself is tested in internal/accounts.
				c.AuthLimbo.Argon2 = config.Argon2{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}
			}, lobby)
			api := admin.NewClient(adminURL, e2eAdminKey)
			e := &authEnv{t: t, ctx: ctx, srv: srv, api: api, client: h.StartClient(t), addr: proxyAddr, host: lobby.Domains[0], version: v}
			joins, login, landed := e.joins, e.login, e.landed
			client := e.client

			// First visit: register in the limbo, then the server.
			r := landed(login("Alice", "/register short short", "/register hunter22pw hunter22pw"), 2)
			if len(r.Worlds) < 2 || !slices.Contains(plain(r.Titles), "Welcome, Alice") {
				t.Errorf("want the limbo with its title, then the server: %s", r.Raw)
			}
			for _, want := range []string{"Please register: /register <password> <password>", "A password needs at least 8 characters.", "Registered. Welcome!"} {
				if !slices.Contains(plain(r.Chats), want) {
					t.Errorf("chat %q missing: %q", want, r.Chats)
				}
			}
			if v != "1.8.8" && (slices.Contains(r.CommandRoots, "register") || !slices.Contains(r.CommandRoots, "say")) {
				t.Errorf("want the backend's command tree (with the proxy's), not the limbo's: %q", r.CommandRoots)
			}

			// Remembered: the same name (any case) from the same address goes straight in.
			r = landed(login("alice"), 1)
			if len(r.Worlds) != 1 || len(r.Titles) != 0 {
				t.Errorf("a remembered player must go straight to the server: %s", r.Raw)
			}

			// The operator resets the password: the session ends, /login is asked.
			cmd := exec.CommandContext(ctx, bin, "auth", "reset-password", "Alice", "--admin-url", adminURL, "--api-key", e2eAdminKey)
			cmd.Stdin = strings.NewReader("s3cond-pass\n")
			cmd.Args = append(cmd.Args, "--password-stdin")
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "password of Alice reset") {
				t.Fatalf("infrarust auth reset-password --password-stdin: %v\n%s", err, out)
			}
			before := joins("Alice")
			o := heldLogin(proxyAddr, lobby.Domains[0], v, "Alice")
			o.Commands, o.CommandGap = []string{"/login wrong-1", "/login wrong-2", "/login hunter22pw"}, time.Second
			o.UntilKicked = false
			o.Stay = 20 * time.Second
			res, err := client.Login(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Kicked || res.KickReason != "Too many wrong passwords." {
				t.Errorf("three wrong passwords: want the kick, got %s", res.Raw)
			}
			if !slices.Contains(plain(res.Chats), "Wrong password. Attempts left: 2.") {
				t.Errorf("the attempts left were not told: %q", res.Chats)
			}
			if joins("Alice") != before {
				t.Fatal("the server saw a player who gave wrong passwords")
			}
			r = landed(login("Alice", "/login s3cond-pass"), 2)
			if !slices.Contains(plain(r.Chats), "Logged in.") {
				t.Errorf("no login confirmation: %q", r.Chats)
			}
			// Remembered again, on the server: /changepassword is the proxy's,
			// never the backend's.
			// Commands run one at a time and a hash takes a while (longer under
			// -race): 2 s apart, so each has answered before the next, and the
			// backend's /say comes last.
			o = heldLogin(proxyAddr, lobby.Domains[0], v, "Alice")
			o.Commands, o.CommandGap = []string{"/changepassword wrong-1 n3w-password", "/changepassword s3cond-pass th1rd-pass", "/say hi"}, 2*time.Second
			typing := authRun{"Alice", joins("Alice"), goLogin(ctx, client, o)}
			if _, err := srv.Wait(ctx, func(e nmp.Event) bool { return e.Event == "command" && e.Command == "say hi" }); err != nil {
				t.Fatalf("the backend's own command did not reach it: %v", err)
			}
			r = landed(typing, 1)
			for _, want := range []string{"That is not your password.", "Password changed."} {
				if !slices.Contains(plain(r.Chats), want) {
					t.Errorf("chat %q missing: %q", want, r.Chats)
				}
			}
			for _, ev := range srv.Events() {
				if ev.Event == "command" && strings.Contains(ev.Command, "pass") {
					t.Errorf("the backend saw a password command: %s", ev.Raw)
				}
			}
			acct, err := api.Account(ctx, "alice")
			if err != nil || acct.Name != "Alice" || acct.LastLoginIP != "127.0.0.1" {
				t.Errorf("account after login: %+v, %v", acct, err)
			}
		})
	}
}

// plain reads past the § formatting codes vanilla clients render.
func plain(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = mc.StripColorCodes(l)
	}
	return out
}

// authEnv drives real clients against one proxy with an "auth" server.
type authEnv struct {
	t                   *testing.T
	ctx                 context.Context
	srv                 *nmp.Server
	api                 *admin.Client
	client              *nmp.Client
	addr, host, version string
}

// authRun is a held login in the background.
type authRun struct {
	name   string
	before int // the name's joins on the server before it
	ch     <-chan loginRun
}

// joins counts the server's joins of name (in any case).
func (e *authEnv) joins(name string) int {
	n := 0
	for _, ev := range e.srv.Events() {
		if ev.Event == "join" && strings.EqualFold(ev.Username, name) {
			n++
		}
	}
	return n
}

// login starts a held player typing commands once spawned.
func (e *authEnv) login(name string, commands ...string) authRun {
	return e.loginWith(name, nil, commands...)
}

func (e *authEnv) loginWith(name string, online *nmp.OnlineLogin, commands ...string) authRun {
	o := heldLogin(e.addr, e.host, e.version, name)
	o.Online = online
	o.Commands, o.CommandGap = commands, 300*time.Millisecond
	before := e.joins(name)
	return authRun{name, before, goLogin(e.ctx, e.client, o)}
}

// landed waits until that login (not an earlier one of the name) is on the
// server, in its world number worlds, then kicks it and returns its report.
func (e *authEnv) landed(r authRun, worlds int) nmp.LoginResult {
	e.t.Helper()
	seen := 0
	_, err := e.srv.Wait(e.ctx, func(ev nmp.Event) bool {
		if !strings.EqualFold(ev.Username, r.name) {
			return false
		}
		if ev.Event == "join" {
			seen++
		}
		return seen > r.before && ev.Event == "alive" && ev.Worlds >= worlds && ev.SeenEchoes >= 3 && ev.SeenKeepAlives >= 2
	})
	if err != nil {
		e.t.Fatalf("%s never got to the server: %v", r.name, err)
	}
	kick(e.ctx, e.t, e.api, r.name)
	return kickedByUs(e.t, r.name, r.ch)
}

// Premium auto-login: the owner of a paid account (a real online-mode client
// against a Mojang stand-in) skips the limbo with the account's UUID; a
// cracked client using that name is refused with the text; with
// allow_cracked_retry its second attempt is let in as cracked, to the
// password login.
func TestRealClientPremiumAutoLogin(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	for _, v := range []string{"1.8.8", "1.21.4"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			srv := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true})
			ss := nmp.StartSessionServer(t)
			lobby := intercepted(config.ModeOffline, "premium-"+strings.ReplaceAll(v, ".", "-")+".e2e.test", srv.Addr)
			lobby.ID = "lobby"
			lobby.LimboHandlers = []config.LimboHandler{config.LimboAuth}
			openB := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true})
			open := intercepted(config.ModeOffline, "premium-open-"+strings.ReplaceAll(v, ".", "-")+".e2e.test", openB.Addr)
			open.ID = "open"
			proxyAddr, adminURL := startWithAdminWith(t, func(c *config.Config) {
				c.Auth.SessionServer = ss.URL
				c.AuthLimbo.Premium.Enabled = true
				c.AuthLimbo.Premium.API = ss.URL
				c.AuthLimbo.Premium.AllowCrackedRetry = true
			}, lobby, open)
			e := &authEnv{t: t, ctx: ctx, srv: srv, api: admin.NewClient(adminURL, e2eAdminKey), client: h.StartClient(t),
				addr: proxyAddr, host: lobby.Domains[0], version: v}
			token, profile := ss.AddProfile("Notch")

			r := e.landed(e.loginWith("Notch", &nmp.OnlineLogin{SessionServer: ss.URL, AccessToken: token, ProfileID: profile.ID}), 1)
			if len(r.Worlds) != 1 || len(r.Titles) != 0 || !r.Encrypted {
				t.Errorf("the premium owner must go straight in, encrypted: %s", r.Raw)
			}
			if strings.ReplaceAll(r.UUID, "-", "") != profile.ID {
				t.Errorf("the premium owner's UUID is %s, want the account's %s", r.UUID, profile.ID)
			}

			// A cracked Notch on an open server of the network does not walk
			// into the lobby with /server: the name's proof is Mojang's.
			before := e.joins("Notch")
			walker := heldLogin(proxyAddr, open.Domains[0], v, "Notch")
			walker.Commands, walker.CommandGap = []string{"/server lobby"}, 600*time.Millisecond
			walking := goLogin(ctx, e.client, walker)
			waitAlive(ctx, t, openB, "Notch", 1)
			time.Sleep(2 * time.Second) // the move is refused meanwhile
			kick(ctx, t, e.api, "Notch")
			if w := kickedByUs(t, "Notch", walking); !anyMatch(plain(w.Chats), "Notch belongs to a premium Minecraft account") || e.joins("Notch") != before {
				t.Errorf("a cracked Notch's /server lobby: chat %q, lobby joins %d (was %d)", w.Chats, e.joins("Notch"), before)
			}

			res, err := e.client.Login(ctx, nmp.LoginOptions{Addr: proxyAddr, ServerHost: lobby.Domains[0], Version: v, Username: "Notch", Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || (res.Kicked && !strings.Contains(res.KickReason, "belongs to a premium Minecraft account")) {
				t.Errorf("a cracked client with a premium name must be refused with the text: %s", res.Raw)
			}
			if e.joins("Notch") != before {
				t.Fatal("the server saw the cracked client")
			}
			t.Logf("cracked client with a premium name: kicked=%v %q, end %q, error %q", res.Kicked, res.KickReason, res.EndReason, res.Error)

			r = e.landed(e.login("Notch", "/register cracked-pw1 cracked-pw1"), 2)
			if !slices.Contains(plain(r.Chats), "Registered. Welcome!") || r.Encrypted {
				t.Errorf("the second attempt must reach the password login, unencrypted: %s", r.Raw)
			}
			// This backend declares no commands: the limbo's are taken down, not left behind.
			if slices.Contains(r.CommandRoots, "register") {
				t.Errorf("the limbo's command tree outlived it: %q", r.CommandRoots)
			}
		})
	}
}
