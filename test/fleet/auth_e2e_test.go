//go:build unix

package fleet

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// With [fleet] the auth limbo's accounts are in Redis: a player registers
// through p1 and logs in through p2 with that password; p2's API lists the
// account; neither proxy keeps an accounts.db of its own.
func TestE2EAccountsAcrossTheFleet(t *testing.T) {
	h := nmp.Setup(t)
	const v = "1.21.4"
	r := startRedis(t)
	b := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond})
	file := fmt.Sprintf("domains = [%q]\naddresses = [%q]\nproxy_mode = \"offline\"\nlimbo_handlers = [\"auth\"]\n", playHost, b.Addr)
	ps := startFleetWith(t, r, 2, map[string]string{"lobby": file}, "\n[auth_limbo]\nremember = \"0\"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := h.StartClient(t)
	play := func(p *proxyProc, command string, joinsBefore int) nmp.LoginResult {
		t.Helper()
		done := make(chan nmp.LoginResult, 1)
		go func() {
			res, _ := client.Login(ctx, nmp.LoginOptions{Addr: p.proxyAddr, ServerHost: playHost, Version: v, Username: "Alice",
				UntilKicked: true, Timeout: time.Minute, Commands: []string{command}})
			done <- res
		}()
		seen := 0
		if _, err := b.Wait(ctx, func(e nmp.Event) bool {
			if e.Event == "join" && e.Username == "Alice" {
				seen++
			}
			return seen > joinsBefore
		}); err != nil {
			t.Fatalf("Alice did not get through %s with %q: %v", p.id, command, err)
		}
		if _, err := p.client.KickPlayer(ctx, "Alice", "done"); err != nil {
			t.Fatal(err)
		}
		return <-done
	}
	reg := play(ps[0], "/register fleet-pass1 fleet-pass1", 0)
	if !containsLine(reg.Chats, "Registered. Welcome!") {
		t.Fatalf("p1 did not register Alice: %q", reg.Chats)
	}
	in := play(ps[1], "/login fleet-pass1", 1)
	if !containsLine(in.Chats, "Logged in.") {
		t.Fatalf("p2 did not know Alice's account: %q", in.Chats)
	}
	list, err := ps[1].client.Accounts(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "Alice" || list[0].LastLoginAt.IsZero() {
		t.Fatalf("p2's accounts: %+v %v", list, err)
	}
	for _, p := range ps {
		matches, _ := filepath.Glob(filepath.Join(p.dir, "*", "accounts.db"))
		if m2, _ := filepath.Glob(filepath.Join(p.dir, "accounts.db")); len(m2) > 0 {
			matches = append(matches, m2...)
		}
		if len(matches) > 0 {
			t.Errorf("%s keeps a local account store beside Redis: %v", p.id, matches)
		}
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if strings.Contains(stripCodes(l), want) {
			return true
		}
	}
	return false
}
