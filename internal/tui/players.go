package tui

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// The players pane: everyone online, from the snapshot, kept current between
// snapshots by player.join, player.leave and player.switch events; m sends the
// selected player to another server, x kicks them, each behind a prompt and a
// y/n confirm. With [fleet], f lists the whole fleet's players instead
// (fleetplayers.go); m and x still act on this proxy's only.

// playersAutoHeight is the terminal height from which the players pane shows
// by itself; smaller terminals show it when the operator presses p.
const playersAutoHeight = 30

// playerVerb is an operator's action on one player.
type playerVerb string

const (
	verbSend playerVerb = "send"
	verbKick playerVerb = "kick"
)

// playerAction is a send or kick waiting for its y/n, or under way.
type playerAction struct {
	verb   playerVerb
	player admin.Player // as shown when the key was pressed
	target string       // send: the server
	reason string       // kick: what the player is shown
}

// playerInput is the prompt before the confirm: the target server of a send,
// or the reason of a kick.
type playerInput struct {
	verb   playerVerb
	player admin.Player
	text   string
	// Tab completion of a send's target: the servers matching what was typed
	// before the first tab, and the one shown now.
	matches []string
	match   int
}

// playerActionMsg carries the API's answer to a send or kick.
type playerActionMsg struct {
	act    playerAction
	player admin.Player
	kick   admin.KickResult
	err    error
}

var playerSorts = []string{"server", "name", "online"}

// playersVisible reports whether the players pane is on screen: the operator's
// choice (p), else whether the terminal is tall enough.
func (m *Model) playersVisible() bool {
	switch m.playersPref {
	case prefShown:
		return true
	case prefHidden:
		return false
	}
	return m.height >= playersAutoHeight
}

// playerRow is one row of the players pane: a player and the fleet id of the
// proxy they are on. This proxy's own players carry its id ("" without
// [fleet]) and local; only those can be sent or kicked from here.
type playerRow struct {
	admin.Player
	proxy string
	local bool
}

// playerRows is every row of the pane's current mode, unfiltered: this proxy's
// players, or in fleet mode the whole fleet's (fleetplayers.go).
func (m *Model) playerRows() []playerRow {
	if m.fleetShown() {
		return m.fleetRows()
	}
	self := m.selfProxy()
	out := make([]playerRow, len(m.snap.Players))
	for i, p := range m.snap.Players {
		out[i] = playerRow{Player: p, proxy: self, local: true}
	}
	return out
}

// visiblePlayers is the player list after the players filter (name or server,
// and the proxy in fleet mode) and the chosen sort.
func (m *Model) visiblePlayers() []playerRow {
	f := strings.ToLower(m.playerFilter)
	fleet := m.fleetShown()
	rows := m.playerRows()
	out := make([]playerRow, 0, len(rows))
	for _, p := range rows {
		if f == "" || strings.Contains(strings.ToLower(p.Name), f) || strings.Contains(strings.ToLower(p.Server), f) ||
			(fleet && strings.Contains(strings.ToLower(p.proxy), f)) {
			out = append(out, p)
		}
	}
	byName := func(a, b playerRow) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), strings.Compare(a.proxy, b.proxy))
	}
	switch playerSorts[m.playerSort] {
	case "server":
		slices.SortStableFunc(out, func(a, b playerRow) int {
			if c := strings.Compare(a.Server, b.Server); c != 0 {
				return c
			}
			return byName(a, b)
		})
	case "name":
		slices.SortStableFunc(out, byName)
	case "online": // longest online first
		slices.SortStableFunc(out, func(a, b playerRow) int {
			if c := a.Since.Compare(b.Since); c != 0 {
				return c
			}
			return byName(a, b)
		})
	}
	return out
}

// isSelected reports whether p is the row under the players pane's cursor: the
// same name on the same proxy (two proxies of a fleet may each have a player of a name).
func (m *Model) isSelected(p playerRow) bool {
	return p.Name == m.selPlayer && p.proxy == m.selProxy
}

func (m *Model) selectPlayer(p playerRow) { m.selPlayer, m.selProxy = p.Name, p.proxy }

// selectedPlayer is the player under the cursor of the players pane.
func (m *Model) selectedPlayer() (playerRow, bool) {
	for _, p := range m.playerRows() {
		if m.isSelected(p) {
			return p, true
		}
	}
	return playerRow{}, false
}

// fixPlayerSelection keeps the cursor on a listed player, by name and proxy.
func (m *Model) fixPlayerSelection() {
	ps := m.visiblePlayers()
	if !slices.ContainsFunc(ps, m.isSelected) {
		m.selPlayer, m.selProxy = "", ""
		if len(ps) > 0 {
			m.selectPlayer(ps[0])
		}
	}
}

