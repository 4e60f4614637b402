package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/events"
)

// fleetFixture is fixture() on proxy eu-1 of a two-proxy fleet. Its fleet list
// has eu-1's players as Redis had them a heartbeat ago (Notch still on lobby,
// dinnerbone not yet there) and eu-2's: Steve, carol, and another Alex.
func fleetFixture() (Snapshot, []admin.FleetPlayer) {
	snap := fixture()
	snap.Fleet = &admin.FleetStatus{Enabled: true, ID: "eu-1", Connected: true, LiveProxies: 2, Players: 8}
	var list []admin.FleetPlayer
	for _, p := range snap.Players {
		switch p.Name {
		case "dinnerbone":
			continue
		case "Notch":
			p.Server = "lobby"
		}
		list = append(list, admin.FleetPlayer{Player: p, Proxy: "eu-1"})
	}
	list = append(list,
		admin.FleetPlayer{Player: admin.Player{Name: "Steve", Server: "survival", Address: "10.0.0.2:25565", Version: "1.21.4",
			ProxyMode: "offline", Since: t0.Add(-5 * time.Minute), Switchable: true}, Proxy: "eu-2"},
		admin.FleetPlayer{Player: admin.Player{Name: "carol", Server: "lobby", Address: "127.0.0.1:25566", Protocol: 767,
			ProxyMode: "passthrough", Since: t0.Add(-4 * time.Hour)}, Proxy: "eu-2"},
		admin.FleetPlayer{Player: admin.Player{Name: "Alex", Server: "creative", Address: "10.0.1.9:25565", Version: "1.20.1",
			ProxyMode: "client_only", Since: t0.Add(-time.Minute), Switchable: true}, Proxy: "eu-2"},
	)
	return snap, list
}

// inFleet is a dashboard of eu-1 at 80x24, connected, players pane hidden, fleet mode off.
func inFleet(t *testing.T) (*harness, *fakeClient) {
	t.Helper()
	snap, list := fleetFixture()
	fc := &fakeClient{snap: snap, fleet: list}
	h := newHarness(t, fc, nil)
	fc.clock = func() time.Time { return h.now }
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.send(snapshotMsg{snap: snap})
	if h.m.conn != connUp {
		t.Fatalf("conn %d", h.m.conn)
	}
	return h, fc
}

// rowKeys names rows as proxy/name.
func rowKeys(ps []playerRow) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.proxy + "/" + p.Name
	}
	return out
}

// selectRow moves the players cursor to name on proxy.
func selectRow(t *testing.T, h *harness, proxy, name string) {
	t.Helper()
	h.keys("g")
	for i := 0; h.m.selPlayer != name || h.m.selProxy != proxy; i++ {
		if i > 20 {
			t.Fatalf("no row %s/%s in %v", proxy, name, rowKeys(h.m.visiblePlayers()))
		}
		h.keys("j")
	}
}

func TestFleetKeyNeedsAFleet(t *testing.T) {
	h, fc := loaded(t)
	h.keys("p")
	if v := h.m.View(); strings.Contains(v, "f fleet") || strings.Contains(v, "this proxy") {
		t.Fatalf("fleet mode offered without a fleet:\n%s", v)
	}
	h.keys("f")
	if h.m.fleetShown() || !strings.Contains(h.m.status, "not in a fleet") {
		t.Fatalf("f without a fleet: shown %v status %q", h.m.fleetShown(), h.m.status)
	}
	if fc.fleetRequests != 0 {
		t.Fatalf("%d fleet requests without a fleet", fc.fleetRequests)
	}
	if got := rowKeys(h.m.visiblePlayers()); !slices.Equal(got, []string{"/Alex", "/dinnerbone", "/Herobrine", "/jeb_", "/Notch"}) {
		t.Fatalf("rows %v", got)
	}
}

