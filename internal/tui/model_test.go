package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/events"
)

// loaded returns a harness whose model shows fixture(), polling only.
func loaded(t *testing.T) (*harness, *fakeClient) {
	t.Helper()
	fc := &fakeClient{snap: fixture()}
	h := newHarness(t, fc, nil)
	h.send(snapshotMsg{snap: fixture()})
	if h.m.conn != connUp {
		t.Fatalf("conn = %d after a good snapshot, want up", h.m.conn)
	}
	return h, fc
}

func TestInitFetchesSubscribesAndSchedulesTimers(t *testing.T) {
	fc := &fakeClient{snap: fixture()}
	src := &fakeSource{streams: []*fakeStream{{}}}
	h := newHarness(t, fc, src)
	for _, msg := range run(h.m.Init()) {
		// Deliver the fetch and the subscription, but stop before the stream
		// runs dry, so the model is seen connected.
		h.sendOnly(msg)
	}
	if src.calls != 1 || h.m.stream == nil || !h.m.haveSnap || h.m.conn != connUp {
		t.Fatalf("after Init: subscribe calls %d, stream %v, snapshot %v, conn %d", src.calls, h.m.stream, h.m.haveSnap, h.m.conn)
	}
	var refresh, clock bool
	for _, tm := range h.timers {
		switch tm.msg.(type) {
		case refreshMsg:
			refresh = tm.d == 2*time.Second
		case clockMsg:
			clock = tm.d == time.Second
		}
	}
	if !refresh || !clock {
		t.Fatalf("timers %v: want a 2s refresh and a 1s clock", h.timers)
	}
	if fc.requests != 1 {
		t.Fatalf("Init sent %d snapshot requests, want 1 (the stream opening must not add one)", fc.requests)
	}
	if h.m.selServer != "survival" && h.m.selServer != "creative" {
		t.Fatalf("selected server %q", h.m.selServer)
	}
}

func TestSelectionFollowsKeysAndSurvivesRefresh(t *testing.T) {
	h, _ := loaded(t)
	// Sorted by id: creative, lobby, survival.
	if h.m.selServer != "creative" {
		t.Fatalf("first selection %q, want creative", h.m.selServer)
	}
	h.keys("j")
	if h.m.selServer != "lobby" || h.m.selBackend != "127.0.0.1:25566" {
		t.Fatalf("after j: %q / %q", h.m.selServer, h.m.selBackend)
	}
	h.keys("down", "down", "down") // clamps at the last row
	if h.m.selServer != "survival" {
		t.Fatalf("after down x3: %q", h.m.selServer)
	}
	h.keys("k")
	if h.m.selServer != "lobby" {
		t.Fatalf("after k: %q", h.m.selServer)
	}
	h.keys("up", "up")
	if h.m.selServer != "creative" {
		t.Fatalf("after up x2: %q", h.m.selServer)
	}

	h.keys("G", "tab")
	if h.m.focus != paneBackends || h.m.selBackend != "10.0.0.1:25565" {
		t.Fatalf("after G tab: focus %d backend %q", h.m.focus, h.m.selBackend)
	}
	h.keys("j", "j")
	if h.m.selBackend != "10.0.0.3:25565" || h.m.selServer != "survival" {
		t.Fatalf("j j in backends: %q on %q", h.m.selBackend, h.m.selServer)
	}

	// A refresh that reorders the list keeps the selection on the same address.
	snap := fixture()
	bs := snap.Backends["survival"]
	bs.Backends[0], bs.Backends[2] = bs.Backends[2], bs.Backends[0]
	snap.Backends["survival"] = bs
	h.send(snapshotMsg{snap: snap})
	if h.m.selBackend != "10.0.0.3:25565" {
		t.Fatalf("selection moved on refresh: %q", h.m.selBackend)
	}
	// A refresh that removes it falls back to the first row.
	bs.Backends = bs.Backends[1:]
	snap.Backends["survival"] = bs
	h.send(snapshotMsg{snap: snap})
	if h.m.selBackend != "10.0.0.2:25565" {
		t.Fatalf("after removal: %q", h.m.selBackend)
	}
}

func TestPaneSwitching(t *testing.T) {
	h, _ := loaded(t)
	for _, tc := range []struct {
		key  string
		want pane
	}{{"tab", paneBackends}, {"tab", paneServers}, {"right", paneBackends}, {"left", paneServers}, {"l", paneBackends}, {"h", paneServers}} {
		h.keys(tc.key)
		if h.m.focus != tc.want {
			t.Fatalf("after %q focus = %d, want %d", tc.key, h.m.focus, tc.want)
		}
	}
	h.keys("tab")
	if !strings.Contains(h.m.View(), "─▸ BACKENDS creative") {
		t.Fatalf("focused backends pane not marked:\n%s", h.m.View())
	}
}

