package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// networkVersions are the clients the limbo and the moves are tried with: 1.8.8 (no
// registry data; a switch is the dimension-flip respawn), 1.16.5 (registry data in
// the join game; titles still one packet) and the two newest families, where the
// limbo and a switch go through the configuration phase.
var networkVersions = []string{"1.8.8", "1.16.5", "1.20.4", "1.21.4"}

// vanillaTimeout is how long a vanilla client waits for a keep-alive before it
// gives up on the server; the clients here are held to it.
const vanillaTimeout = 30 * time.Second

// wakeDelay is how long the woken server takes to listen: longer than any login
// screen waits.
const wakeDelay = 45 * time.Second

// kickReason ends every held client's run: a client that reports it was kicked
// with these words was connected until the test was done with it.
const kickReason = "e2e: done"

// loginRun is a login that ran in the background.
type loginRun struct {
	res nmp.LoginResult
	err error
}

// goLogin runs a login on c in the background (c runs it beside the others).
func goLogin(ctx context.Context, c *nmp.Client, o nmp.LoginOptions) <-chan loginRun {
	ch := make(chan loginRun, 1)
	go func() {
		r, err := c.Login(ctx, o)
		ch <- loginRun{r, err}
	}()
	return ch
}

// heldLogin is a player who stays until kicked, ticking, and gives up on a silent
// server as a vanilla client does.
func heldLogin(proxyAddr, domain, version, name string) nmp.LoginOptions {
	return nmp.LoginOptions{
		Addr: proxyAddr, ServerHost: domain, Version: version, Username: name,
		UntilKicked: true, Tick: 200 * time.Millisecond, KeepAliveTimeout: vanillaTimeout,
		Timeout: 3 * time.Minute,
	}
}

// kickedByUs waits for a held login's report and checks it stayed connected
// until the test kicked it.
func kickedByUs(t *testing.T, name string, ch <-chan loginRun) nmp.LoginResult {
	t.Helper()
	run := <-ch
	if run.err != nil {
		t.Fatalf("%s: %v", name, run.err)
	}
	r := run.res
	if !r.OK || !r.Kicked || r.KickReason != kickReason {
		t.Errorf("%s must stay connected until the test kicks it (%q): %s", name, kickReason, r.Raw)
	}
	if r.MaxKeepAliveGapMS >= int(vanillaTimeout/time.Millisecond) {
		t.Errorf("%s waited %d ms for a keep-alive: a vanilla client would have left", name, r.MaxKeepAliveGapMS)
	}
	return r
}