func TestFleetKeyShowsTheHiddenPane(t *testing.T) {
	h, fc := inFleet(t) // 80x24: the pane is hidden
	h.keys("f")
	if !h.m.playersVisible() || !h.m.fleetShown() || h.m.focus != panePlayers || fc.fleetRequests != 1 {
		t.Fatalf("f with the pane hidden: visible %v fleet %v focus %d requests %d",
			h.m.playersVisible(), h.m.fleetShown(), h.m.focus, fc.fleetRequests)
	}
	h.keys("f")
	if !h.m.playersVisible() || h.m.fleetShown() || h.m.status != "players: this proxy only" {
		t.Fatalf("f again: visible %v fleet %v status %q", h.m.playersVisible(), h.m.fleetShown(), h.m.status)
	}
	// A reload that takes the proxy out of the fleet takes the pane back to its own players.
	h.keys("f")
	snap := h.m.snap
	snap.Fleet = nil
	h.send(snapshotMsg{snap: snap})
	if h.m.fleetShown() || len(h.m.visiblePlayers()) != 5 || strings.Contains(ansi.Strip(h.m.View()), "PROXY") {
		t.Fatalf("fleet view without a fleet: %v", rowKeys(h.m.visiblePlayers()))
	}
}

func TestFleetModeListsEveryProxysPlayers(t *testing.T) {
	h, fc := inFleet(t)
	h.keys("p")
	v := ansi.Strip(h.m.View())
	if !strings.Contains(v, "PLAYERS 5 · this proxy eu-1 · sort server") || !strings.Contains(v, "f fleet") || strings.Contains(v, "PROXY") {
		t.Fatalf("local mode of a fleet proxy:\n%s", v)
	}
	if fc.fleetRequests != 0 {
		t.Fatal("local mode asked for the fleet's players")
	}

	// f lists the fleet at once: eu-1's rows are the live ones (Notch on
	// survival, dinnerbone there), eu-2's come from the fleet list.
	h.keys("f")
	if fc.fleetRequests != 1 || !h.m.fleetShown() || h.m.focus != panePlayers {
		t.Fatalf("f: %d requests, shown %v, focus %d", fc.fleetRequests, h.m.fleetShown(), h.m.focus)
	}
	want := []string{"eu-2/Alex", "eu-1/Alex", "eu-2/carol", "eu-1/dinnerbone", "eu-1/Herobrine", "eu-1/jeb_", "eu-1/Notch", "eu-2/Steve"}
	if got := rowKeys(h.m.visiblePlayers()); !slices.Equal(got, want) {
		t.Fatalf("fleet rows by server\n got %v\nwant %v", got, want)
	}
	v = ansi.Strip(h.m.View())
	for _, w := range []string{"PLAYERS 8 · whole fleet · sort server", "NAME", "PROXY", "SERVER", "ONLINE", "f this proxy",
		"Steve      eu-2  survival", "Notch      eu-1  survival"} {
		if !strings.Contains(v, w) {
			t.Errorf("fleet view lacks %q:\n%s", w, v)
		}
	}

	// Sorting works on the fleet's rows; two Alexes keep apart by proxy.
	h.keys("s")
	if got := rowKeys(h.m.visiblePlayers()); !slices.Equal(got, []string{"eu-1/Alex", "eu-2/Alex", "eu-2/carol", "eu-1/dinnerbone",
		"eu-1/Herobrine", "eu-1/jeb_", "eu-1/Notch", "eu-2/Steve"}) {
		t.Fatalf("by name %v", got)
	}
	selectRow(t, h, "eu-2", "Alex")
	h.keys("s") // longest online first
	if got := rowKeys(h.m.visiblePlayers())[:2]; !slices.Equal(got, []string{"eu-2/carol", "eu-1/Notch"}) || h.m.selProxy != "eu-2" {
		t.Fatalf("by online time %v, selected %s/%s", got, h.m.selProxy, h.m.selPlayer)
	}

	// A live event moves this proxy's rows at once, without a request.
	before := fc.fleetRequests
	h.m.stream = &fakeStream{}
	h.holdStreams()
	h.sendOnly(eventMsg{stream: h.m.stream, ev: Event{Type: events.PlayerJoin, Time: h.now,
		Data: mustJSON(t, events.Player{Server: "lobby", Address: "127.0.0.1:25566", Username: "Zed"})}})
	if !slices.Contains(rowKeys(h.m.visiblePlayers()), "eu-1/Zed") || fc.fleetRequests != before {
		t.Fatalf("join not in the fleet rows (%v), or it cost a request", rowKeys(h.m.visiblePlayers()))
	}

	// f again: this proxy only, the cursor still on a row of it.
	h.keys("f")
	if h.m.fleetShown() || len(h.m.visiblePlayers()) != 6 || h.m.selProxy != "eu-1" {
		t.Fatalf("back to local: shown %v rows %v selected %s/%s", h.m.fleetShown(), rowKeys(h.m.visiblePlayers()), h.m.selProxy, h.m.selPlayer)
	}
}