func TestConfirmFlowCallsClient(t *testing.T) {
	h, fc := loaded(t)
	h.keys("G", "tab", "j") // survival, 10.0.0.2

	h.keys("d")
	if h.m.confirm == nil || !strings.Contains(h.m.View(), "drain 10.0.0.2:25565 on survival? [y/n]") {
		t.Fatalf("no confirmation prompt:\n%s", h.m.View())
	}
	h.keys("n")
	if len(fc.actions) != 0 || h.m.status != "drain cancelled" {
		t.Fatalf("n must cancel: actions %v status %q", fc.actions, h.m.status)
	}

	h.keys("d", "y")
	if want := "drain survival 10.0.0.2:25565"; len(fc.actions) != 1 || fc.actions[0] != want {
		t.Fatalf("actions %v, want [%s]", fc.actions, want)
	}
	if !strings.Contains(h.m.View(), "drained 10.0.0.2:25565 on survival — now draining") {
		t.Fatalf("status line lacks the answer:\n%s", h.m.View())
	}
	// The fake's snapshot still says healthy; the action result was applied,
	// then the refresh it triggered replaced it.
	fc.snap.Backends["survival"].Backends[1].State = "draining"
	h.send(snapshotMsg{snap: fc.snap})
	if got := h.m.snap.Backends["survival"].Backends[1].State; got != "draining" {
		t.Fatalf("state %q", got)
	}

	for _, k := range []struct{ key, verb string }{{"e", "enable"}, {"r", "reset"}} {
		h.keys(k.key, "y")
		if last := fc.actions[len(fc.actions)-1]; last != k.verb+" survival 10.0.0.2:25565" {
			t.Fatalf("%s: last action %q", k.key, last)
		}
	}

	fc.actErr = errors.New("unknown address")
	h.keys("r", "y")
	if !strings.Contains(h.m.View(), "reset 10.0.0.2:25565 failed: unknown address") {
		t.Fatalf("failure not shown:\n%s", h.m.View())
	}
}

func TestActionNeedsSelectedBackend(t *testing.T) {
	fc := &fakeClient{}
	h := newHarness(t, fc, nil)
	h.send(snapshotMsg{snap: Snapshot{At: t0, Backends: nil}})
	h.keys("d")
	if h.m.confirm != nil || h.m.status != "no backend selected" {
		t.Fatalf("confirm %v status %q", h.m.confirm, h.m.status)
	}
	h.keys("y")
	if len(fc.actions) != 0 {
		t.Fatalf("actions %v", fc.actions)
	}
}