// kick disconnects a player through the admin API.
//
// A backend sees a player join a moment before the proxy lists them (the proxy
// finishes the client's login once the backend's is done), and a test that
// waits on the backend's join can ask in between; on a loaded machine it did.
// So "no such player" is asked again for up to kickWait, as an operator
// would; any other error, or a player still missing then, fails the test.
func kick(ctx context.Context, t *testing.T, api *admin.Client, name string) {
	t.Helper()
	deadline := time.Now().Add(kickWait)
	for {
		_, err := api.KickPlayer(ctx, name, kickReason)
		if err == nil {
			return
		}
		var ae *admin.APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || time.Now().After(deadline) {
			t.Fatalf("kick %s: %v", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kickWait bounds how long kick waits for the proxy to list a player.
const kickWait = 5 * time.Second

// playerFeed follows the proxy's player.join events (the admin API's SSE stream),
// subscribed before the test's first login, so tests wait on what the proxy
// reports instead of polling it.
type playerFeed struct {
	mu      sync.Mutex
	joins   []events.Player
	err     error         // why the stream ended
	changed chan struct{} // closed and replaced at every change
}

// followPlayers subscribes to api's player.join events until the test ends.
func followPlayers(ctx context.Context, t *testing.T, api *admin.Client) *playerFeed {
	t.Helper()
	stream, err := api.Events(ctx, events.PlayerJoin)
	if err != nil {
		t.Fatalf("subscribe to the player events: %v", err)
	}
	f := &playerFeed{changed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := stream.Next()
			var p events.Player
			if err == nil {
				err = json.Unmarshal(ev.Data, &p)
			}
			f.mu.Lock()
			if err != nil {
				f.err = err
			} else {
				f.joins = append(f.joins, p)
			}
			close(f.changed)
			f.changed = make(chan struct{})
			f.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = stream.Close()
		<-done
	})
	return f
}

// waitJoin waits for the proxy's player.join of name that match accepts.
func (f *playerFeed) waitJoin(ctx context.Context, t *testing.T, name string, match func(events.Player) bool) events.Player {
	t.Helper()
	for seen := 0; ; {
		f.mu.Lock()
		for ; seen < len(f.joins); seen++ {
			if p := f.joins[seen]; p.Username == name && match(p) {
				f.mu.Unlock()
				return p
			}
		}
		err, changed := f.err, f.changed
		f.mu.Unlock()
		if err != nil {
			t.Fatalf("waiting for %s to join: the event stream ended: %v", name, err)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("%s never joined as expected: %v", name, ctx.Err())
		}
	}
}

// waitHeld waits until the proxy reports the player joined in the limbo.
func (f *playerFeed) waitHeld(ctx context.Context, t *testing.T, name string) events.Player {
	t.Helper()
	return f.waitJoin(ctx, t, name, func(p events.Player) bool { return p.Address == "limbo" })
}

// waitAlive waits until the player's ticks tell srv that, in their world number
// minWorld or later, they received several of srv's tick echoes and keep-alives:
// the client is on srv and gets its packets.
func waitAlive(ctx context.Context, t *testing.T, srv *nmp.Server, name string, minWorld int) nmp.Event {
	t.Helper()
	ev, err := srv.Wait(ctx, func(e nmp.Event) bool {
		return e.Event == "alive" && e.Username == name && e.Worlds >= minWorld && e.SeenEchoes >= 3 && e.SeenKeepAlives >= 2
	})
	if err != nil {
		t.Fatalf("%s never told the server it gets its packets: %v", name, err)
	}
	return ev
}

// nthJoin waits for the server's n-th join event and returns who joined.
func nthJoin(ctx context.Context, t *testing.T, srv *nmp.Server, n int) string {
	t.Helper()
	seen := 0
	ev, err := srv.Wait(ctx, func(e nmp.Event) bool {
		if e.Event == "join" {
			seen++
		}
		return seen == n
	})
	if err != nil {
		t.Fatalf("waiting for join number %d: %v", n, err)
	}
	return ev.Username
}

// A sleeping managed server whose start takes 45 s, longer than any login screen
// waits: a real client is held in the proxy's limbo, kept alive with keep-alives
// (it gives up after 30 s without one, as vanilla does) and shown the wake title,
// until the local server manager's process listens; then it lands on the server and
// gets its packets. The three versions' waits overlap: each scenario is set up and
// its player sent in before the first is checked, so the whole costs one wait.
func TestRealClientWakeHeldInLimbo(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	type wake struct {
		version string
		server  *nmp.Server // the events of the server the proxy starts
		api     *admin.Client
		feed    *playerFeed
		run     <-chan loginRun
	}
	var wakes []wake
	for _, v := range networkVersions {
		cmd := h.ServerCommand(t, nmp.ServerOptions{
			Version: v, Port: nmp.FreePort(t), Delay: wakeDelay,
			KeepAlive: 250 * time.Millisecond, ReportAlive: true,
		})
		srv := intercepted(config.ModeOffline, "wake-"+strings.ReplaceAll(v, ".", "-")+".e2e.test", cmd.Events.Addr)
		srv.ID = "sleepy"
		srv.LimboHandlers = []config.LimboHandler{config.LimboWake}
		srv.ServerManager = &config.ServerManager{
			Type: "local", Command: cmd.Command, Args: cmd.Args,
			StartTimeout:    config.Duration(3 * time.Minute), // above the 45 s start, with room for a slow machine
			PollInterval:    config.Duration(250 * time.Millisecond),
			ShutdownTimeout: config.Duration(5 * time.Second),
		}
		proxyAddr, adminURL := startWithAdmin(t, srv)
		api := admin.NewClient(adminURL, e2eAdminKey)
		feed := followPlayers(ctx, t, api)
		client := h.StartClient(t)
		wakes = append(wakes, wake{
			version: v, server: cmd.Events, api: api, feed: feed,
			run: goLogin(ctx, client, heldLogin(proxyAddr, srv.Domains[0], v, "Sleeper")),
		})
	}
	// First every player is in the limbo, seconds into the 45 s start; then each
	// lands. The subtests run in turn: the waits themselves overlap.
	t.Run("held", func(t *testing.T) {
		for _, w := range wakes {
			t.Run(w.version, func(t *testing.T) {
				w.feed.waitHeld(ctx, t, "Sleeper")
				// The login started the server's process: it says so before its slow start.
				if _, err := w.server.Wait(ctx, nmp.Match("starting", "")); err != nil {
					t.Fatalf("the proxy did not run the server's command: %v", err)
				}
				if info, err := w.api.Server(ctx, "sleepy"); err != nil || info.State != "starting" {
					t.Errorf("while the player waits the server must be starting: %+v, %v", info, err)
				}
			})
		}
	})
	t.Run("landed", func(t *testing.T) {
		for _, w := range wakes {
			t.Run(w.version, func(t *testing.T) {
				if _, err := w.server.Wait(ctx, nmp.Match("join", "Sleeper")); err != nil {
					t.Fatal(err)
				}
				waitAlive(ctx, t, w.server, "Sleeper", 2)
				kick(ctx, t, w.api, "Sleeper")
				r := kickedByUs(t, "Sleeper", w.run)
				if len(r.Worlds) < 2 {
					t.Fatalf("want the limbo's world, then the server's: %s", r.Raw)
				}
				limbo, landed := r.Worlds[0], r.Worlds[1]
				waited := time.Duration(landed.MS-limbo.MS) * time.Millisecond
				// The server listened 45 s after it was started, and it was started for this
				// player: the player spent those in the limbo, which answers no plugin message.
				if waited < wakeDelay-5*time.Second || landed.TicksEchoed != 0 {
					t.Errorf("held %v with %d tick echoes: want the whole slow start (%v), with none", waited, landed.TicksEchoed, wakeDelay)
				}
				// Keep-alives every 15 s from the limbo: a client that times out after 30 s stays.
				if landed.KeepAlives < 2 {
					t.Errorf("the limbo sent %d keep-alives in %v; want one every 15 s", landed.KeepAlives, waited)
				}
				if !slices.Contains(r.Titles, "Waking up sleepy") || !anyMatch(r.Subtitles, `^\d+ s — you will be moved in when it is ready$`) {
					t.Errorf("want the wake title and its countdown; got titles %q, subtitles %q", r.Titles, r.Subtitles)
				}
				t.Logf("%s: held in the limbo %v (%d keep-alives there, longest gap %d ms), then on the server",
					w.version, waited.Round(100*time.Millisecond), landed.KeepAlives, r.MaxKeepAliveGapMS)
			})
		}
	})
}

// A full server (a real backend that takes one player) with the queue handler: the
// one on it plays, three players who arrive in turn are held in the limbo with
// their place in the queue, then a queue_priority player arrives last. As players
// leave one at a time the held ones are let in strictly in order, the priority
// player first, as the server's own join log shows.
func TestRealClientQueue(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	for _, v := range networkVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			srv := h.StartServer(t, nmp.ServerOptions{Version: v, MaxOnline: 1, MaxPlayers: 1, KeepAlive: 250 * time.Millisecond, ReportAlive: true})
			busy := intercepted(config.ModeOffline, "queue-"+strings.ReplaceAll(v, ".", "-")+".e2e.test", srv.Addr)
			busy.ID = "busy"
			busy.LimboHandlers = []config.LimboHandler{config.LimboQueue}
			busy.QueuePriority = []string{"Vip"}
			proxyAddr, adminURL := startWithAdmin(t, busy)
			api := admin.NewClient(adminURL, e2eAdminKey)
			feed := followPlayers(ctx, t, api)
			client := h.StartClient(t)
			runs := map[string]<-chan loginRun{}
			login := func(name string) {
				runs[name] = goLogin(ctx, client, heldLogin(proxyAddr, busy.Domains[0], v, name))
			}

			login("Holder")
			if _, err := srv.Wait(ctx, nmp.Match("join", "Holder")); err != nil {
				t.Fatal(err)
			}
			arrivals := []string{"First", "Second", "Third", "Vip"}
			for i, name := range arrivals {
				login(name)
				feed.waitHeld(ctx, t, name)
				if i == 0 {
					// Held because the server itself said it is full.
					if ev, err := srv.Wait(ctx, nmp.Match("kick", name)); err != nil || ev.Stage != "login" || ev.Text != "The server is full!" {
						t.Fatalf("the backend must have turned %s away as full: %+v, %v", name, ev, err)
					}
				}
			}
			// Only the head tries the server (it reports one slot), every 2 s, and First
			// was the head until Vip jumped ahead: a try of First's begun just before
			// could still take the slot Holder leaves. Vip's own retry comes 2 s after
			// its first try as the head; once the server has turned Vip away twice,
			// First's last try is long over.
			waitEvents(ctx, t, srv, "kick", "Vip", 2)
			// Second and Third were queued without trying the server (players already
			// waited: nobody goes ahead of them) and, never the head, never tried it.
			for _, e := range srv.Events() {
				if e.Event == "login" && (e.Username == "Second" || e.Username == "Third") {
					t.Fatalf("%s tried the server while not at the head of its queue: %s", e.Username, e.Raw)
				}
			}
			order := []string{"Holder", "Vip", "First", "Second", "Third"}
			for i, name := range order[:len(order)-1] {
				kick(ctx, t, api, name)
				next := nthJoin(ctx, t, srv, i+2)
				if next != order[i+1] {
					t.Fatalf("after %s left, %s got in; want %s (the order is %v)", name, next, order[i+1], order)
				}
				// In and playing (its world after the limbo's) before it is sent away:
				// a kick can overtake the world a player is still being sent.
				waitAlive(ctx, t, srv, next, 2)
			}
			kick(ctx, t, api, order[len(order)-1])

			if r := kickedByUs(t, "Holder", runs["Holder"]); len(r.Worlds) != 1 {
				t.Errorf("Holder was never held, so never changed worlds: %s", r.Raw)
			}
			positions := map[string][]int{}
			for _, name := range arrivals {
				r := kickedByUs(t, name, runs[name])
				if len(r.Worlds) < 2 || r.Worlds[1].TicksEchoed != 0 {
					t.Errorf("%s: want the limbo's world without echoes, then the server's: %s", name, r.Raw)
				}
				if !slices.Contains(r.Titles, "busy is full") {
					t.Errorf("%s: want the queue title; got %q", name, r.Titles)
				}
				for _, s := range r.Subtitles {
					if m := regexp.MustCompile(`^You are #(\d+) in the queue$`).FindStringSubmatch(s); m != nil {
						n, _ := strconv.Atoi(m[1])
						positions[name] = append(positions[name], n)
					}
				}
				if len(positions[name]) == 0 {
					t.Errorf("%s was never shown a queue position: %q", name, r.Subtitles)
				}
			}
			// The priority player went ahead of everyone at once; Third came when two
			// were waiting.
			if p := positions["Vip"]; len(p) == 0 || p[0] != 1 {
				t.Errorf("Vip's positions %v: want #1 from the start", p)
			}
			if p := positions["Third"]; len(p) == 0 || p[0] < 3 {
				t.Errorf("Third's positions %v: want #3 or later first", p)
			}
			t.Logf("%s: let in %v; positions shown %v", v, order, positions)
		})
	}
}

