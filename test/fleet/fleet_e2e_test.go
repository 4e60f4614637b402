//go:build unix

package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// startFleet runs n proxies (p1..pn) on r with the same servers and waits until
// each sees all of them live.
func startFleet(t *testing.T, r *redisServer, n int, servers map[string]string) []*proxyProc {
	t.Helper()
	return startFleetWith(t, r, n, servers, "")
}

// startFleetWith is startFleet with extra tables in every proxy's infrarust.toml.
func startFleetWith(t *testing.T, r *redisServer, n int, servers map[string]string, extra string) []*proxyProc {
	t.Helper()
	var ps []*proxyProc
	for i := 1; i <= n; i++ {
		ps = append(ps, startProxy(t, proxyOpts{id: "p" + strconv.Itoa(i), redis: r, servers: servers, extra: extra}))
	}
	for _, p := range ps {
		eventually(t, 10*time.Second, p.id+" sees the whole fleet", func() bool {
			st, err := p.client.Fleet(context.Background())
			return err == nil && st.Connected && st.LiveProxies == n
		})
	}
	return ps
}

// A drain made with the CLI on one proxy shows as draining on the two others
// (and keeps their new players off it); a ban made through one proxy's API keeps
// the player out of the others; both survive a proxy's restart.
func TestE2EDrainAndBanReachTheFleet(t *testing.T) {
	r := startRedis(t)
	one, two := plainBackend(t, "one"), plainBackend(t, "two")
	ps := startFleet(t, r, 3, map[string]string{"lobby": lobbyFile(one.Addr(), two.Addr())})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	out, errOut, err := ps[0].cli(t, "backends", "drain", "lobby", one.Addr())
	if err != nil || !strings.Contains(out, "drained "+one.Addr()+" on lobby: now draining") || errOut != "" {
		t.Fatalf("backends drain on p1: %v\n%s%s", err, out, errOut)
	}
	for _, p := range ps[1:] {
		d := eventually(t, 5*time.Second, p.id+" shows the drain", func() bool { return backendState(p, "lobby", one.Addr()) == "draining" })
		t.Logf("drain on p1 seen as draining on %s %s after the CLI's answer", p.id, d.Round(time.Millisecond))
	}
	if text, err := loginText(ctx, ps[2].proxyAddr, playHost, "Newcomer"); err != nil || text != "You reached two (as Newcomer)" {
		t.Fatalf("a login on p3 after the drain: %q %v", text, err)
	}
	out, _, err = ps[2].cli(t, "backends", "list", "lobby")
	if err != nil || !strings.Contains(out, "draining") {
		t.Fatalf("backends list on p3: %v\n%s", err, out)
	}

	ban, err := ps[1].client.AddBan(ctx, admin.BanRequest{Type: "username", Value: "Griefer", Reason: "griefing spawn"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*proxyProc{ps[0], ps[2]} {
		d := eventually(t, 5*time.Second, p.id+" refuses the banned player", func() bool {
			text, err := loginText(ctx, p.proxyAddr, playHost, "Griefer")
			return err == nil && strings.Contains(text, "You are banned: griefing spawn")
		})
		t.Logf("ban on p2 refused by %s %s after the API's answer", p.id, d.Round(time.Millisecond))
	}
	list, err := ps[2].client.Bans(ctx)
	if err != nil || len(list) != 1 || list[0].Value != ban.Value || list[0].CreatedBy != ban.CreatedBy {
		t.Fatalf("p3's ban list: %+v %v", list, err)
	}

	// Maintenance set on p1 holds on p2 and p3.
	if _, err := ps[0].client.SetMaintenance(ctx, "lobby", true); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps[1:] {
		eventually(t, 5*time.Second, p.id+" shows lobby in maintenance", func() bool {
			info, err := p.client.Server(ctx, "lobby")
			return err == nil && info.Maintenance
		})
	}
	if _, err := ps[2].client.SetMaintenance(ctx, "lobby", false); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps[:2] {
		eventually(t, 5*time.Second, p.id+" shows the maintenance's end", func() bool {
			info, err := p.client.Server(ctx, "lobby")
			return err == nil && !info.Maintenance
		})
	}

	// p2 restarts: it still drains and bans (from its own data dir and from Redis).
	ps[1].stop()
	ps[1].start(r)
	if st := backendState(ps[1], "lobby", one.Addr()); st != "draining" {
		t.Fatalf("p2 after its restart: %s", st)
	}
	if text, err := loginText(ctx, ps[1].proxyAddr, playHost, "Griefer"); err != nil || !strings.Contains(text, "banned") {
		t.Fatalf("p2 after its restart lets the banned player in: %q %v", text, err)
	}

	// Lifting both on p3 reaches the others.
	if _, err := ps[2].client.Enable(ctx, "lobby", one.Addr()); err != nil {
		t.Fatal(err)
	}
	if _, err := ps[2].client.RemoveBan(ctx, "username", "griefer"); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps[:2] {
		// Enabled is taking players again: healthy, or unknown when no probe or
		// login has checked it since (an address nobody checked is unknown).
		eventually(t, 5*time.Second, p.id+" shows the enable", func() bool {
			st := backendState(p, "lobby", one.Addr())
			return st == "healthy" || st == "unknown"
		})
		eventually(t, 5*time.Second, p.id+" lets the player back in", func() bool {
			text, err := loginText(ctx, p.proxyAddr, playHost, "Griefer")
			return err == nil && text == "You reached one (as Griefer)"
		})
	}
}

// Players on two proxies make one fleet list and count on the third; a proxy
// killed outright takes its players out of the fleet once its heartbeat expires.
func TestE2EFleetPlayers(t *testing.T) {
	r := startRedis(t)
	hold := holdingBackend(t, "one")
	ps := startFleet(t, r, 3, map[string]string{"lobby": lobbyFile(hold.Addr())})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, pl := range []struct {
		p    *proxyProc
		name string
	}{{ps[0], "Alice"}, {ps[1], "Bob"}, {ps[1], "carol"}} {
		c, f, err := login(ctx, pl.p.proxyAddr, playHost, pl.name)
		if err != nil || f.ID != 0x02 {
			t.Fatalf("%s via %s: %v (packet 0x%02x)", pl.name, pl.p.id, err, f.ID)
		}
		defer c.Close()
	}
	eventually(t, 5*time.Second, "p3 lists the fleet's players", func() bool {
		list, err := ps[2].client.FleetPlayers(ctx, "")
		if err != nil || len(list) != 3 {
			return false
		}
		got := fmt.Sprintf("%s@%s %s@%s %s@%s", list[0].Name, list[0].Proxy, list[1].Name, list[1].Proxy, list[2].Name, list[2].Proxy)
		return got == "Alice@p1 Bob@p2 carol@p2"
	})
	out, _, err := ps[2].cli(t, "players", "list", "--fleet")
	if err != nil || !lineWith(out, "Alice", "p1", "lobby") || !lineWith(out, "carol", "p2", "lobby") {
		t.Fatalf("players list --fleet on p3: %v\n%s", err, out)
	}
	// The counts come with each proxy's next heartbeat (every 200 ms here).
	eventually(t, 5*time.Second, "fleet status on p3 counts everyone", func() bool {
		out, _, err = ps[2].cli(t, "fleet", "status")
		return err == nil && strings.Contains(out, "connected; 3 live proxies, 3 players") &&
			lineWith(out, "p1 ", ps[0].proxyAddr, "1 ") && lineWith(out, "p2 ", ps[1].proxyAddr, "2 ") && lineWith(out, "p3 (this)", "live")
	})
	eventually(t, 5*time.Second, "p1 counts the fleet's players", func() bool {
		st, err := ps[0].client.Fleet(ctx)
		return err == nil && st.Players == 3
	})

	ps[1].kill()
	gone := eventually(t, 10*time.Second, "p2's players leave the fleet", func() bool {
		list, err := ps[2].client.FleetPlayers(ctx, "")
		return err == nil && len(list) == 1 && list[0].Name == "Alice"
	})
	t.Logf("a killed proxy's players left the fleet list %s after the kill (heartbeat_timeout 2s)", gone.Round(time.Millisecond))
	eventually(t, 5*time.Second, "fleet status shows p2 lost", func() bool {
		out, _, _ = ps[0].cli(t, "fleet", "status")
		return lineWith(out, "p2 ", "LOST") && strings.Contains(out, "2 live proxies, 1 players")
	})
}

// Redis dies mid-run: logins go on, changes made meanwhile stay queued (and the
// CLI says so), the metrics and the event stream report the cut; once Redis is
// back every change reaches every proxy.
func TestE2ERedisOutage(t *testing.T) {
	r := startRedis(t)
	one, two := plainBackend(t, "one"), plainBackend(t, "two")
	ps := startFleet(t, r, 3, map[string]string{"lobby": lobbyFile(one.Addr(), two.Addr())})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	stream, err := ps[0].client.Events(ctx, events.FleetConnectivity)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	r.kill()
	for _, p := range ps {
		eventually(t, 10*time.Second, p.id+" reports the cut", func() bool {
			v, ok := p.metric(t, "infrarust_fleet_connected")
			return ok && v == 0
		})
	}
	ev := nextFleetEvent(t, stream)
	if ev.Connected || !strings.Contains(ev.Error, "127.0.0.1") {
		t.Fatalf("fleet.connectivity after the kill: %+v", ev)
	}
	for i, p := range ps {
		name := "During" + strconv.Itoa(i)
		if text, err := loginText(ctx, p.proxyAddr, playHost, name); err != nil || text != "You reached one (as "+name+")" {
			t.Fatalf("login via %s with Redis down: %q %v", p.id, text, err)
		}
	}
	_, errOut, err := ps[0].cli(t, "backends", "drain", "lobby", one.Addr())
	if err != nil || !strings.Contains(errOut, "warning: not shared with the fleet yet") {
		t.Fatalf("drain with Redis down: %v, stderr %q", err, errOut)
	}
	if st := backendState(ps[0], "lobby", one.Addr()); st != "draining" {
		t.Fatalf("p1 itself: %s", st)
	}
	out, errOut, err := ps[1].cli(t, "bans", "add", "--ip", "203.0.113.7")
	if err != nil || !strings.Contains(out, "banned ip 203.0.113.7") || !strings.Contains(errOut, "warning: not shared with the fleet yet") {
		t.Fatalf("ban with Redis down: %v, stdout %q, stderr %q", err, out, errOut)
	}
	out, _, _ = ps[0].cli(t, "fleet", "status")
	if !strings.Contains(out, "DISCONNECTED") || !strings.Contains(out, "1 change(s) made on p1 are not in the fleet yet") {
		t.Fatalf("fleet status with Redis down:\n%s", out)
	}
	if st := backendState(ps[2], "lobby", one.Addr()); st != "healthy" {
		t.Fatalf("p3 drained without Redis: %s", st)
	}

	r.restart()
	back := time.Now()
	for _, p := range ps[1:] {
		eventually(t, 40*time.Second, p.id+" gets the drain made during the outage", func() bool {
			return backendState(p, "lobby", one.Addr()) == "draining"
		})
	}
	for _, p := range []*proxyProc{ps[0], ps[2]} {
		eventually(t, 40*time.Second, p.id+" gets the ban made during the outage", func() bool {
			list, err := p.client.Bans(ctx)
			return err == nil && len(list) == 1 && list[0].Value == "203.0.113.7"
		})
	}
	t.Logf("changes made during the outage reached every proxy %s after Redis came back (reconnect backoff up to 30s)", time.Since(back).Round(time.Millisecond))
	for _, p := range ps {
		eventually(t, 40*time.Second, p.id+" reports the link back", func() bool {
			v, ok := p.metric(t, "infrarust_fleet_connected")
			pending, _ := p.metric(t, "infrarust_fleet_pending_changes")
			return ok && v == 1 && pending == 0
		})
	}
	if ev := nextFleetEvent(t, stream); !ev.Connected {
		t.Fatalf("fleet.connectivity after the restart: %+v", ev)
	}
}

func nextFleetEvent(t *testing.T, s *admin.EventStream) events.Fleet {
	t.Helper()
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		if ev.Type != events.FleetConnectivity {
			continue
		}
		var f events.Fleet
		if err := json.Unmarshal(ev.Data, &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
}

// managedServer is a servers/*.toml for wakeHost managed by the local provider,
// which runs this test binary as a fake server on port.
func managedServer(port int, starts string, hangFirst bool) string {
	args := []string{"-addr", fmt.Sprintf("127.0.0.1:%d", port), "-starts", starts, "-name", "survival"}
	if hangFirst {
		args = append(args, "-hang-first")
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return fmt.Sprintf(`domains = [%q]
addresses = ["127.0.0.1:%d"]

[server_manager]
type = "local"
command = %q
args = [%s]
env = { %s = "1" }
start_timeout = "40s"
poll_interval = "200ms"
shutdown_timeout = "5s"
`, wakeHost, port, testBinary, strings.Join(q, ", "), fakeServerEnv)
}

// startsOf reads the managed server's start log: one "pid parent-pid" per start.
func startsOf(t *testing.T, path string) [][2]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out [][2]int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var pid, ppid int
		if _, err := fmt.Sscanf(line, "%d %d", &pid, &ppid); err == nil {
			out = append(out, [2]int{pid, ppid})
		}
	}
	return out
}

// killStarted kills every managed server process the test started, at cleanup:
// one whose proxy was killed is nobody's child any more.
func killStarted(t *testing.T, path string) {
	t.Cleanup(func() {
		for _, s := range startsOf(t, path) {
			_ = syscall.Kill(s[0], syscall.SIGKILL)
		}
	})
}

func waitState(t *testing.T, p *proxyProc, server, want string) {
	t.Helper()
	eventually(t, 10*time.Second, p.id+" sees "+server+" "+want, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		info, err := p.client.Server(ctx, server)
		return err == nil && info.State == want
	})
}

// Players arrive at three proxies at once for one sleeping server: exactly one
// start, and every player lands on it.
func TestE2EOneWakeForThreeProxies(t *testing.T) {
	r := startRedis(t)
	starts := filepath.Join(t.TempDir(), "starts")
	killStarted(t, starts)
	ps := startFleet(t, r, 3, map[string]string{"survival": managedServer(freePort(t), starts, false)})
	for _, p := range ps {
		waitState(t, p, "survival", "sleeping")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(ps))
	begin := time.Now()
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "Waker" + strconv.Itoa(i)
			text, err := loginText(ctx, p.proxyAddr, wakeHost, name)
			if err == nil && text != "You reached survival (as "+name+")" {
				err = fmt.Errorf("got %q", text)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("login via %s: %v", ps[i].id, err)
		}
	}
	got := startsOf(t, starts)
	if len(got) != 1 {
		t.Fatalf("%d starts across the fleet, want exactly 1: %v", len(got), got)
	}
	t.Logf("three concurrent wakes: one start (by proxy pid %d), every player in after %s", got[0][1], time.Since(begin).Round(time.Millisecond))
	for _, p := range ps {
		waitState(t, p, "survival", "online")
	}
}