func TestReconnectWithBackoff(t *testing.T) {
	fc := &fakeClient{err: errors.New("dial tcp 127.0.0.1:8080: connect: connection refused")}
	src := &fakeSource{}
	h := newHarness(t, fc, src)
	h.send(tea.WindowSizeMsg{Width: 120, Height: 30})
	h.send(snapshotMsg{err: fc.err})
	if h.m.conn != connDown || !h.m.retryPending {
		t.Fatalf("conn %d pending %v", h.m.conn, h.m.retryPending)
	}
	v := h.m.View()
	if !strings.Contains(v, "disconnected — retrying in 1s") || !strings.Contains(v, "connection refused") {
		t.Fatalf("no retry notice:\n%s", v)
	}
	// A second failure while a retry is pending does not double the backoff.
	h.send(streamOpenMsg{err: errors.New("refused")})
	if h.m.failures != 1 {
		t.Fatalf("failures %d", h.m.failures)
	}

	retry := func() retryMsg {
		t.Helper()
		for i := len(h.timers) - 1; i >= 0; i-- {
			if r, ok := h.timers[i].msg.(retryMsg); ok {
				return r
			}
		}
		t.Fatal("no retry scheduled")
		return retryMsg{}
	}
	wantBackoff := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, want := range wantBackoff {
		if got := h.timers[len(h.timers)-1].d; got != want {
			t.Fatalf("attempt %d: backoff %v, want %v", i, got, want)
		}
		r := retry()
		h.now = h.now.Add(want / 2)
		if !strings.Contains(h.m.View(), "retrying in ") {
			t.Fatalf("countdown missing:\n%s", h.m.View())
		}
		h.send(retryMsg{gen: r.gen - 1}) // stale: ignored
		if !h.m.retryPending {
			t.Fatal("a stale retry was acted on")
		}
		h.now = h.now.Add(want / 2)
		h.send(r) // fetch fails again, subscribe fails again
	}
	if h.m.conn != connDown {
		t.Fatalf("conn %d", h.m.conn)
	}

	// The proxy comes back: the next retry succeeds and resets the backoff.
	fc.err = nil
	fc.snap = fixture()
	src.streams = []*fakeStream{{}}
	r := retry()
	h.m.Update(r) // conn: retrying
	if h.m.conn != connRetrying || !strings.Contains(h.m.View(), "disconnected — reconnecting…") {
		t.Fatalf("conn %d, view:\n%s", h.m.conn, h.m.View())
	}
	h.send(snapshotMsg{snap: fixture()})
	stream := src.streams[0]
	_, cmd := h.m.Update(streamOpenMsg{stream: stream})
	if h.m.conn != connUp || h.m.failures != 0 {
		t.Fatalf("after recovery conn %d failures %d", h.m.conn, h.m.failures)
	}
	if strings.Contains(h.m.View(), "disconnected") {
		t.Fatalf("still disconnected:\n%s", h.m.View())
	}
	if last := h.m.log[len(h.m.log)-1].text; last != "reconnected" {
		t.Fatalf("last log entry %q", last)
	}

	// The stream dying takes the model back to disconnected with a fresh 1s backoff.
	for _, msg := range run(cmd) {
		h.send(msg)
	}
	if h.m.conn != connDown || !stream.closed || h.m.stream != nil {
		t.Fatalf("after stream end conn %d closed %v", h.m.conn, stream.closed)
	}
	if got := h.timers[len(h.timers)-1].d; got != time.Second {
		t.Fatalf("backoff after recovery %v", got)
	}
	if last := h.m.log[len(h.m.log)-1].text; last != "connection lost: event stream: stream ended" {
		t.Fatalf("last log entry %q", last)
	}
}

func TestRefreshOnlyWhileConnected(t *testing.T) {
	h, fc := loaded(t)
	fc.snap.Servers[0].Players = 99
	h.send(refreshMsg{gen: h.m.refreshGen})
	if h.m.snap.Servers[0].Players != 99 {
		t.Fatal("the scheduled refresh did not refresh")
	}
	fc.err = errors.New("boom")
	h.now = h.now.Add(2 * time.Second)
	h.send(refreshMsg{gen: h.m.refreshGen})
	if h.m.conn != connDown {
		t.Fatalf("conn %d", h.m.conn)
	}
	// While a retry is pending, refresh timers do not hammer the proxy.
	before := fc.requests
	h.now = h.now.Add(2 * time.Second)
	h.send(refreshMsg{gen: h.m.refreshGen})
	if fc.requests != before {
		t.Fatal("fetched while waiting for a retry")
	}
}