// TestFleetColumnsFit: PROXY comes after NAME, and MODE gives way when long
// names and proxy ids leave ADDRESS no room.
func TestFleetColumnsFit(t *testing.T) {
	titles := func(cols []column) string {
		var out []string
		for _, c := range cols {
			out = append(out, c.title)
		}
		return strings.Join(out, " ")
	}
	short := []playerRow{{Player: admin.Player{Name: "Alex", Server: "lobby", Address: "10.0.0.1:25565"}, proxy: "eu-1"}}
	long := []playerRow{{Player: admin.Player{Name: "AVeryLongName123", Server: "survival-games", Address: "10.0.0.1:25565"}, proxy: "proxy-europe-west-1"}}
	for _, c := range []struct {
		w     int
		ps    []playerRow
		fleet bool
		want  string
	}{
		{80, short, false, "NAME SERVER ADDRESS VERSION MODE ONLINE"},
		{80, short, true, "NAME PROXY SERVER ADDRESS VERSION MODE ONLINE"},
		{80, long, true, "NAME PROXY SERVER ADDRESS VERSION ONLINE"},
		{120, long, true, "NAME PROXY SERVER ADDRESS VERSION MODE ONLINE"},
	} {
		cols := playerCols(c.w, c.ps, c.fleet)
		if got := titles(cols); got != c.want {
			t.Errorf("%d cols fleet %v: %s, want %s", c.w, c.fleet, got, c.want)
		}
		width := 2 + len(cols) - 1
		for _, col := range cols {
			width += col.w
		}
		if width > c.w {
			t.Errorf("%d cols fleet %v: the row takes %d cells", c.w, c.fleet, width)
		}
	}
}

func TestFleetFilterMatchesTheProxy(t *testing.T) {
	h, _ := inFleet(t)
	h.keys("f")
	h.keys("/")
	if v := h.m.View(); !strings.Contains(v, "(name, server or proxy · enter keep · esc clear)") {
		t.Fatalf("filter prompt:\n%s", v)
	}
	typeText(h, "EU-2")
	h.keys("enter")
	if got := rowKeys(h.m.visiblePlayers()); !slices.Equal(got, []string{"eu-2/Alex", "eu-2/carol", "eu-2/Steve"}) {
		t.Fatalf("filter by proxy %v", got)
	}
	if v := ansi.Strip(h.m.View()); !strings.Contains(v, "PLAYERS 3 of 8 · whole fleet · sort server · filter EU-2") {
		t.Fatalf("filtered title:\n%s", v)
	}
	h.keys("esc", "/")
	typeText(h, "lobby")
	h.keys("enter")
	if got := rowKeys(h.m.visiblePlayers()); !slices.Equal(got, []string{"eu-1/Alex", "eu-2/carol"}) {
		t.Fatalf("filter by server %v", got)
	}
	// In local mode the proxy is not a filter: every row would match its own.
	h.keys("esc", "f", "/")
	typeText(h, "eu-1")
	h.keys("enter")
	if got := h.m.visiblePlayers(); len(got) != 0 {
		t.Fatalf("local mode filtered by proxy: %v", rowKeys(got))
	}
}