// Four real clients spread over the two addresses of a server; `infrarust
// backends drain --move` on one of them, run as an operator does, moves its
// players to the other: the CLI reports how many moved, the drained address ends
// with no players and no connections, and every client stays connected, getting
// the other backend's keep-alives and plugin-message echoes.
func TestRealClientDrainMove(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	bin := infrarustBinary(t)
	for _, v := range networkVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			backends := map[string]*nmp.Server{}
			a := h.StartServer(t, nmp.ServerOptions{Version: v, MOTD: "A", KeepAlive: 250 * time.Millisecond, ReportAlive: true})
			b := h.StartServer(t, nmp.ServerOptions{Version: v, MOTD: "B", KeepAlive: 250 * time.Millisecond, ReportAlive: true})
			backends[a.Addr], backends[b.Addr] = a, b
			srv := intercepted(config.ModeOffline, "drain-"+strings.ReplaceAll(v, ".", "-")+".e2e.test", a.Addr)
			srv.ID = "lobby"
			srv.Addresses = append(srv.Addresses, config.Address{Address: b.Addr, Weight: 1})
			srv.Balance = balance.LeastConn
			proxyAddr, adminURL := startWithAdmin(t, srv)
			api := admin.NewClient(adminURL, e2eAdminKey)
			feed := followPlayers(ctx, t, api)
			client := h.StartClient(t)

			names := []string{"Ann", "Bob", "Cid", "Dee"}
			runs := map[string]<-chan loginRun{}
			where := map[string]string{} // name -> address before the drain
			for _, name := range names {
				// One after the other, so least_conn sees the one before on its address.
				runs[name] = goLogin(ctx, client, heldLogin(proxyAddr, srv.Domains[0], v, name))
				where[name] = feed.waitJoin(ctx, t, name, func(events.Player) bool { return true }).Address
			}
			for _, name := range names {
				waitAlive(ctx, t, backends[where[name]], name, 1)
			}
			var moved []string
			for _, name := range names {
				if where[name] == a.Addr {
					moved = append(moved, name)
				}
			}
			if len(moved) == 0 || len(moved) == len(names) {
				t.Fatalf("least_conn must spread the players over both addresses: %v", where)
			}

			out, err := exec.CommandContext(ctx, bin, "backends", "drain", "--move", "lobby", a.Addr,
				"--admin-url", adminURL, "--api-key", e2eAdminKey).CombinedOutput()
			if err != nil {
				t.Fatalf("infrarust backends drain --move: %v\n%s", err, out)
			}
			if want := fmt.Sprintf("moved %d player(s), 0 stayed", len(moved)); !strings.Contains(string(out), want) {
				t.Errorf("the CLI must report %q:\n%s", want, out)
			}
			list, err := api.Players(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != len(names) {
				t.Errorf("every player must still be connected after the drain: %+v", list)
			}
			for _, p := range list {
				if p.Address != b.Addr || p.Server != "lobby" {
					t.Errorf("%s is on %s %s after draining %s; want %s", p.Name, p.Server, p.Address, a.Addr, b.Addr)
				}
			}
			waitNoConnections(ctx, t, api, "lobby", a.Addr)
			for _, name := range moved {
				if _, err := b.Wait(ctx, nmp.Match("join", name)); err != nil {
					t.Fatal(err)
				}
				// A world after the first: what the client tells B it received came
				// after the move, from B.
				waitAlive(ctx, t, b, name, 2)
				if left, err := a.Wait(ctx, nmp.Match("leave", name)); err != nil || left.Payloads == 0 {
					t.Errorf("%s must have been echoed on A before it left: %+v, %v", name, left, err)
				}
			}
			for _, name := range names {
				kick(ctx, t, api, name)
			}
			for _, name := range names {
				r := kickedByUs(t, name, runs[name])
				worlds := 1
				if where[name] == a.Addr {
					worlds = 2 // a 1.20.2+ Join Game, or the respawns a switch is before
				}
				if len(r.Worlds) < worlds {
					t.Errorf("%s: %d world(s), want at least %d: %s", name, len(r.Worlds), worlds, r.Raw)
				}
			}
			t.Logf("%s: CLI said %q; moved %v from A to B", v, strings.TrimSpace(string(out)), moved)
		})
	}
}

