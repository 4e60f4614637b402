package e2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// One player, one session, with real clients on an offline server: a second login
// with the same name replaces the first (vanilla's "You logged in from another
// location"); names that differ only by case are two players, and a kick by the
// exact name hits the right one while a kick by a third spelling is a 409 listing
// both; a name outside vanilla's rule is refused with a kick that says so.
func TestRealClientOnePlayerOneSession(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	const v = "1.21.4"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true})
	srv := intercepted(config.ModeOffline, "twins.e2e.test", b.Addr)
	srv.ID = "twins"
	proxyAddr, adminURL := startWithAdmin(t, srv)
	api := admin.NewClient(adminURL, e2eAdminKey)
	client := h.StartClient(t)

	first := goLogin(ctx, client, heldLogin(proxyAddr, srv.Domains[0], v, "Twin"))
	waitAlive(ctx, t, b, "Twin", 1)
	second := goLogin(ctx, client, heldLogin(proxyAddr, srv.Domains[0], v, "Twin"))
	run := <-first
	if run.err != nil {
		t.Fatal(run.err)
	}
	if !run.res.Kicked || run.res.KickReason != "You logged in from another location" {
		t.Fatalf("the first session must be replaced by the second: %s", run.res.Raw)
	}
	waitEvents(ctx, t, b, "join", "Twin", 2)
	if list, err := api.Players(ctx, ""); err != nil || len(list) != 1 || list[0].Name != "Twin" {
		t.Fatalf("players after the second login: %+v, %v", list, err)
	}

	lower := goLogin(ctx, client, heldLogin(proxyAddr, srv.Domains[0], v, "dupname_0"))
	upper := goLogin(ctx, client, heldLogin(proxyAddr, srv.Domains[0], v, "DUPNAME_0"))
	waitAlive(ctx, t, b, "dupname_0", 1)
	waitAlive(ctx, t, b, "DUPNAME_0", 1)
	_, err := api.KickPlayer(ctx, "Dupname_0", kickReason)
	var ae *admin.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict || !strings.Contains(err.Error(), "DUPNAME_0, dupname_0") {
		t.Fatalf("a kick by a spelling of two players: want a 409 listing both, got %v", err)
	}
	kick(ctx, t, api, "dupname_0")
	kickedByUs(t, "dupname_0", lower)
	// The client has read its kick; the proxy ends the session once the client's
	// close reaches it, an instant later: wait for that, boundedly.
	var list []admin.Player
	var err2 error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		list, err2 = api.Players(ctx, "")
		if err2 == nil && !containsPlayer(list, "dupname_0") || time.Now().After(deadline) {
			break
		}
	}
	if err2 != nil || !containsPlayer(list, "DUPNAME_0") || containsPlayer(list, "dupname_0") {
		t.Fatalf("a kick of dupname_0 must leave DUPNAME_0: %+v, %v", list, err2)
	}
	kick(ctx, t, api, "DUPNAME_0")
	kickedByUs(t, "DUPNAME_0", upper)
	kick(ctx, t, api, "Twin")
	kickedByUs(t, "Twin", second)

	for _, name := range []string{"a b_0", "../x_0", "ab"} {
		r, err := client.Login(ctx, nmp.LoginOptions{Addr: proxyAddr, ServerHost: srv.Domains[0], Version: v, Username: name, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Kicked || !strings.Contains(r.KickReason, "Invalid username") {
			t.Errorf("%q must be refused with a clear kick: %s", name, r.Raw)
		}
		if sawPlayer(b, name) {
			t.Errorf("the backend saw %q", name)
		}
	}
}

func containsPlayer(list []admin.Player, name string) bool {
	for _, p := range list {
		if p.Name == name {
			return true
		}
	}
	return false
}

// duplicate_login = "refuse" turns the second login away, as Velocity does, and
// leaves the first session alone.
func TestRealClientDuplicateLoginRefused(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	const v = "1.20.4"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true})
	srv := intercepted(config.ModeOffline, "refuse.e2e.test", b.Addr)
	proxyAddr := startProxyWith(t, func(c *config.Config) { c.DuplicateLogin = config.DuplicateRefuse }, srv)
	client := h.StartClient(t)
	first := goLogin(ctx, client, nmp.LoginOptions{
		Addr: proxyAddr, ServerHost: srv.Domains[0], Version: v, Username: "Solo",
		Stay: 6 * time.Second, Tick: 200 * time.Millisecond, Timeout: time.Minute,
	})
	waitAlive(ctx, t, b, "Solo", 1)
	r, err := client.Login(ctx, nmp.LoginOptions{Addr: proxyAddr, ServerHost: srv.Domains[0], Version: v, Username: "Solo", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Kicked || r.KickReason != "You are already connected to this proxy!" {
		t.Fatalf("the second login must be refused: %s", r.Raw)
	}
	run := <-first
	if run.err != nil || !run.res.OK || run.res.Kicked {
		t.Fatalf("the first session must stay: %s %v", run.res.Raw, run.err)
	}
	waitEvents(ctx, t, b, "join", "Solo", 1)
	joins := 0
	for _, e := range b.Events() {
		if e.Event == "join" && e.Username == "Solo" {
			joins++
		}
	}
	if joins != 1 {
		t.Fatalf("the backend saw Solo join %d times, want 1", joins)
	}
}