// The proxy holding the wake lock dies while the server starts: the next wake,
// through another proxy, succeeds once the lock's TTL has passed.
func TestE2EDeadWakeHolder(t *testing.T) {
	r := startRedis(t)
	starts := filepath.Join(t.TempDir(), "starts")
	killStarted(t, starts)
	ps := startFleet(t, r, 3, map[string]string{"survival": managedServer(freePort(t), starts, true)})
	for _, p := range ps {
		waitState(t, p, "survival", "sleeping")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// p1 takes the lock and starts a server that never comes up.
	go func() { _, _ = loginText(ctx, ps[0].proxyAddr, wakeHost, "First") }()
	eventually(t, 10*time.Second, "p1 starts the server", func() bool { return len(startsOf(t, starts)) == 1 })
	if s := startsOf(t, starts)[0]; s[1] != ps[0].pid() {
		t.Fatalf("the first start was made by pid %d, not p1 (%d)", s[1], ps[0].pid())
	}
	waiting := make(chan error, 1)
	go func() {
		text, err := loginText(ctx, ps[1].proxyAddr, wakeHost, "Second")
		if err == nil && text != "You reached survival (as Second)" {
			err = fmt.Errorf("got %q", text)
		}
		waiting <- err
	}()
	waitState(t, ps[1], "survival", "starting")
	ps[0].kill()
	killed := time.Now()
	if err := <-waiting; err != nil {
		t.Fatalf("the wake through p2 after p1 died: %v", err)
	}
	took := time.Since(killed)
	got := startsOf(t, starts)
	if len(got) != 2 || got[1][1] != ps[1].pid() {
		t.Fatalf("starts %v: want a second one by p2 (pid %d)", got, ps[1].pid())
	}
	t.Logf("after the lock holder died, p2 started the server and let its player in %s later (wake_lock_ttl 3s)", took.Round(time.Millisecond))
}

// lineWith reports whether one line of out holds every part.
func lineWith(out string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// Redis hangs (SIGSTOP: connections open, nothing answers): logins are not held up,
// an operator's drain answers after [fleet] timeout saying it is queued, and it
// reaches the others once Redis answers again.
func TestE2ERedisHung(t *testing.T) {
	r := startRedis(t)
	one, two := plainBackend(t, "one"), plainBackend(t, "two")
	ps := startFleet(t, r, 2, map[string]string{"lobby": lobbyFile(one.Addr(), two.Addr())})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = r.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer resume()
	for i := range 20 {
		name := "Hung" + strconv.Itoa(i)
		start := time.Now()
		text, err := loginText(ctx, ps[i%2].proxyAddr, playHost, name)
		if err != nil || text != "You reached one (as "+name+")" {
			t.Fatalf("login with Redis hung: %q %v", text, err)
		}
		if d := time.Since(start); d > 400*time.Millisecond {
			t.Logf("a login took %s with Redis hung (the [fleet] timeout is 500ms; logins must not wait for it)", d)
		}
	}
	start := time.Now()
	_, errOut, err := ps[0].cli(t, "backends", "drain", "lobby", one.Addr())
	if err != nil || !strings.Contains(errOut, "warning: not shared with the fleet yet") {
		t.Fatalf("drain with Redis hung: %v, stderr %q", err, errOut)
	}
	t.Logf("the drain's answer with Redis hung took %s ([fleet] timeout 500ms)", time.Since(start).Round(time.Millisecond))
	resume()
	eventually(t, 40*time.Second, "p2 gets the drain once Redis answers", func() bool {
		return backendState(ps[1], "lobby", one.Addr()) == "draining"
	})
}

// One player, one session across the fleet (duplicate_login = "replace", the
// default), with real clients on an offline server: Alice on p1 logs in again
// through p2, and p1 ends her older session ("You logged in from another
// location") once p2's claim reaches it through Redis; the newer one goes on.
func TestE2EOnePlayerOneSessionAcrossTheFleet(t *testing.T) {
	h := nmp.Setup(t)
	const v = "1.21.4"
	r := startRedis(t)
	b := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond})
	file := fmt.Sprintf("domains = [%q]\naddresses = [%q]\nproxy_mode = \"offline\"\n", playHost, b.Addr)
	ps := startFleet(t, r, 2, map[string]string{"lobby": file})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := h.StartClient(t)
	type run struct {
		res nmp.LoginResult
		err error
	}
	older := make(chan run, 1)
	go func() {
		res, err := client.Login(ctx, nmp.LoginOptions{Addr: ps[0].proxyAddr, ServerHost: playHost, Version: v, Username: "Alice",
			UntilKicked: true, Tick: 200 * time.Millisecond, Timeout: time.Minute})
		older <- run{res, err}
	}()
	if _, err := b.Wait(ctx, nmp.Match("join", "Alice")); err != nil {
		t.Fatal(err)
	}
	newer := make(chan run, 1)
	go func() {
		res, err := client.Login(ctx, nmp.LoginOptions{Addr: ps[1].proxyAddr, ServerHost: playHost, Version: v, Username: "Alice",
			Stay: 3 * time.Second, Tick: 200 * time.Millisecond, Timeout: time.Minute})
		newer <- run{res, err}
	}()
	joins := 0
	if _, err := b.Wait(ctx, func(e nmp.Event) bool {
		if e.Event == "join" && e.Username == "Alice" {
			joins++
		}
		return joins == 2
	}); err != nil {
		t.Fatal(err)
	}
	joined := time.Now()
	o := <-older
	replacedAfter := time.Since(joined)
	if o.err != nil {
		t.Fatal(o.err)
	}
	if !o.res.Kicked || o.res.KickReason != "You logged in from another location" {
		t.Fatalf("Alice's older session through p1 must be replaced: %s", o.res.Raw)
	}
	n := <-newer
	if n.err != nil || !n.res.OK || n.res.Kicked {
		t.Fatalf("Alice's newer session through p2 must go on: %s %v", n.res.Raw, n.err)
	}
	t.Logf("the older session's client had its kick %s after the backend saw the newer join (at most: the claim is published when the login is checked, before the backend)", replacedAfter.Round(time.Millisecond))
	if !strings.Contains(ps[0].logText(), "a login on another proxy of the fleet replaces a player's session here") {
		t.Errorf("p1 did not log why it ended the session:\n%s", ps[0].logText())
	}
}

