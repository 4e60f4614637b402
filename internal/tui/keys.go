package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// What the operator does: selection, panes, the keys and their actions.

// visibleServers is the server list after filter and sort.
func (m *Model) visibleServers() []admin.ServerInfo {
	f := strings.ToLower(m.filter)
	out := make([]admin.ServerInfo, 0, len(m.snap.Servers))
	for _, s := range m.snap.Servers {
		if f == "" || strings.Contains(strings.ToLower(s.ID), f) ||
			slices.ContainsFunc(s.Domains, func(d string) bool { return strings.Contains(strings.ToLower(d), f) }) {
			out = append(out, s)
		}
	}
	switch serverSorts[m.serverSort] {
	case "id":
		slices.SortStableFunc(out, func(a, b admin.ServerInfo) int { return strings.Compare(a.ID, b.ID) })
	case "players":
		slices.SortStableFunc(out, func(a, b admin.ServerInfo) int {
			if a.Players != b.Players {
				return b.Players - a.Players
			}
			return strings.Compare(a.ID, b.ID)
		})
	case "health":
		slices.SortStableFunc(out, func(a, b admin.ServerInfo) int {
			da, db := a.AddressCount-a.HealthyCount-a.UnknownCount, b.AddressCount-b.HealthyCount-b.UnknownCount
			if da != db {
				return db - da
			}
			return strings.Compare(a.ID, b.ID)
		})
	}
	return out
}

// visibleBackends is the selected server's backends in the chosen order.
func (m *Model) visibleBackends() []admin.Backend {
	bs := slices.Clone(m.snap.Backends[m.selServer].Backends)
	switch backendSorts[m.backendSort] {
	case "address":
		slices.SortStableFunc(bs, func(a, b admin.Backend) int { return strings.Compare(a.Address, b.Address) })
	case "state":
		slices.SortStableFunc(bs, func(a, b admin.Backend) int { return stateRank(a.BackendState()) - stateRank(b.BackendState()) })
	case "load":
		slices.SortStableFunc(bs, func(a, b admin.Backend) int {
			return (b.ActiveConnections + b.Inflight) - (a.ActiveConnections + a.Inflight)
		})
	}
	return bs
}

// fixSelection keeps the selection on a row that exists, by name, across refreshes.
func (m *Model) fixSelection() {
	servers := m.visibleServers()
	if !slices.ContainsFunc(servers, func(s admin.ServerInfo) bool { return s.ID == m.selServer }) {
		m.selServer = ""
		if len(servers) > 0 {
			m.selServer = servers[0].ID
		}
	}
	bs := m.visibleBackends()
	if !slices.ContainsFunc(bs, func(b admin.Backend) bool { return b.Address == m.selBackend }) {
		m.selBackend = ""
		if len(bs) > 0 {
			m.selBackend = bs[0].Address
		}
	}
	m.fixPlayerSelection()
}

func (m *Model) move(delta int) {
	switch m.focus {
	case paneServers:
		servers := m.visibleServers()
		i := slices.IndexFunc(servers, func(s admin.ServerInfo) bool { return s.ID == m.selServer })
		if j := clampIndex(i+delta, len(servers)); j >= 0 {
			if servers[j].ID != m.selServer {
				m.selServer = servers[j].ID
				m.selBackend = ""
			}
		}
	case paneBackends:
		bs := m.visibleBackends()
		i := slices.IndexFunc(bs, func(b admin.Backend) bool { return b.Address == m.selBackend })
		if j := clampIndex(i+delta, len(bs)); j >= 0 {
			m.selBackend = bs[j].Address
		}
	case panePlayers:
		ps := m.visiblePlayers()
		i := slices.IndexFunc(ps, m.isSelected)
		if j := clampIndex(i+delta, len(ps)); j >= 0 {
			m.selectPlayer(ps[j])
		}
	}
	m.fixSelection()
}

// cyclePane moves the focus to the next (+1) or previous (-1) pane on screen.
func (m *Model) cyclePane(delta int) {
	panes := []pane{paneServers, paneBackends}
	if m.playersVisible() {
		panes = append(panes, panePlayers)
	}
	i := max(0, slices.Index(panes, m.focus))
	m.focus = panes[(i+delta+len(panes))%len(panes)]
}

func clampIndex(i, n int) int {
	if n == 0 {
		return -1
	}
	return max(0, min(n-1, i))
}