// startPlayerAction opens the prompt of a send or kick of the selected player.
func (m *Model) startPlayerAction(verb playerVerb) {
	if m.acting {
		m.say("an action is already running")
		return
	}
	if !m.playersVisible() {
		m.say("press p to show the players, then select one")
		return
	}
	row, ok := m.selectedPlayer()
	if !ok {
		m.say("no player selected")
		return
	}
	m.focus = panePlayers
	p := row.Player
	if !row.local {
		// Send and kick go through this proxy's API, which only reaches its own players.
		m.fail(fmt.Sprintf("%s is on proxy %s: connect top to that proxy to act on them", p.Name, row.proxy))
		return
	}
	if verb == verbSend && !p.Switchable {
		m.fail(fmt.Sprintf("%s cannot be sent: %s is %s, whose players the proxy cannot move (x kicks)", p.Name, p.Server, dash(p.ProxyMode)))
		return
	}
	m.input = &playerInput{verb: verb, player: p}
}

// sendTargets are the servers a player can be sent to, as far as the dashboard
// knows: every other server. The API has the last word (network, mode).
func (m *Model) sendTargets(p admin.Player) []string {
	var out []string
	for _, s := range m.snap.Servers {
		if s.ID != p.Server {
			out = append(out, s.ID)
		}
	}
	slices.Sort(out)
	return out
}

// handleInputKey edits the prompt; enter moves on to the confirm, esc cancels.
func (m *Model) handleInputKey(k tea.KeyMsg) tea.Cmd {
	in := m.input
	switch k.Type {
	case tea.KeyEsc:
		m.input = nil
		m.say(string(in.verb) + " cancelled")
	case tea.KeyEnter:
		m.input = nil
		text := strings.TrimSpace(in.text)
		a := playerAction{verb: in.verb, player: in.player}
		if in.verb == verbSend {
			if text == "" {
				m.say("send cancelled: no server given")
				return nil
			}
			a.target = text
		} else {
			a.reason = text
			if a.reason == "" {
				a.reason = admin.DefaultKickReason
			}
		}
		m.confirmPlayer = &a
	case tea.KeyTab:
		if in.verb != verbSend {
			return nil
		}
		if in.matches == nil {
			for _, s := range m.sendTargets(in.player) {
				if strings.HasPrefix(s, in.text) {
					in.matches = append(in.matches, s)
				}
			}
			in.match = -1
		}
		if len(in.matches) > 0 {
			in.match = (in.match + 1) % len(in.matches)
			in.text = in.matches[in.match]
		}
	case tea.KeyBackspace:
		if r := []rune(in.text); len(r) > 0 {
			in.text = string(r[:len(r)-1])
		}
		in.matches = nil
	case tea.KeyRunes, tea.KeySpace:
		if in.verb == verbSend && k.Type == tea.KeySpace {
			return nil // server ids have no spaces
		}
		if n := len([]rune(in.text)) + len(k.Runes); n <= admin.MaxKickReasonLen {
			in.text += string(k.Runes)
		}
		in.matches = nil
	}
	return nil
}

// handlePlayerConfirm runs the confirmed action on y, cancels on anything else.
func (m *Model) handlePlayerConfirm(k tea.KeyMsg) tea.Cmd {
	a := *m.confirmPlayer
	m.confirmPlayer = nil
	switch k.String() {
	case "y", "Y":
		m.acting = true
		m.say(fmt.Sprintf("%s %s…", a.verb, a.player.Name))
		return m.playerActionCmd(a)
	}
	m.say(string(a.verb) + " cancelled")
	return nil
}

func (m *Model) playerActionCmd(a playerAction) tea.Cmd {
	ctx, client := m.ctx, m.client
	return func() tea.Msg {
		// A move logs the player in to another backend: allow it the proxy's
		// connect attempts, longer than a drain.
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		msg := playerActionMsg{act: a}
		if a.verb == verbSend {
			msg.player, msg.err = client.SendPlayer(cctx, a.player.Name, a.target, false)
		} else {
			msg.kick, msg.err = client.KickPlayer(cctx, a.player.Name, a.reason)
		}
		return msg
	}
}

// onPlayerAction shows the API's answer. The row follows at once; the counts
// follow the player.switch or player.leave event the proxy publishes, so they
// are never moved twice.
func (m *Model) onPlayerAction(msg playerActionMsg) tea.Cmd {
	m.acting = false
	a := msg.act
	if msg.err != nil {
		m.fail(fmt.Sprintf("%s %s failed: %s", a.verb, a.player.Name, describeErr(msg.err)))
		return nil
	}
	switch a.verb {
	case verbSend:
		p := msg.player
		m.replacePlayer(a.player.Name, func(old *admin.Player) { *old = p })
		m.say(fmt.Sprintf("sent %s to %s (%s)", cmp.Or(p.Name, a.player.Name), cmp.Or(p.Server, a.target), dash(p.Address)))
	case verbKick:
		m.removePlayer(a.player.Name)
		m.say(fmt.Sprintf("kicked %s from %s: %s", a.player.Name, a.player.Server, cmp.Or(msg.kick.Reason, a.reason)))
	}
	m.fixPlayerSelection()
	return nil
}

