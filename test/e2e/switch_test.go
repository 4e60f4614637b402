package e2e

import (
	"context"
	"github.com/infrarust-go/infrarust"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/app"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"

	"log/slog"
)

const e2eAdminKey = "e2e-admin-key-0123456789"

// startWithAdmin is startProxy with the admin API on, for tests that move players.
func startWithAdmin(t *testing.T, servers ...*config.Server) (proxyAddr, adminURL string) {
	t.Helper()
	return startWithAdminWith(t, nil, servers...)
}

// startWithAdminWith is startWithAdmin with a change to infrarust.toml's settings.
func startWithAdminWith(t *testing.T, mutate func(*config.Config), servers ...*config.Server) (proxyAddr, adminURL string) {
	t.Helper()
	return startWithPlugins(t, mutate, nil, servers...)
}

// startWithPlugins is startWithAdminWith with compiled-in handlers, commands and filters.
func startWithPlugins(t *testing.T, mutate func(*config.Config), ext *infrarust.Registry, servers ...*config.Server) (proxyAddr, adminURL string) {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Bind = "127.0.0.1:0"
	cfg.ServersPath = filepath.Join(dir, "servers")
	cfg.Web.Bind = "127.0.0.1:0"
	cfg.Web.APIKey = e2eAdminKey
	cfg.Web.DataDir = filepath.Join(dir, "data")
	cfg.ShutdownTimeout = config.Duration(5 * time.Second)
	cfg.Servers = servers
	if mutate != nil {
		mutate(cfg)
	}
	level := slog.LevelError + 100
	if os.Getenv("INFRARUST_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	type addrs struct{ p, a string }
	ready := make(chan addrs, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Options{
			Config: cfg, Version: "e2e", Extensions: ext,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
			Ready:  func(p, a string) { ready <- addrs{p, a} },
		})
	}()
	var got addrs
	select {
	case got = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve stopped before it was ready: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return got.p, "http://" + got.a
}

var buildOnce sync.Once
var binary string
var buildErr error

// TestMain removes the binary infrarustBinary built (40 MB in the temp dir per run).
func TestMain(m *testing.M) {
	code := m.Run()
	if buildErr == nil && binary != "" {
		_ = os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

// infrarustBinary builds ./cmd/infrarust once per test run, so the CLI is tested
// as operators run it.
func infrarustBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "infrarust-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "infrarust")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/infrarust-go/infrarust/cmd/infrarust").CombinedOutput()
		if err != nil {
			buildErr = err
			binary = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/infrarust: %v\n%s", buildErr, binary)
	}
	return binary
}

// A player held on a real 1.20.2+ client is moved between two real servers through
// the admin API and through the CLI, without a disconnect: each server logs them
// in, and the client keeps answering keep-alives and getting its plugin messages
// echoed; then a killed backend sends the player to its fallback server.
func TestRealClientSwitching(t *testing.T) {
	h := nmp.Setup(t)
	bin := infrarustBinary(t)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			a := h.StartServer(t, nmp.ServerOptions{Version: v, MOTD: "A", KeepAlive: 250 * time.Millisecond})
			b := h.StartServer(t, nmp.ServerOptions{Version: v, MOTD: "B", KeepAlive: 250 * time.Millisecond})
			lobby := intercepted(config.ModeOffline, "lobby-"+v+".test", a.Addr)
			games := intercepted(config.ModeOffline, "games-"+v+".test", b.Addr)
			lobby.ID, games.ID = "lobby", "games"
			lobby.Network, games.Network = "main", "main"
			games.FallbackServers = []string{"lobby"}
			proxyAddr, adminURL := startWithAdmin(t, lobby, games)
			api := admin.NewClient(adminURL, e2eAdminKey)

			client := h.StartClient(t)
			res := make(chan nmp.LoginResult, 1)
			errc := make(chan error, 1)
			go func() {
				r, err := client.Login(ctx, nmp.LoginOptions{
					Addr: proxyAddr, ServerHost: lobby.Domains[0], Version: v, Username: "Mover",
					KeepAlives: 1, Stay: 20 * time.Second, Tick: 200 * time.Millisecond, Timeout: 90 * time.Second,
				})
				errc <- err
				res <- r
			}()
			if _, err := a.Wait(ctx, nmp.Match("join", "Mover")); err != nil {
				t.Fatal(err)
			}
			// Through the API: lobby (A) -> games (B).
			if p, err := api.SendPlayer(ctx, "Mover", "games", false); err != nil || p.Server != "games" {
				t.Fatalf("send through the API: %+v, %v", p, err)
			}
			// Ticks and keep-alives now go to B: wait until it has had both.
			for _, ev := range []string{"join", "first_keepalive", "first_payload"} {
				if _, err := b.Wait(ctx, nmp.Match(ev, "Mover")); err != nil {
					t.Fatalf("B: no %s of Mover: %v", ev, err)
				}
			}
			// Through the CLI: games (B) -> lobby (A).
			out, err := exec.CommandContext(ctx, bin, "players", "send", "Mover", "lobby", "--admin-url", adminURL, "--api-key", e2eAdminKey).CombinedOutput()
			if err != nil {
				t.Fatalf("infrarust players send: %v\n%s", err, out)
			}
			waitEvents(ctx, t, a, "join", "Mover", 2)
			// B's session ended when the player left it: it had received ticks and
			// answered keep-alives while the player was there.
			leftB, err := b.Wait(ctx, nmp.Match("leave", "Mover"))
			if err != nil {
				t.Fatal(err)
			}
			if leftB.Payloads == 0 || leftB.KeepAlives == 0 {
				t.Errorf("while on B the player sent %d plugin messages and answered %d keep-alives; want some of each", leftB.Payloads, leftB.KeepAlives)
			}
			list, err := api.Players(ctx, "")
			if err != nil || len(list) != 1 || list[0].Server != "lobby" {
				t.Fatalf("players after the moves: %+v, %v", list, err)
			}
			// Back to games, then games dies: the player falls back to lobby (its
			// fallback_servers) instead of being disconnected.
			if _, err := api.SendPlayer(ctx, "Mover", "games", false); err != nil {
				t.Fatal(err)
			}
			waitEvents(ctx, t, b, "join", "Mover", 2)
			if p, err := os.FindProcess(b.PID); err == nil {
				_ = p.Kill()
			}
			waitEvents(ctx, t, a, "join", "Mover", 3)
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			r := <-res
			if !r.OK || r.Kicked {
				t.Fatalf("the client must stay connected through both moves: %s", r.Raw)
			}
			// A few ticks sent while the client was between servers may be lost;
			// the rest were answered by whichever server the player was on.
			if r.TicksSent == 0 || r.TicksEchoed < r.TicksSent-10 {
				t.Errorf("ticks sent %d, echoed %d: the servers must keep answering across moves", r.TicksSent, r.TicksEchoed)
			}
		})
	}
}

// waitEvents waits until srv has printed n events of kind for user.
func waitEvents(ctx context.Context, t *testing.T, srv *nmp.Server, kind, user string, n int) {
	t.Helper()
	for {
		count := 0
		for _, e := range srv.Events() {
			if e.Event == kind && e.Username == user {
				count++
			}
		}
		if count >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waited for %d %q events of %s: %v", n, kind, user, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