func TestEventsUpdateTheModel(t *testing.T) {
	h, fc := loaded(t)
	h.holdStreams()
	s := &fakeStream{}
	h.m.stream = s
	h.keys("G") // survival

	ev := func(typ events.Type, data any) tea.Cmd {
		return h.sendOnly(eventMsg{stream: s, ev: Event{Type: typ, Time: h.now, Data: mustJSON(t, data)}})
	}
	h.now = h.now.Add(3 * time.Second)
	cmd := ev(events.BackendHealthChange, map[string]string{"server": "survival", "address": "10.0.0.1:25565", "from": "healthy", "to": "unhealthy", "reason": "3 connect failures in 10s"})
	if got := h.m.snap.Backends["survival"].Backends[0].State; got != "unhealthy" {
		t.Fatalf("state %q", got)
	}
	if got := h.m.snap.Servers[0].HealthyCount; got != 1 {
		t.Fatalf("healthy count %d", got)
	}
	// creative's unchecked address is confirmed: one more healthy, one fewer unknown.
	ev(events.BackendHealthChange, map[string]string{"server": "creative", "address": "10.0.1.10:25565", "from": "unknown", "to": "healthy", "reason": "probe ok"})
	if s := h.m.snap.Servers[2]; s.ID != "creative" || s.HealthyCount != 1 || s.UnknownCount != 0 || h.m.snap.Backends["creative"].Backends[1].State != "healthy" {
		t.Fatalf("after unknown -> healthy: %+v, state %q", s, h.m.snap.Backends["creative"].Backends[1].State)
	}
	// The change is shown at once; the rest comes with the next scheduled refresh,
	// so a burst of events costs the admin API nothing.
	if h.m.fetching || cmd != nil || fc.requests != 0 {
		t.Fatalf("a health change sent a request of its own (fetching %v, requests %d)", h.m.fetching, fc.requests)
	}

	ev(events.PlayerJoin, map[string]string{"server": "survival", "address": "10.0.0.2:25565", "username": "Notch", "client_ip": "1.2.3.4"})
	if b := h.m.snap.Backends["survival"].Backends[1]; b.ActiveConnections != 2 || h.m.snap.Servers[0].Players != 15 || h.m.snap.Stats.PlayersOnline != 18 {
		t.Fatalf("join: active %d players %d online %d", b.ActiveConnections, h.m.snap.Servers[0].Players, h.m.snap.Stats.PlayersOnline)
	}
	ev(events.PlayerLeave, map[string]string{"server": "survival", "address": "10.0.0.2:25565", "username": "Notch"})
	if h.m.snap.Stats.PlayersOnline != 17 {
		t.Fatalf("leave: online %d", h.m.snap.Stats.PlayersOnline)
	}

	stats := fixture().Stats
	stats.PlayersOnline, stats.ConnectionsPerSec = 42, 9.5
	ev(events.StatsTick, stats)
	if v := h.m.View(); !strings.Contains(v, "players 42") || !strings.Contains(v, "conn/s 9.5") {
		t.Fatalf("stats tick not shown:\n%s", v)
	}
	if h.m.lastEv != "player.leave" {
		t.Fatalf("stats ticks must not count as the last event, got %q", h.m.lastEv)
	}

	ev(events.Lagged, map[string]int{"missed": 12})
	ev(events.ServerStateChange, events.ServerState{Server: "survival", From: "sleeping", To: "starting", Reason: "player Notch joined"})
	if fc.requests != 0 {
		t.Fatalf("events sent %d requests", fc.requests)
	}

	h.keys("v")
	v := h.m.View()
	for _, want := range []string{"EVENTS 6", "missed 12 events; refreshing", "server survival sleeping → starting (player Notch joined)", "Notch left survival via 10.0.0.2:25565",
		"creative 10.0.1.10:25565 unknown → healthy (probe ok)", "last event server.state_change 0s ago"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}

	// Events from a stream the model dropped are ignored.
	if cmd := h.sendOnly(eventMsg{stream: &fakeStream{}, ev: Event{Type: events.Lagged}}); cmd != nil {
		t.Fatal("stale stream event produced a command")
	}
	// Garbage payloads do not crash or change state.
	ev(events.BackendHealthChange, "not an object")
	ev(events.PlayerJoin, 7)
}

func TestFilterAndSort(t *testing.T) {
	h, _ := loaded(t)
	h.keys("/", "l", "o", "b")
	if !h.m.filtering || h.m.selServer != "lobby" {
		t.Fatalf("filtering %v selected %q", h.m.filtering, h.m.selServer)
	}
	if v := h.m.View(); !strings.Contains(v, "SERVERS 1 of 3") || !strings.Contains(v, "filter servers: lob") {
		t.Fatalf("filter not shown:\n%s", v)
	}
	h.keys("enter")
	if h.m.filtering || h.m.filter != "lob" {
		t.Fatalf("enter: filtering %v filter %q", h.m.filtering, h.m.filter)
	}
	h.keys("q") // not typed into the filter any more; quits
	if !h.m.quitting {
		t.Fatal("q did not quit")
	}

	h, _ = loaded(t)
	h.keys("/", "m", "c", ".", "backspace", "backspace", "backspace") // by domain, then erased
	if h.m.filter != "" {
		t.Fatalf("filter %q", h.m.filter)
	}
	h.keys("m", "c", ".")
	if got := h.m.visibleServers(); len(got) != 1 || got[0].ID != "survival" {
		t.Fatalf("domain filter: %v", got)
	}
	h.keys("esc")
	if h.m.filter != "" || len(h.m.visibleServers()) != 3 {
		t.Fatal("esc did not clear the filter")
	}

	h.keys("s") // players
	if got := h.m.visibleServers(); got[0].ID != "survival" || got[2].ID != "creative" {
		t.Fatalf("by players: %v", got)
	}
	h.keys("s") // health: most unhealthy addresses first
	if got := h.m.visibleServers(); got[0].ID != "survival" || got[1].ID != "creative" {
		t.Fatalf("by health: %v", got)
	}
	h.keys("g", "tab", "s", "s") // survival; backends by state
	if got := h.m.visibleBackends(); got[0].State != "unhealthy" || got[1].State != "probing" || got[2].State != "draining" {
		t.Fatalf("backends by state: %v", got)
	}
	h.keys("s") // load
	if got := h.m.visibleBackends(); got[0].Address != "10.0.0.1:25565" {
		t.Fatalf("backends by load: %v", got[0].Address)
	}
}

