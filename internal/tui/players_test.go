package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/events"
)

// withPlayers is a loaded dashboard at 80x24 with the players pane opened (p)
// and the cursor on name.
func withPlayers(t *testing.T, name string) (*harness, *fakeClient) {
	t.Helper()
	h, fc := loaded(t)
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	if h.m.playersVisible() {
		t.Fatal("the players pane shows by itself at 24 rows")
	}
	h.keys("p")
	if !h.m.playersVisible() || h.m.focus != panePlayers {
		t.Fatalf("p: visible %v focus %d", h.m.playersVisible(), h.m.focus)
	}
	for i := 0; h.m.selPlayer != name; i++ {
		if i > len(fixture().Players) {
			t.Fatalf("no row %q in %v", name, names(h.m.visiblePlayers()))
		}
		h.keys("j")
	}
	return h, fc
}

func names(ps []playerRow) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

func (h *harness) player(name string) (admin.Player, bool) {
	for _, p := range h.m.snap.Players {
		if p.Name == name {
			return p, true
		}
	}
	return admin.Player{}, false
}

func typeText(h *harness, text string) {
	for _, r := range text {
		if r == ' ' {
			h.send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
			continue
		}
		h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func TestPlayersPaneShowsFocusesAndHides(t *testing.T) {
	h, _ := loaded(t)
	// Hidden at 24 rows: tab cycles the two other panes only.
	h.keys("tab", "tab")
	if h.m.focus != paneServers {
		t.Fatalf("focus %d", h.m.focus)
	}
	h.keys("p")
	v := h.m.View()
	if !strings.Contains(v, "─▸ PLAYERS 5 · sort server") || !strings.Contains(v, "m send  x kick") {
		t.Fatalf("players pane not shown and focused, or footer without its keys:\n%s", v)
	}
	// Sorted by server, then name in any case; the cursor on the first.
	if got := names(h.m.visiblePlayers()); !slices.Equal(got, []string{"Alex", "dinnerbone", "Herobrine", "jeb_", "Notch"}) {
		t.Fatalf("order %v", got)
	}
	if h.m.selPlayer != "Alex" {
		t.Fatalf("selected %q", h.m.selPlayer)
	}
	h.keys("j", "j")
	if h.m.selPlayer != "Herobrine" {
		t.Fatalf("after j j: %q", h.m.selPlayer)
	}
	for _, tc := range []struct {
		key  string
		want pane
	}{{"tab", paneServers}, {"tab", paneBackends}, {"tab", panePlayers}, {"shift+tab", paneBackends}, {"h", paneServers}, {"left", panePlayers}} {
		if tc.key == "shift+tab" {
			h.send(tea.KeyMsg{Type: tea.KeyShiftTab})
		} else {
			h.keys(tc.key)
		}
		if h.m.focus != tc.want {
			t.Fatalf("after %s focus %d, want %d", tc.key, h.m.focus, tc.want)
		}
	}
	// A refresh keeps the cursor on the same player; one that left gives way to the first.
	snap := fixture()
	h.send(snapshotMsg{snap: snap})
	if h.m.selPlayer != "Herobrine" {
		t.Fatalf("selection lost on refresh: %q", h.m.selPlayer)
	}
	snap.Players = slices.DeleteFunc(snap.Players, func(p admin.Player) bool { return p.Name == "Herobrine" })
	h.send(snapshotMsg{snap: snap})
	if h.m.selPlayer != "Alex" {
		t.Fatalf("after Herobrine left: %q", h.m.selPlayer)
	}
	h.keys("p")
	if h.m.playersVisible() || h.m.focus != paneServers || strings.Contains(h.m.View(), "PLAYERS 5") {
		t.Fatal("p did not hide the pane and give the focus back")
	}
	// Tall enough, the pane shows by itself; p hides it there too.
	h.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	h.m.playersPref = prefAuto
	if !h.m.playersVisible() {
		t.Fatal("not shown at 40 rows")
	}
	h.keys("p")
	if h.m.playersVisible() {
		t.Fatal("p did not hide the auto-shown pane")
	}
}

func TestPlayersSortAndFilter(t *testing.T) {
	h, _ := withPlayers(t, "Alex")
	h.keys("s")
	if got := names(h.m.visiblePlayers()); !slices.Equal(got, []string{"Alex", "dinnerbone", "Herobrine", "jeb_", "Notch"}) || h.m.status != "players sorted by name" {
		t.Fatalf("by name %v (%q)", got, h.m.status)
	}
	h.keys("s") // longest online first
	if got := names(h.m.visiblePlayers()); !slices.Equal(got, []string{"Notch", "jeb_", "Alex", "dinnerbone", "Herobrine"}) {
		t.Fatalf("by online time %v", got)
	}
	h.keys("/")
	if !strings.Contains(h.m.View(), "filter players: ") {
		t.Fatalf("no players filter prompt:\n%s", h.m.View())
	}
	typeText(h, "HER")
	if got := names(h.m.visiblePlayers()); !slices.Equal(got, []string{"Herobrine"}) || h.m.selPlayer != "Herobrine" {
		t.Fatalf("filter by name: %v, selected %q", got, h.m.selPlayer)
	}
	h.keys("enter")
	if v := h.m.View(); !strings.Contains(v, "PLAYERS 1 of 5") || !strings.Contains(v, "filter HER") {
		t.Fatalf("filtered title:\n%s", v)
	}
	// The servers' filter is another one.
	if h.m.filter != "" || len(h.m.visibleServers()) != 3 {
		t.Fatal("the players filter filtered servers")
	}
	h.keys("esc")
	h.keys("/")
	typeText(h, "lobby") // by server too
	h.keys("enter")
	if got := names(h.m.visiblePlayers()); !slices.Equal(got, []string{"Alex"}) {
		t.Fatalf("filter by server: %v", got)
	}
	h.keys("esc")
	if h.m.playerFilter != "" || len(h.m.visiblePlayers()) != 5 {
		t.Fatal("esc did not clear the players filter")
	}
}

func TestSendFlowCallsTheClient(t *testing.T) {
	h, fc := withPlayers(t, "Notch")

	// m asks for the server; tab completes among the others (not survival).
	h.keys("m")
	if v := h.m.View(); !strings.Contains(v, "send Notch (on survival) to: ▏  (tab: creative, lobby · esc)") {
		t.Fatalf("no send prompt:\n%s", v)
	}
	h.keys("tab")
	if h.m.input.text != "creative" {
		t.Fatalf("tab: %q", h.m.input.text)
	}
	h.keys("tab")
	if h.m.input.text != "lobby" {
		t.Fatalf("tab tab: %q", h.m.input.text)
	}
	h.keys("tab")
	if h.m.input.text != "creative" {
		t.Fatalf("tab cycles: %q", h.m.input.text)
	}
	h.keys("backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace")
	typeText(h, "lo")
	h.keys("tab")
	if h.m.input.text != "lobby" {
		t.Fatalf("tab after lo: %q", h.m.input.text)
	}
	h.keys("enter")
	if v := h.m.View(); !strings.Contains(v, "send Notch from survival to lobby? [y/n]") {
		t.Fatalf("no confirm:\n%s", v)
	}
	h.keys("n")
	if len(fc.players) != 0 || h.m.status != "send cancelled" {
		t.Fatalf("n must cancel: %v %q", fc.players, h.m.status)
	}

	// The keys typed into the prompt are text, not commands (q does not quit).
	h.keys("m")
	typeText(h, "q")
	if h.m.quitting || h.m.input.text != "q" {
		t.Fatalf("q in the prompt: quitting %v text %q", h.m.quitting, h.m.input.text)
	}
	h.keys("esc")
	if h.m.input != nil || h.m.status != "send cancelled" {
		t.Fatalf("esc: %v %q", h.m.input, h.m.status)
	}
	h.keys("m", "enter")
	if h.m.confirmPlayer != nil || h.m.status != "send cancelled: no server given" {
		t.Fatalf("empty target: %q", h.m.status)
	}

	h.keys("m")
	typeText(h, "lobby")
	h.keys("enter", "y")
	if want := []string{"send Notch lobby"}; !slices.Equal(fc.players, want) {
		t.Fatalf("calls %v, want %v", fc.players, want)
	}
	if v := h.m.View(); !strings.Contains(v, "sent Notch to lobby (127.0.0.1:25566)") {
		t.Fatalf("the answer is not on the status line:\n%s", v)
	}
	if p, _ := h.player("Notch"); p.Server != "lobby" || p.Address != "127.0.0.1:25566" {
		t.Fatalf("row %+v", p)
	}
	// The counts wait for the proxy's player.switch (no double move).
	if got := h.m.snap.Servers[0].Players; got != 14 {
		t.Fatalf("survival players %d before the event", got)
	}

	// A refusal is shown with the API's code.
	fc.playerErr = &admin.APIError{Status: 502, Code: "BAD_GATEWAY", Message: "Notch was not moved to creative: the server is full"}
	h.keys("m")
	typeText(h, "creative")
	h.keys("enter", "y")
	if v := h.m.View(); !strings.Contains(v, "send Notch failed: BAD_GATEWAY: Notch was not moved to creative") || !h.m.statusErr {
		t.Fatalf("failure not shown:\n%s", v)
	}
	if p, _ := h.player("Notch"); p.Server != "lobby" {
		t.Fatalf("a failed send moved the row: %+v", p)
	}
}

func TestSendRefusesAPassthroughPlayer(t *testing.T) {
	h, fc := withPlayers(t, "Alex")
	h.keys("m")
	if h.m.input != nil || !h.m.statusErr || !strings.Contains(h.m.status, "Alex cannot be sent: lobby is passthrough") {
		t.Fatalf("input %v status %q", h.m.input, h.m.status)
	}
	h.keys("y")
	if len(fc.players) != 0 {
		t.Fatalf("calls %v", fc.players)
	}
}

func TestKickFlowCallsTheClient(t *testing.T) {
	h, fc := withPlayers(t, "jeb_")
	h.keys("x")
	if v := h.m.View(); !strings.Contains(v, `kick jeb_, reason: ▏  (enter: "Kicked by an operator" · esc)`) {
		t.Fatalf("no kick prompt:\n%s", v)
	}
	h.keys("enter")
	if v := h.m.View(); !strings.Contains(v, `kick jeb_ from survival: "Kicked by an operator"? [y/n]`) {
		t.Fatalf("no confirm with the default reason:\n%s", v)
	}
	h.keys("y")
	if want := []string{"kick jeb_: " + admin.DefaultKickReason}; !slices.Equal(fc.players, want) {
		t.Fatalf("calls %v, want %v", fc.players, want)
	}
	if _, ok := h.player("jeb_"); ok || !strings.Contains(h.m.View(), "kicked jeb_ from survival: Kicked by an operator") {
		t.Fatalf("row kept or answer not shown:\n%s", h.m.View())
	}
	if h.m.selPlayer == "jeb_" || h.m.selPlayer == "" {
		t.Fatalf("cursor %q after the kick", h.m.selPlayer)
	}

	// A reason with spaces, pasted in one go.
	h.keys("G") // Notch
	h.keys("x")
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("AFK in spawn"), Paste: true})
	h.keys("enter")
	if v := h.m.View(); !strings.Contains(v, `kick Notch from survival: "AFK in spawn"? [y/n]`) {
		t.Fatalf("no confirm with the reason:\n%s", v)
	}
	h.keys("Y")
	if last := fc.players[len(fc.players)-1]; last != "kick Notch: AFK in spawn" {
		t.Fatalf("last call %q", last)
	}
	// An action while one runs is refused.
	h.m.acting = true
	h.keys("x")
	if h.m.input != nil || h.m.status != "an action is already running" {
		t.Fatalf("second action: %q", h.m.status)
	}
}