// A server in maintenance (switched on and off with the CLI) with the maintenance
// handler: a real client is held in the limbo with the maintenance title while a
// staff member walks in; when maintenance ends the held player is let in.
func TestRealClientMaintenance(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	bin := infrarustBinary(t)
	for _, v := range networkVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			srv := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true})
			closed := intercepted(config.ModeOffline, "maint-"+strings.ReplaceAll(v, ".", "-")+".e2e.test", srv.Addr)
			closed.ID = "closed"
			closed.LimboHandlers = []config.LimboHandler{config.LimboMaintenance}
			closed.MaintenanceStaff = []string{"Staff"}
			proxyAddr, adminURL := startWithAdmin(t, closed)
			api := admin.NewClient(adminURL, e2eAdminKey)
			feed := followPlayers(ctx, t, api)
			client := h.StartClient(t)
			maintenance := func(state string) {
				t.Helper()
				out, err := exec.CommandContext(ctx, bin, "servers", "maintenance", "closed", state,
					"--admin-url", adminURL, "--api-key", e2eAdminKey).CombinedOutput()
				if err != nil {
					t.Fatalf("infrarust servers maintenance closed %s: %v\n%s", state, err, out)
				}
			}

			maintenance("on")
			waiter := goLogin(ctx, client, heldLogin(proxyAddr, closed.Domains[0], v, "Waiter"))
			feed.waitHeld(ctx, t, "Waiter")
			staff := goLogin(ctx, client, heldLogin(proxyAddr, closed.Domains[0], v, "Staff"))
			if _, err := srv.Wait(ctx, nmp.Match("join", "Staff")); err != nil {
				t.Fatal(err)
			}
			for _, e := range srv.Events() {
				if e.Username == "Waiter" {
					t.Fatalf("the server saw Waiter during maintenance: %s", e.Raw)
				}
			}
			maintenance("off")
			if _, err := srv.Wait(ctx, nmp.Match("join", "Waiter")); err != nil {
				t.Fatal(err)
			}
			waitAlive(ctx, t, srv, "Waiter", 2)
			waitAlive(ctx, t, srv, "Staff", 1)
			kick(ctx, t, api, "Waiter")
			kick(ctx, t, api, "Staff")
			r := kickedByUs(t, "Waiter", waiter)
			if len(r.Worlds) < 2 || !slices.Contains(r.Titles, "closed is under maintenance") {
				t.Errorf("Waiter: want the limbo with the maintenance title, then the server: %s", r.Raw)
			}
			if s := kickedByUs(t, "Staff", staff); len(s.Worlds) != 1 || len(s.Titles) != 0 {
				t.Errorf("Staff must go straight to the server: %s", s.Raw)
			}
		})
	}
}

// waitNoConnections waits until the balancer counts no connection on addr.
func waitNoConnections(ctx context.Context, t *testing.T, api *admin.Client, server, addr string) {
	t.Helper()
	for {
		bs, err := api.Backends(ctx, server)
		if err != nil {
			t.Fatalf("backends: %v", err)
		}
		for _, b := range bs.Backends {
			if b.Address == addr && b.ActiveConnections == 0 && b.State == "draining" {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s of %s never got to draining with no connection: %+v", addr, server, bs.Backends)
		case <-time.After(250 * time.Millisecond): // the admin API allows 60 requests a minute
		}
	}
}

// anyMatch reports whether a string of list matches the regular expression.
func anyMatch(list []string, expr string) bool {
	re := regexp.MustCompile(expr)
	return slices.ContainsFunc(list, re.MatchString)
}
