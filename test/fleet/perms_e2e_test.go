//go:build unix

package fleet

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/perms"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// A role change made through one proxy is every proxy's, at once: Kate on p1
// and Kim on p2 are made moderators through p1's CLI, and both clients get a
// command list with /kick without reconnecting; p2 lists the group; neither
// proxy keeps a permissions file of its own (they live in Redis, signed). A
// removal takes /kick away again on both.
func TestE2ERolesAcrossTheFleet(t *testing.T) {
	h := nmp.Setup(t)
	for _, v := range []string{"1.16.5", "1.21.4"} { // a tree before and after the configuration phase
		t.Run(v, func(t *testing.T) { rolesAcrossTheFleet(t, h, v) })
	}
}

func rolesAcrossTheFleet(t *testing.T, h *nmp.Harness, v string) {
	r := startRedis(t)
	b := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, Commands: true})
	file := fmt.Sprintf("domains = [%q]\naddresses = [%q]\nproxy_mode = \"offline\"\n", playHost, b.Addr)
	ps := startFleetWith(t, r, 2, map[string]string{"lobby": file},
		"\n[permissions]\ntrust_offline_admins = true\n[permissions.groups.moderator]\npermissions = [\"infrarust.command.kick\"]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := h.StartClient(t)
	play := func(p *proxyProc, name string) chan nmp.LoginResult {
		done := make(chan nmp.LoginResult, 1)
		go func() {
			res, _ := client.Login(ctx, nmp.LoginOptions{Addr: p.proxyAddr, ServerHost: playHost, Version: v, Username: name,
				UntilKicked: true, Timeout: time.Minute})
			done <- res
		}()
		if _, err := b.Wait(ctx, nmp.Match("join", name)); err != nil {
			t.Fatalf("%s did not join through %s: %v", name, p.id, err)
		}
		return done
	}
	kate, kim := play(ps[0], "Kate"), play(ps[1], "Kim")
	time.Sleep(500 * time.Millisecond) // the trees of the join are in
	for _, name := range []string{"Kate", "Kim"} {
		if out, errOut, err := ps[0].cli(t, "perms", "group", "add", "moderator", name); err != nil {
			t.Fatalf("perms group add: %v\n%s%s", err, out, errOut)
		}
	}
	eventually(t, 5*time.Second, "p2 lists the stored members", func() bool {
		v, err := ps[1].client.Permissions(ctx)
		if err != nil {
			return false
		}
		for _, g := range v.Groups {
			if g.Name == "moderator" && g.Stored != nil && slices.Equal(g.Stored.Members, []string{"kate", "kim"}) {
				return true
			}
		}
		return false
	})
	time.Sleep(time.Second) // the trees sent again are in
	if _, err := ps[1].client.ChangePermissions(ctx, perms.Change{Op: perms.OpRemove, Group: "moderator", Value: "Kim"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	for i, ch := range []chan nmp.LoginResult{kate, kim} {
		name := []string{"Kate", "Kim"}[i]
		if _, err := ps[i].client.KickPlayer(ctx, name, "done"); err != nil {
			t.Fatal(err)
		}
		res := <-ch
		has := func(tree []string) bool { return slices.Contains(tree, "kick") }
		trees := res.CommandTrees
		if len(trees) < 2 || has(trees[0]) || !slices.ContainsFunc(trees[1:], has) {
			t.Errorf("%s's command lists (through %s): %v; want one without /kick, then one with it, without reconnecting", name, ps[i].id, trees)
		}
		if name == "Kim" && (len(trees) < 3 || has(trees[len(trees)-1])) {
			t.Errorf("Kim's last command list still has /kick after his removal: %v", trees)
		}
		if name == "Kate" && !has(trees[len(trees)-1]) {
			t.Errorf("Kate lost /kick with Kim's removal: %v", trees)
		}
	}
	for _, p := range ps {
		if m, _ := filepath.Glob(filepath.Join(p.dir, "*permissions.json")); len(m) > 0 {
			t.Errorf("%s keeps a permissions file beside Redis: %v", p.id, m)
		}
	}
}