func TestSendAndKickActOnThisProxysPlayersOnly(t *testing.T) {
	h, fc := inFleet(t)
	h.keys("f")
	for _, k := range []string{"m", "x"} {
		selectRow(t, h, "eu-2", "Steve")
		h.keys(k)
		if h.m.input != nil || h.m.confirmPlayer != nil || !h.m.statusErr ||
			h.m.status != "Steve is on proxy eu-2: connect top to that proxy to act on them" {
			t.Fatalf("%s on Steve of eu-2: input %v status %q", k, h.m.input, h.m.status)
		}
		if v := h.m.View(); !strings.Contains(v, "Steve is on proxy eu-2: connect top to that proxy") {
			t.Fatalf("not on the status line:\n%s", v)
		}
		h.keys("y")
	}
	// The other Alex has the name of one of ours: still not ours to kick.
	selectRow(t, h, "eu-2", "Alex")
	h.keys("x")
	if h.m.input != nil || !strings.HasPrefix(h.m.status, "Alex is on proxy eu-2") {
		t.Fatalf("x on eu-2's Alex: %q", h.m.status)
	}
	if len(fc.players) != 0 {
		t.Fatalf("calls for players of another proxy: %v", fc.players)
	}
	// Ours work as in local mode, through this proxy's API.
	selectRow(t, h, "eu-1", "Notch")
	h.keys("m")
	typeText(h, "lobby")
	h.keys("enter", "y")
	if !slices.Equal(fc.players, []string{"send Notch lobby"}) || h.m.status != "sent Notch to lobby (127.0.0.1:25566)" {
		t.Fatalf("send of ours: %v %q", fc.players, h.m.status)
	}
	selectRow(t, h, "eu-1", "Alex")
	h.keys("x", "enter", "y")
	if last := fc.players[len(fc.players)-1]; last != "kick Alex: "+admin.DefaultKickReason {
		t.Fatalf("kick of our Alex: %v", fc.players)
	}
	if got := rowKeys(h.m.visiblePlayers()); slices.Contains(got, "eu-1/Alex") || !slices.Contains(got, "eu-2/Alex") {
		t.Fatalf("after the kick %v", got)
	}
}

func TestFleetUnreachableKeepsTheLastList(t *testing.T) {
	h, fc := inFleet(t)
	h.keys("f")
	if fc.fleetRequests != 1 || !h.m.fleetHave {
		t.Fatal("no first list")
	}
	fc.mu.Lock()
	fc.fleetErr = &admin.APIError{Status: 503, Code: "UNAVAILABLE",
		Message: "the fleet's Redis is unreachable: dial tcp 127.0.0.1:6379: connect: connection refused; without ?fleet=true the answer lists this proxy's own players"}
	fc.mu.Unlock()
	h.runUntil(t0.Add(3*h.m.interval), nil)
	if fc.fleetRequests != 4 {
		t.Fatalf("%d fleet requests in 3 intervals after the first, want 4", fc.fleetRequests)
	}
	if got := len(h.m.visiblePlayers()); got != 8 {
		t.Fatalf("%d rows while Redis is unreachable, want the 8 of the last list", got)
	}
	v := ansi.Strip(h.m.View())
	if !strings.Contains(v, "✖ fleet unreachable: other proxies' players as of 6s ago") ||
		!strings.Contains(v, "PLAYERS 8 · whole fleet") {
		t.Fatalf("no unreachable note:\n%s", v)
	}
	if h.m.conn != connUp {
		t.Fatal("a 503 of the fleet list disconnected the dashboard")
	}
	// Redis is back: the note goes with the next list.
	fc.mu.Lock()
	fc.fleetErr = nil
	fc.fleet = fc.fleet[:len(fc.fleet)-1] // eu-2's Alex left meanwhile
	fc.mu.Unlock()
	h.runUntil(h.now.Add(h.m.interval), nil)
	v = ansi.Strip(h.m.View())
	if strings.Contains(v, "unreachable") || !strings.Contains(v, "PLAYERS 7 · whole fleet") {
		t.Fatalf("after Redis came back:\n%s", v)
	}
}

func TestFleetListErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		note string
	}{
		{"redis down from the start", &admin.APIError{Status: 503, Code: "UNAVAILABLE", Message: "the fleet's Redis is unreachable"},
			"✖ fleet unreachable: only this proxy's players are listed"},
		{"proxy left the fleet", &admin.APIError{Status: 400, Code: "BAD_REQUEST", Message: "this proxy is not in a fleet"},
			"✖ fleet list failed, only this proxy's players are listed: BAD_REQUEST"},
		{"no answer", errors.New("dial tcp 127.0.0.1:8080: connect: connection refused"),
			"✖ fleet list failed, only this proxy's players are listed: dial tcp"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, fc := inFleet(t)
			fc.fleetErr = c.err
			h.keys("f")
			if got := rowKeys(h.m.visiblePlayers()); len(got) != 5 || got[0] != "eu-1/Alex" {
				t.Fatalf("rows %v, want this proxy's", got)
			}
			if v := ansi.Strip(h.m.View()); !strings.Contains(v, c.note) {
				t.Fatalf("note %q missing:\n%s", c.note, v)
			}
		})
	}
	// Before the first answer, the pane says the list is on its way.
	h, _ := inFleet(t)
	h.m.fleetMode, h.m.playersPref = true, prefShown
	h.m.fleetFetching = true
	if v := ansi.Strip(h.m.View()); !strings.Contains(v, "fetching the other proxies' players…") {
		t.Fatalf("no fetching note:\n%s", v)
	}
}