// replacePlayer edits the row of name (any case) in place.
func (m *Model) replacePlayer(name string, edit func(*admin.Player)) bool {
	for i := range m.snap.Players {
		if strings.EqualFold(m.snap.Players[i].Name, name) {
			edit(&m.snap.Players[i])
			return true
		}
	}
	return false
}

func (m *Model) removePlayer(name string) {
	m.snap.Players = slices.DeleteFunc(m.snap.Players, func(p admin.Player) bool { return strings.EqualFold(p.Name, name) })
}

// serverMode is a server's proxy mode as the last snapshot had it.
func (m *Model) serverMode(id string) string {
	for _, s := range m.snap.Servers {
		if s.ID == id {
			return s.ProxyMode
		}
	}
	return ""
}

// playerJoined adds (or refreshes) the row of a player.join. What the event
// does not carry (protocol, version) arrives with the next snapshot.
func (m *Model) playerJoined(p events.Player, at time.Time) {
	mode := m.serverMode(p.Server)
	row := admin.Player{Name: p.Username, UUID: p.UUID, Server: p.Server, Address: p.Address, ClientIP: p.ClientIP,
		ProxyMode: mode, Since: at, Switchable: config.ProxyMode(mode).Intercepted()}
	if !m.replacePlayer(p.Username, func(old *admin.Player) { *old = row }) {
		m.snap.Players = append(m.snap.Players, row)
	}
	m.fixPlayerSelection()
}

// playerSwitched applies a player.switch: the row moves, and so do the counts.
func (m *Model) playerSwitched(sw events.Switch, at time.Time) {
	mode := m.serverMode(sw.ToServer)
	m.replacePlayer(sw.Username, func(p *admin.Player) {
		p.Server, p.Address = sw.ToServer, sw.ToAddress
		if mode != "" {
			p.ProxyMode, p.Switchable = mode, config.ProxyMode(mode).Intercepted()
		}
	})
	online := m.snap.Stats.PlayersOnline
	m.addPlayers(sw.FromServer, sw.FromAddress, -1)
	m.addPlayers(sw.ToServer, sw.ToAddress, 1)
	m.snap.Stats.PlayersOnline = online // a switch neither adds nor removes anyone
	from, to := sw.FromServer, sw.ToServer
	if from == to {
		from, to = sw.FromServer+" "+sw.FromAddress, sw.ToAddress
	}
	text := fmt.Sprintf("%s moved %s → %s", sw.Username, from, to)
	if sw.Reason != "" {
		text += " (" + sw.Reason + ")"
	}
	m.addLog(at, text)
	m.fixPlayerSelection()
}

// applyPlayerEvent folds player.join, player.leave and player.switch into the
// pane and the counts; it reports whether ev was one of them.
func (m *Model) applyPlayerEvent(ev Event, now time.Time) bool {
	switch ev.Type {
	case events.PlayerJoin, events.PlayerLeave:
		var p events.Player
		if err := json.Unmarshal(ev.Data, &p); err != nil {
			return true
		}
		delta, verb := 1, "joined"
		if ev.Type == events.PlayerLeave {
			delta, verb = -1, "left"
			m.removePlayer(p.Username)
			m.fixPlayerSelection()
		} else {
			at := ev.Time
			if at.IsZero() {
				at = now
			}
			m.playerJoined(p, at)
		}
		m.addPlayers(p.Server, p.Address, delta)
		m.addLog(now, fmt.Sprintf("%s %s %s via %s", p.Username, verb, p.Server, p.Address))
		return true
	case events.PlayerSwitch:
		var sw events.Switch
		if err := json.Unmarshal(ev.Data, &sw); err == nil && sw.Username != "" {
			m.playerSwitched(sw, now)
		}
		return true
	}
	return false
}

// playerCols lays the players pane's columns out in w cells; ADDRESS takes
// what is left. Fleet mode adds PROXY after NAME, and gives up MODE when the
// terminal is too narrow for both.
func playerCols(w int, ps []playerRow, fleet bool) []column {
	nameW, srvW, proxyW := 4, 6, 5
	for _, p := range ps {
		nameW = max(nameW, ansi.StringWidth(p.Name))
		srvW = max(srvW, ansi.StringWidth(p.Server))
		proxyW = max(proxyW, ansi.StringWidth(p.proxy))
	}
	cols := []column{{"NAME", min(nameW, 16), false}}
	if fleet {
		cols = append(cols, column{"PROXY", min(proxyW, 12), false})
	}
	cols = append(cols, column{"SERVER", min(srvW, 14), false}, column{"ADDRESS", 0, false},
		column{"VERSION", 9, false}, column{"MODE", 11, false}, column{"ONLINE", 6, true})
	width := func() int {
		n := 2 + len(cols) - 1
		for _, c := range cols {
			n += c.w
		}
		return n
	}
	addr := slices.IndexFunc(cols, func(c column) bool { return c.title == "ADDRESS" })
	if fleet && width()+7 > w {
		cols = slices.DeleteFunc(cols, func(c column) bool { return c.title == "MODE" })
	}
	addrW := 7
	for _, p := range ps {
		addrW = max(addrW, ansi.StringWidth(p.Address))
	}
	cols[addr].w = max(7, min(addrW, w-width()))
	return cols
}