// ---- keys ----

func (m *Model) handleKey(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyCtrlC {
		return m.quit()
	}
	if m.input != nil {
		return m.handleInputKey(k) // typed text, pasted or not
	}
	// Keys typed faster than the terminal is read arrive as one message; outside
	// the filter each rune is its own command.
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !m.filtering && !k.Paste {
		var cmds []tea.Cmd
		for _, r := range k.Runes {
			cmds = append(cmds, m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
			if m.quitting {
				break
			}
		}
		return tea.Batch(cmds...)
	}
	if m.filtering {
		f := &m.filter
		if m.filterPlays {
			f = &m.playerFilter
		}
		switch k.Type {
		case tea.KeyEnter:
			m.filtering = false
		case tea.KeyEsc:
			m.filtering = false
			*f = ""
		case tea.KeyBackspace:
			if r := []rune(*f); len(r) > 0 {
				*f = string(r[:len(r)-1])
			}
		case tea.KeyRunes, tea.KeySpace:
			*f += string(k.Runes)
		}
		m.fixSelection()
		return nil
	}
	if m.confirmPlayer != nil {
		return m.handlePlayerConfirm(k)
	}
	if m.confirm != nil {
		a := *m.confirm
		m.confirm = nil
		switch k.String() {
		case "y", "Y":
			m.acting = true
			m.say(fmt.Sprintf("%s %s…", a.verb, a.address))
			return m.actionCmd(a)
		default:
			m.say(string(a.verb) + " cancelled")
		}
		return nil
	}
	if m.showHelp {
		switch k.String() {
		case "q":
			return m.quit()
		}
		m.showHelp = false
		return nil
	}
	switch k.String() {
	case "q":
		return m.quit()
	case "?":
		m.showHelp = true
	case "tab", "right", "l":
		m.cyclePane(1)
	case "shift+tab", "left", "h":
		m.cyclePane(-1)
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "home", "g":
		m.move(-1 << 20)
	case "end", "G":
		m.move(1 << 20)
	case "/":
		m.filtering = true
		m.filterPlays = m.focus == panePlayers
		if !m.filterPlays {
			m.focus = paneServers
		}
	case "esc":
		if m.focus == panePlayers {
			m.playerFilter = ""
		} else {
			m.filter = ""
		}
		m.say("")
		m.fixSelection()
	case "s":
		switch m.focus {
		case paneServers:
			m.serverSort = (m.serverSort + 1) % len(serverSorts)
			m.say("servers sorted by " + serverSorts[m.serverSort])
		case paneBackends:
			m.backendSort = (m.backendSort + 1) % len(backendSorts)
			m.say("backends sorted by " + backendSorts[m.backendSort])
		case panePlayers:
			m.playerSort = (m.playerSort + 1) % len(playerSorts)
			m.say("players sorted by " + playerSorts[m.playerSort])
		}
	case "v":
		if m.logVisible() {
			m.logPref = prefHidden
		} else {
			m.logPref = prefShown
		}
	case "p":
		if m.playersVisible() {
			m.playersPref = prefHidden
			if m.focus == panePlayers {
				m.focus = paneServers
			}
		} else {
			m.playersPref = prefShown
			m.focus = panePlayers
		}
	case "f":
		m.toggleFleet() // fleetplayers.go
	case "m":
		m.startPlayerAction(verbSend)
	case "x":
		m.startPlayerAction(verbKick)
	case "R":
		if m.retryPending {
			m.say("reconnecting; the retry refreshes")
			return nil
		}
		m.say(statusRefreshing)
		return m.refresh()
	case "d", "e", "r":
		verb := map[string]admin.Action{"d": admin.ActionDrain, "e": admin.ActionEnable, "r": admin.ActionReset}[k.String()]
		if m.acting {
			m.say("an action is already running")
			return nil
		}
		if m.selServer == "" || m.selBackend == "" {
			m.say("no backend selected")
			return nil
		}
		m.focus = paneBackends
		m.confirm = &pendingAction{verb: verb, server: m.selServer, address: m.selBackend}
	}
	return nil
}

// say puts text on the status line.
func (m *Model) say(text string) { m.status, m.statusErr = text, false }

// fail puts a failure on the status line, in the error style.
func (m *Model) fail(text string) { m.status, m.statusErr = text, true }

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.Close()
	return tea.Quit
}
