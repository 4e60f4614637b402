package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// gateVersions are a client that switches through the configuration phase and
// one that switches by a respawn.
var gateVersions = []string{"1.21.4", "1.8.8"}

// moveRefusals follows the proxy's player.move_refused events.
func moveRefusals(ctx context.Context, t *testing.T, api *admin.Client) <-chan events.MoveRefused {
	t.Helper()
	stream, err := api.Events(ctx, events.PlayerMoveRefused)
	if err != nil {
		t.Fatalf("subscribe to player.move_refused: %v", err)
	}
	ch := make(chan events.MoveRefused, 16)
	go func() {
		defer stream.Close()
		for {
			ev, err := stream.Next()
			if err != nil {
				return
			}
			var m events.MoveRefused
			if json.Unmarshal(ev.Data, &m) == nil {
				ch <- m
			}
		}
	}()
	return ch
}

func nextRefusal(ctx context.Context, t *testing.T, ch <-chan events.MoveRefused) events.MoveRefused {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-ctx.Done():
		t.Fatal("no player.move_refused event")
		return events.MoveRefused{}
	}
}

// metric reads one series of the proxy's /metrics (0 when absent).
func metric(ctx context.Context, t *testing.T, adminURL, series string) float64 {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, adminURL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+e2eAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

func sawPlayer(srv *nmp.Server, name string) bool {
	for _, e := range srv.Events() {
		if e.Username == name {
			return true
		}
	}
	return false
}

// Every way into a server honours that server's own rules: a player kicked from
// `who`, whose fallback_servers start with `secret`, does not land on secret when
// secret's ip_filter refuses his address (he goes on to the next fallback), and
// neither does an operator's send, forced or not; a send into maintenance is
// refused unless forced. Each refusal leaves the player where he was, tells him
// in chat, and is counted and published.
func TestRealClientMovesHonourTheTargetsRules(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	for _, v := range gateVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			start := func(kick string) *nmp.Server {
				o := nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true}
				if kick != "" {
					o.Kick, o.KickUsers = kick, []string{"Ana"}
				}
				return h.StartServer(t, o)
			}
			whoB, secretB, lobbyB, buildB := start("who: go away"), start(""), start(""), start("")
			tag := strings.ReplaceAll(v, ".", "-")
			mk := func(id string, b *nmp.Server) *config.Server {
				s := intercepted(config.ModeOffline, id+"-gate-"+tag+".e2e.test", b.Addr)
				s.ID, s.Network = id, "main"
				return s
			}
			who, secret, lobby, build := mk("who", whoB), mk("secret", secretB), mk("lobby", lobbyB), mk("build", buildB)
			who.FallbackServers = []string{"secret", "lobby"}
			secret.IPFilter.Deny = []string{"127.0.0.0/8", "::1/128"} // every player of this test
			proxyAddr, adminURL := startWithAdmin(t, who, secret, lobby, build)
			api := admin.NewClient(adminURL, e2eAdminKey)
			refusals := moveRefusals(ctx, t, api)
			client := h.StartClient(t)

			ana := goLogin(ctx, client, heldLogin(proxyAddr, who.Domains[0], v, "Ana"))
			// who kicks her once she is in: the fallback skips secret and lands on lobby.
			if _, err := lobbyB.Wait(ctx, nmp.Match("join", "Ana")); err != nil {
				t.Fatal(err)
			}
			m := nextRefusal(ctx, t, refusals)
			if m.Username != "Ana" || m.FromServer != "who" || m.ToServer != "secret" || m.Rule != "ip_filter" || !strings.HasPrefix(m.Reason, "fallback: who: go away") {
				t.Errorf("the fallback's refusal: %+v", m)
			}
			waitAlive(ctx, t, lobbyB, "Ana", 2)

			// An operator's send to secret: refused, forced or not (ip_filter is never overridden).
			for _, force := range []bool{false, true} {
				_, err := api.SendPlayer(ctx, "Ana", "secret", force)
				var ae *admin.APIError
				if !errors.As(err, &ae) || ae.Status != http.StatusForbidden || !strings.Contains(err.Error(), "ip_filter") {
					t.Fatalf("send to secret (force %v): want a 403 naming ip_filter, got %v", force, err)
				}
				if m := nextRefusal(ctx, t, refusals); m.ToServer != "secret" || m.Rule != "ip_filter" || m.Reason != "admin" {
					t.Errorf("the send's refusal: %+v", m)
				}
			}
			// build in maintenance: refused without force, taken with it.
			if _, err := api.SetMaintenance(ctx, "build", true); err != nil {
				t.Fatal(err)
			}
			_, err := api.SendPlayer(ctx, "Ana", "build", false)
			var ae *admin.APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusForbidden || !strings.Contains(err.Error(), "maintenance") {
				t.Fatalf("send into maintenance: want a 403 naming maintenance, got %v", err)
			}
			if m := nextRefusal(ctx, t, refusals); m.ToServer != "build" || m.Rule != "maintenance" {
				t.Errorf("the maintenance refusal: %+v", m)
			}
			list, err := api.Players(ctx, "")
			if err != nil || len(list) != 1 || list[0].Server != "lobby" {
				t.Fatalf("a refused move leaves the player where he was: %+v, %v", list, err)
			}
			if p, err := api.SendPlayer(ctx, "Ana", "build", true); err != nil || p.Server != "build" {
				t.Fatalf("a forced send past maintenance: %+v, %v", p, err)
			}
			if _, err := buildB.Wait(ctx, nmp.Match("join", "Ana")); err != nil {
				t.Fatal(err)
			}
			waitAlive(ctx, t, buildB, "Ana", 3)
			kick(ctx, t, api, "Ana")
			r := kickedByUs(t, "Ana", ana)
			if sawPlayer(secretB, "Ana") {
				t.Errorf("secret's backend saw Ana although its ip_filter refuses her")
			}
			told := 0
			for _, c := range r.Chats {
				if strings.Contains(c, "You could not be moved to secret") || strings.Contains(c, "You could not be moved to build") {
					told++
				}
			}
			if told < 2 {
				t.Errorf("the player must be told in chat why each send failed; chat was %q", r.Chats)
			}
			// The fallback's line, on every version: a 1.20.2+ client is in its
			// configuration phase when the move is done, and reads it once back in play.
			if !anyMatch(plain(r.Chats), "You were moved to lobby: who: go away") {
				t.Errorf("the player must be told where the fallback took him and why; chat was %q", r.Chats)
			}
			if n := metric(ctx, t, adminURL, `infrarust_moves_refused_total{rule="ip_filter",server="secret"}`); n != 3 {
				t.Errorf("infrarust_moves_refused_total for secret's ip_filter = %v, want 3", n)
			}
			if n := metric(ctx, t, adminURL, `infrarust_moves_refused_total{rule="maintenance",server="build"}`); n != 1 {
				t.Errorf("infrarust_moves_refused_total for build's maintenance = %v, want 1", n)
			}
		})
	}
}