func TestHelpAndQuit(t *testing.T) {
	h, _ := loaded(t)
	h.keys("?")
	if !strings.Contains(h.m.View(), "drain, enable or reset the selected backend") {
		t.Fatalf("help not shown:\n%s", h.m.View())
	}
	h.keys("x")
	if h.m.showHelp {
		t.Fatal("any key must close help")
	}
	s := &fakeStream{}
	h.m.stream = s
	if cmd := h.sendOnly(key("ctrl+c")); cmd == nil {
		t.Fatal("ctrl+c did not quit")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c did not return tea.Quit")
	}
	if !s.closed || h.m.ctx.Err() == nil || h.m.View() != "" {
		t.Fatal("quit must close the stream, cancel calls and clear the screen")
	}
}

func TestResizeRedrawsWithinBounds(t *testing.T) {
	h, _ := loaded(t)
	h.keys("G", "v")
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {200, 60}, {100, 30}, {60, 15}} {
		h.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		lines := strings.Split(h.m.View(), "\n")
		if len(lines) != sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		for i, l := range lines {
			if w := ansi.StringWidth(l); w > sz[0] {
				t.Errorf("%dx%d: line %d is %d wide: %q", sz[0], sz[1], i, w, l)
			}
		}
		if !strings.Contains(lines[len(lines)-1], "q quit") && sz[0] >= 80 {
			t.Errorf("%dx%d: footer not on the last line: %q", sz[0], sz[1], lines[len(lines)-1])
		}
	}
	// The UP FOR column appears only when there is room.
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	if strings.Contains(h.m.View(), "UP FOR") {
		t.Error("UP FOR shown at 80 columns")
	}
	h.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	if !strings.Contains(h.m.View(), "UP FOR") {
		t.Error("UP FOR missing at 120 columns")
	}
}

func TestGoldenViews(t *testing.T) {
	// 80x24: no room for the event log; 120x40: the log below the tables;
	// 200x50: the log beside them and every domain in full.
	for _, tc := range []struct {
		name string
		w, h int
	}{{"view_80x24.golden", 80, 24}, {"view_120x40.golden", 120, 40}, {"view_200x50.golden", 200, 50}} {
		t.Run(tc.name, func(t *testing.T) {
			hs, _ := loaded(t)
			s := &fakeStream{}
			hs.m.stream = s
			hs.keys("G", "tab", "j")
			hs.sendOnly(eventMsg{stream: s, ev: Event{Type: events.BackendHealthChange, Data: mustJSON(t, map[string]string{
				"server": "survival", "address": "10.0.0.4:25565", "from": "healthy", "to": "unhealthy", "reason": "3 connect failures in 10s"})}})
			hs.m.fetching = false
			hs.send(snapshotMsg{snap: fixture()})
			hs.now = hs.now.Add(5 * time.Second)
			hs.send(tea.WindowSizeMsg{Width: tc.w, Height: tc.h})
			v := hs.m.View()
			if strings.Contains(v, "\x1b[") {
				t.Fatal("colour-free view contains escape sequences")
			}
			golden(t, tc.name, v+"\n")
		})
	}
}

func TestRunesArrivingTogetherAreSeparateKeys(t *testing.T) {
	h, fc := loaded(t)
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("Gljdy")})
	if want := "drain survival 10.0.0.2:25565"; len(fc.actions) != 1 || fc.actions[0] != want {
		t.Fatalf("actions %v, want [%s]", fc.actions, want)
	}
}

func TestDescribeErrKeepsTheStatusLineShort(t *testing.T) {
	err := fmt.Errorf("%w at http://127.0.0.1:8080 — is `infrarust serve` running? (or point --admin-url / INFRARUST_ADMIN_URL at it)", admin.ErrNoAdminAPI)
	if got := describeErr(err); got != "proxy not reachable" {
		t.Fatalf("describeErr = %q", got)
	}
	if got := describeErr(errors.New("boom")); got != "boom" {
		t.Fatalf("other errors pass through: %q", got)
	}
}