// versionText names the client's release, or its protocol number when the proxy
// does not know it, or "-" before the first snapshot after a join.
func versionText(p admin.Player) string {
	switch {
	case p.Version != "":
		return p.Version
	case p.Protocol != 0:
		return fmt.Sprintf("proto %d", p.Protocol)
	}
	return "-"
}

func (m *Model) viewPlayers(ps []playerRow, w, rows int) []string {
	fleet := m.fleetShown()
	total := len(m.playerRows())
	title := fmt.Sprintf("PLAYERS %d", len(ps))
	if len(ps) != total {
		title = fmt.Sprintf("PLAYERS %d of %d", len(ps), total)
	}
	switch {
	case fleet:
		title += " · whole fleet"
	case m.fleetConfigured():
		title += " · this proxy " + m.selfProxy()
	}
	title += " · sort " + playerSorts[m.playerSort]
	if m.playerFilter != "" {
		title += " · filter " + m.playerFilter
	}
	cols := playerCols(w, ps, fleet)
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.title
	}
	out := []string{m.paneTitle(title, m.focus == panePlayers, w)}
	if fleet {
		if note := m.fleetNote(); note != "" { // fleetplayers.go
			out = append(out, note)
			rows = max(1, rows-1)
		}
	}
	out = append(out, "  "+m.st.label.Render(renderRow(cols, titles)))
	if len(ps) == 0 {
		msg := "  no players online"
		if m.playerFilter != "" {
			msg = "  no player matches the filter"
		}
		return append(out, m.st.faint.Render(msg))
	}
	now := m.now()
	sel := slices.IndexFunc(ps, m.isSelected)
	start, end := window(max(sel, 0), len(ps), rows)
	for i := start; i < end; i++ {
		p := ps[i]
		online := "-"
		if !p.Since.IsZero() {
			online = fmtAgo(now.Sub(p.Since))
		}
		cells := map[string]string{"NAME": p.Name, "PROXY": p.proxy, "SERVER": p.Server, "ADDRESS": p.Address,
			"VERSION": versionText(p.Player), "MODE": dash(p.ProxyMode), "ONLINE": online}
		parts := make([]string, len(cols))
		for j, c := range cols {
			if c.right {
				parts[j] = fitRight(cells[c.title], c.w)
			} else {
				parts[j] = fit(cells[c.title], c.w)
			}
			switch {
			case c.title == "MODE" && !p.Switchable:
				parts[j] = m.st.faint.Render(parts[j]) // cannot be moved
			case c.title == "PROXY" && !p.local:
				parts[j] = m.st.faint.Render(parts[j]) // send and kick act here only
			}
		}
		out = append(out, m.cursor(m.isSelected(p) && m.focus == panePlayers)+strings.Join(parts, " "))
	}
	return out
}

// playerStatus is the status line while a player prompt or confirm is open.
func (m *Model) playerStatus() (string, bool) {
	st := m.st
	if in := m.input; in != nil {
		if in.verb == verbSend {
			hint := "  (esc cancels)"
			if t := m.sendTargets(in.player); len(t) > 0 {
				hint = "  (tab: " + strings.Join(t, ", ") + " · esc)"
			}
			return st.prompt.Render(fmt.Sprintf("send %s (on %s) to: ", in.player.Name, in.player.Server)) + in.text + "▏" + st.faint.Render(hint), true
		}
		return st.prompt.Render(fmt.Sprintf("kick %s, reason: ", in.player.Name)) + in.text + "▏" +
			st.faint.Render(fmt.Sprintf("  (enter: %q · esc)", cmp.Or(strings.TrimSpace(in.text), admin.DefaultKickReason))), true
	}
	if c := m.confirmPlayer; c != nil {
		if c.verb == verbSend {
			return st.prompt.Render(fmt.Sprintf("send %s from %s to %s? [y/n]", c.player.Name, c.player.Server, c.target)), true
		}
		return st.prompt.Render(fmt.Sprintf("kick %s from %s: %q? [y/n]", c.player.Name, c.player.Server, c.reason)), true
	}
	return "", false
}