// TestFleetListCostsRequestsOnlyWhenShown: the fleet list is one request per
// interval at most, and none while the pane is hidden, in local mode, or the
// proxy is away; a 429 is waited out.
func TestFleetListCostsRequestsOnlyWhenShown(t *testing.T) {
	h, fc := inFleet(t)
	interval := h.m.interval
	count := func() int { fc.mu.Lock(); defer fc.mu.Unlock(); return fc.fleetRequests }

	// Hidden pane (24 rows, p not pressed) in fleet mode: nothing.
	h.m.fleetMode = true
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.runUntil(t0.Add(time.Minute), nil)
	if n := count(); n != 0 {
		t.Fatalf("%d fleet requests with the pane hidden", n)
	}
	// A resize that shows the pane starts the list.
	h.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	if n := count(); n != 1 {
		t.Fatalf("%d fleet requests once the pane shows", n)
	}
	start := h.now
	h.runUntil(start.Add(time.Minute), nil)
	if n := count(); n > int(time.Minute/interval)+1 || n < int(time.Minute/interval) {
		t.Fatalf("%d fleet requests in a minute shown, want one per %v", n, interval)
	}
	// f twice within an interval costs no extra request.
	h.keys("f", "f")
	for i := 1; i < len(fc.fleetTimes); i++ {
		if gap := fc.fleetTimes[i].Sub(fc.fleetTimes[i-1]); gap < interval {
			t.Fatalf("fleet requests %d and %d %v apart, want at least %v", i-1, i, gap, interval)
		}
	}
	// Local mode, and the pane hidden by p: nothing.
	for _, k := range []string{"f", "p"} {
		h.keys(k)
		n := count()
		h.runUntil(h.now.Add(time.Minute), nil)
		if count() != n {
			t.Fatalf("after %s: %d fleet requests in a minute", k, count()-n)
		}
		h.keys(k) // back to fleet mode, shown
	}
	// Disconnected: nothing until the proxy answers again.
	h.m.conn = connDown
	n := count()
	h.runUntil(h.now.Add(time.Minute), nil)
	if count() != n {
		t.Fatal("fleet requests while disconnected")
	}
	h.send(snapshotMsg{snap: h.m.snap})
	if count() != n+1 {
		t.Fatal("the list did not resume on reconnect")
	}
	// A 429 is waited out as its Retry-After says.
	fc.mu.Lock()
	fc.fleetErr = &admin.APIError{Status: 429, Code: "RATE_LIMITED", Message: "slow down", RetryAfter: 45 * time.Second}
	fc.mu.Unlock()
	h.runUntil(h.now.Add(interval), nil)
	n = count()
	h.runUntil(h.now.Add(44*time.Second), nil)
	if count() != n {
		t.Fatalf("%d fleet requests inside Retry-After", count()-n)
	}
}

func TestGoldenFleetPlayersView(t *testing.T) {
	h, fc := inFleet(t)
	h.keys("f")
	selectRow(t, h, "eu-2", "Steve")
	h.keys("x")
	fc.mu.Lock()
	fc.fleetErr = &admin.APIError{Status: 503, Code: "UNAVAILABLE", Message: "the fleet's Redis is unreachable"}
	fc.mu.Unlock()
	h.runUntil(t0.Add(h.m.interval), nil)
	v := h.m.View()
	if strings.Contains(v, "\x1b[") {
		t.Fatal("colour-free view contains escape sequences")
	}
	golden(t, "view_80x24_fleet_players.golden", v+"\n")
}