// Two servers that fall back to each other and both kick a player once he is in
// bounce him once each, then he is disconnected with the last reason: within
// one incident each server is tried at most once (before, 27 bounces a player in
// 30 s).
func TestRealClientFallbackBudget(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	v := "1.21.4"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	aB := h.StartServer(t, nmp.ServerOptions{Version: v, Kick: "A kicks", KeepAlive: 250 * time.Millisecond})
	bB := h.StartServer(t, nmp.ServerOptions{Version: v, Kick: "B kicks", KeepAlive: 250 * time.Millisecond})
	a := intercepted(config.ModeOffline, "a-bounce.e2e.test", aB.Addr)
	b := intercepted(config.ModeOffline, "b-bounce.e2e.test", bB.Addr)
	a.ID, b.ID = "a", "b"
	a.FallbackServers, b.FallbackServers = []string{"b"}, []string{"a"}
	proxyAddr, adminURL := startWithAdmin(t, a, b)
	client := h.StartClient(t)
	names := []string{"Bouncer1", "Bouncer2", "Bouncer3"}
	runs := make([]<-chan loginRun, len(names))
	for i, n := range names {
		runs[i] = goLogin(ctx, client, heldLogin(proxyAddr, a.Domains[0], v, n))
	}
	for i, n := range names {
		run := <-runs[i]
		if run.err != nil {
			t.Fatalf("%s: %v", n, run.err)
		}
		if !run.res.Kicked || run.res.KickReason != "B kicks" {
			t.Errorf("%s must be disconnected with the last server's reason: %s", n, run.res.Raw)
		}
		joins := [2]int{}
		for j, srv := range []*nmp.Server{aB, bB} {
			for _, e := range srv.Events() {
				if e.Event == "join" && e.Username == n {
					joins[j]++
				}
			}
		}
		if joins != [2]int{1, 1} {
			t.Errorf("%s joined a %d and b %d times; want once each", n, joins[0], joins[1])
		}
	}
	if n := metric(ctx, t, adminURL, `infrarust_fallback_exhausted_total{server="b"}`); n != 0 {
		// The incident ended by servers, not by the bounce count: the budget metric
		// counts only players the count disconnected.
		t.Errorf("infrarust_fallback_exhausted_total{server=b} = %v, want 0", n)
	}
}