func TestPlayerKeysNeedThePane(t *testing.T) {
	h, fc := loaded(t) // 80x24: the pane is hidden
	h.keys("m")
	if h.m.input != nil || h.m.status != "press p to show the players, then select one" {
		t.Fatalf("m with the pane hidden: %q", h.m.status)
	}
	h.keys("p")
	h.send(snapshotMsg{snap: Snapshot{At: t0, Servers: fixture().Servers}})
	h.keys("x")
	if h.m.input != nil || h.m.status != "no player selected" {
		t.Fatalf("x with nobody online: %q", h.m.status)
	}
	if v := h.m.View(); !strings.Contains(v, "no players online") {
		t.Fatalf("empty pane:\n%s", v)
	}
	if len(fc.players) != 0 {
		t.Fatal(fc.players)
	}
}

func TestPlayerEventsUpdateThePane(t *testing.T) {
	h, fc := withPlayers(t, "Alex")
	h.holdStreams()
	s := &fakeStream{}
	h.m.stream = s
	ev := func(typ events.Type, data any) {
		h.sendOnly(eventMsg{stream: s, ev: Event{Type: typ, Time: h.now, Data: mustJSON(t, data)}})
	}
	h.now = h.now.Add(time.Minute)

	ev(events.PlayerJoin, events.Player{Server: "creative", Address: "10.0.1.9:25565", Username: "Steve", ClientIP: "192.0.2.1"})
	p, ok := h.player("Steve")
	if !ok || p.ProxyMode != "client_only" || !p.Switchable || !p.Since.Equal(h.now) || versionText(p) != "-" {
		t.Fatalf("joined row %+v", p)
	}
	if h.m.snap.Stats.PlayersOnline != 18 {
		t.Fatalf("online %d", h.m.snap.Stats.PlayersOnline)
	}

	ev(events.PlayerSwitch, events.Switch{Username: "Notch", FromServer: "survival", FromAddress: "10.0.0.1:25565",
		ToServer: "creative", ToAddress: "10.0.1.9:25565", Reason: "admin"})
	if p, _ := h.player("Notch"); p.Server != "creative" || p.Address != "10.0.1.9:25565" || p.ProxyMode != "client_only" {
		t.Fatalf("switched row %+v", p)
	}
	srv := map[string]int{}
	for _, s := range h.m.snap.Servers {
		srv[s.ID] = s.Players
	}
	if srv["survival"] != 13 || srv["creative"] != 2 || h.m.snap.Stats.PlayersOnline != 18 {
		t.Fatalf("counts after the switch: %v online %d", srv, h.m.snap.Stats.PlayersOnline)
	}
	if got := h.m.snap.Backends["survival"].Backends[0].ActiveConnections; got != 7 {
		t.Fatalf("active on the old address %d", got)
	}
	// A move between two addresses of one server names them.
	ev(events.PlayerSwitch, events.Switch{Username: "dinnerbone", FromServer: "survival", FromAddress: "10.0.0.2:25565",
		ToServer: "survival", ToAddress: "10.0.0.1:25565", Reason: "drain"})

	ev(events.PlayerLeave, events.Player{Server: "lobby", Address: "127.0.0.1:25566", Username: "Alex"})
	if _, ok := h.player("Alex"); ok || h.m.selPlayer == "Alex" {
		t.Fatalf("Alex still listed or selected (%q)", h.m.selPlayer)
	}
	// Garbage payloads change nothing and do not crash.
	before := len(h.m.snap.Players)
	ev(events.PlayerSwitch, "not an object")
	ev(events.PlayerSwitch, map[string]int{"username": 7})
	ev(events.PlayerJoin, 7)
	if len(h.m.snap.Players) != before {
		t.Fatal("garbage changed the players")
	}
	if fc.requests != 0 {
		t.Fatalf("player events sent %d requests", fc.requests)
	}
	h.keys("v")
	v := h.m.View()
	for _, want := range []string{"Steve joined creative via 10.0.1.9:25565", "Notch moved survival → creative (admin)",
		"dinnerbone moved survival 10.0.0.2:25565 → 10.0.0.1:25565 (drain)", "Alex left lobby"} {
		if !strings.Contains(v, want) {
			t.Errorf("log lacks %q:\n%s", want, v)
		}
	}
}

func TestSubscribesToPlayerSwitch(t *testing.T) {
	if !slices.Contains(subscribedTypes(), events.PlayerSwitch) {
		t.Fatalf("the dashboard does not ask for player.switch: %v", subscribedTypes())
	}
}

func TestGoldenPlayersView(t *testing.T) {
	// 80x24 with the pane opened by p and a send being typed.
	h, _ := withPlayers(t, "dinnerbone")
	h.keys("m")
	typeText(h, "lo")
	v := h.m.View()
	if strings.Contains(v, "\x1b[") {
		t.Fatal("colour-free view contains escape sequences")
	}
	golden(t, "view_80x24_players.golden", v+"\n")
}
