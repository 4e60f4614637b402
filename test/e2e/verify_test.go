package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// Bot verification with clients none of us wrote: mineflayer, whose physics
// falls and lands as vanilla's does, passes and reaches the server (and a
// reconnect is not checked again); a plain node-minecraft-protocol client,
// which never moves, and a mineflayer bot that claims the ground at once are
// refused with the text; the server sees neither. One version per chunk
// format family the limbo writes.
func TestRealClientBotVerification(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	for _, v := range []string{"1.8.8", "1.12.2", "1.16.5", "1.20.4", "1.21.4"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			srv := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond})
			lobby := intercepted(config.ModeOffline, "verify-"+strings.ReplaceAll(v, ".", "-")+".e2e.test", srv.Addr)
			lobby.ID = "lobby"
			lobby.LimboHandlers = []config.LimboHandler{config.LimboVerify}
			proxyAddr, adminURL := startWithAdminWith(t, func(c *config.Config) {
				c.Verify.Mode = config.VerifyAlways
				// Far above the check's own deadlines: a client that stops
				// answering must fail at the first one it misses.
				c.Verify.Timeout = config.Duration(60 * time.Second)
			}, lobby)
			api := admin.NewClient(adminURL, e2eAdminKey)
			bot := func(name, cheat string) <-chan nmp.BotResult {
				ch := make(chan nmp.BotResult, 1)
				go func() {
					r, err := h.RunBot(ctx, nmp.BotOptions{Addr: proxyAddr, ServerHost: lobby.Domains[0], Version: v, Username: name, Cheat: cheat, Timeout: 40 * time.Second})
					if err != nil {
						t.Error(err)
					}
					ch <- r
				}()
				return ch
			}
			joined := func(name string) int {
				n := 0
				for _, e := range srv.Events() {
					if e.Event == "join" && e.Username == name {
						n++
					}
				}
				return n
			}

			// A real client with physics: verified, then on the server.
			for round := 1; round <= 2; round++ {
				run := bot("Walker", "")
				seen := 0
				if _, err := srv.Wait(ctx, func(e nmp.Event) bool {
					if e.Event == "join" && e.Username == "Walker" {
						seen++
					}
					return seen == round
				}); err != nil {
					t.Fatalf("round %d: the physics client never reached the server: %v", round, err)
				}
				kick(ctx, t, api, "Walker")
				r := <-run
				checked := slices.Contains(plain(r.Titles), "Checking your connection")
				if round == 1 && (!checked || !slices.Contains(r.Positions, 65)) {
					t.Errorf("first visit: want the verification title and a landing at y 65: %s", r.Raw)
				}
				if round == 2 && checked {
					t.Errorf("a verified player was checked again within ttl: %s", r.Raw)
				}
			}

			// A client that never moves: refused when the timeout ends.
			client := h.StartClient(t)
			idle, err := client.Login(ctx, nmp.LoginOptions{Addr: proxyAddr, ServerHost: lobby.Domains[0], Version: v, Username: "Idle",
				UntilKicked: true, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			// Refused at its first missed deadline (5 s), far before the
			// timeout (60 s): its check's slot is free then.
			if !idle.Kicked || !strings.Contains(idle.KickReason, "Bot verification failed (did not move)") || idle.ElapsedMS > 20_000 {
				t.Errorf("a client that never moves must be refused at the first deadline: %s", idle.Raw)
			}
			// Bots written against the documented check, each refused with its reason.
			for name, c := range map[string]struct{ cheat, reason string }{
				"Cheater":  {"teleport", "positions that do not follow gravity"},
				"Hoverer":  {"hover", "positions that do not follow gravity"},
				"Replayer": {"replay", "fell faster than real time"},
			} {
				r := <-bot(name, c.cheat)
				if !r.Kicked || !strings.Contains(r.KickReason, c.reason) || r.ElapsedMS > 20_000 {
					t.Errorf("%s (%s) must be refused for %q at once: %s", name, c.cheat, c.reason, r.Raw)
				}
			}
			for _, name := range []string{"Idle", "Cheater", "Hoverer", "Replayer"} {
				if joined(name) != 0 {
					t.Fatalf("the server saw %s, who failed verification", name)
				}
			}
		})
	}
}