// In-game commands across the fleet: Boss, an admin on p1, finds Pat, who plays
// through p2, lists him with /glist all, sends him to games (p2 carries it out:
// the backend sees Pat join games) and kicks him (p2 ends his session with the
// reason Boss typed).
func TestE2ECommandsAcrossTheFleet(t *testing.T) {
	h := nmp.Setup(t)
	const v = "1.21.4"
	r := startRedis(t)
	lobbyB := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond})
	gamesB := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond})
	file := func(host, addr string) string {
		return fmt.Sprintf("domains = [%q]\naddresses = [%q]\nproxy_mode = \"offline\"\nnetwork = \"main\"\n", host, addr)
	}
	ps := startFleetWith(t, r, 2, map[string]string{"lobby": file(playHost, lobbyB.Addr), "games": file("games.test", gamesB.Addr)},
		"\n[permissions]\nadmins = [\"Boss\"]\ntrust_offline_admins = true\n")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := h.StartClient(t)
	pat := make(chan nmp.LoginResult, 1)
	go func() {
		res, _ := client.Login(ctx, nmp.LoginOptions{Addr: ps[1].proxyAddr, ServerHost: playHost, Version: v, Username: "Pat",
			UntilKicked: true, Tick: 200 * time.Millisecond, Timeout: time.Minute})
		pat <- res
	}()
	if _, err := lobbyB.Wait(ctx, nmp.Match("join", "Pat")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "p1 knows Pat is on p2", func() bool {
		list, err := ps[0].client.FleetPlayers(ctx, "")
		return err == nil && len(list) == 1 && list[0].Name == "Pat" && list[0].Proxy == "p2"
	})
	boss := make(chan nmp.LoginResult, 1)
	go func() {
		res, _ := client.Login(ctx, nmp.LoginOptions{Addr: ps[0].proxyAddr, ServerHost: playHost, Version: v, Username: "Boss",
			UntilKicked: true, Tick: 200 * time.Millisecond, Timeout: time.Minute,
			Commands: []string{"/find Pat", "/glist all", "/send Pat games"}, CommandGap: 600 * time.Millisecond})
		boss <- res
	}()
	if _, err := gamesB.Wait(ctx, nmp.Match("join", "Pat")); err != nil {
		t.Fatalf("Boss's /send on p1 did not move Pat, who is on p2: %v", err)
	}
	if _, err := ps[0].client.KickPlayer(ctx, "Boss", "done"); err != nil {
		t.Fatal(err)
	}
	b := <-boss
	for _, want := range []string{"Pat is on lobby", "Pat", "Sent 1 of 1 to games"} {
		found := false
		for _, l := range b.Chats {
			found = found || strings.Contains(stripCodes(l), want)
		}
		if !found {
			t.Errorf("Boss was not told %q: %q", want, b.Chats)
		}
	}
	// A kick typed on p1 for a player on p2.
	boss2 := make(chan nmp.LoginResult, 1)
	go func() {
		res, _ := client.Login(ctx, nmp.LoginOptions{Addr: ps[0].proxyAddr, ServerHost: playHost, Version: v, Username: "Boss",
			UntilKicked: true, Timeout: time.Minute, Commands: []string{"/kick Pat enough for today"}})
		boss2 <- res
	}()
	p := <-pat
	if !p.Kicked || p.KickReason != "enough for today" {
		t.Fatalf("Pat was not kicked by p2 with Boss's reason: %s", p.Raw)
	}
	if _, err := ps[0].client.KickPlayer(ctx, "Boss", "done"); err != nil {
		t.Fatal(err)
	}
	<-boss2
	if !strings.Contains(ps[1].logText(), "fleet command carried out") {
		t.Errorf("p2 did not log the commands it carried out:\n%s", ps[1].logText())
	}
}

func stripCodes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], "§") && i+len("§") < len(s) {
			i += len("§")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
