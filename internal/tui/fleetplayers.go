package tui

import (
	"context"
	"errors"
	"net/http"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// The players pane's fleet mode: with [fleet], f switches the pane between this
// proxy's players and the whole fleet's, with the proxy each is on. The fleet's
// list is one more request (GET /api/v1/players?fleet=true), made only while the
// pane shows it and the dashboard is connected, at most once per interval; this
// proxy's own rows stay the live ones the snapshot and the events keep current.
// While Redis is unreachable the API answers 503 and the pane keeps the last list
// under a note.

type (
	// fleetPlayersMsg carries the answer to a fleet players request.
	fleetPlayersMsg struct {
		list []admin.FleetPlayer
		err  error
		at   time.Time
	}
	// fleetRefreshMsg is the fleet list's interval timer.
	fleetRefreshMsg struct{}
)

// fleetConfigured reports whether the last snapshot says the proxy is in a fleet.
func (m *Model) fleetConfigured() bool {
	return m.haveSnap && m.snap.Fleet != nil && m.snap.Fleet.Enabled
}

// selfProxy is this proxy's fleet id; "" without [fleet].
func (m *Model) selfProxy() string {
	if !m.fleetConfigured() {
		return ""
	}
	return m.snap.Fleet.ID
}

// fleetShown reports whether the players pane lists the whole fleet.
func (m *Model) fleetShown() bool { return m.fleetMode && m.fleetConfigured() }

// fleetWanted reports whether the fleet's list should be kept fresh now: shown,
// on screen, and the proxy answering (a request to a proxy that is away, or
// that asked us to wait, would only cost budget).
func (m *Model) fleetWanted() bool {
	return m.fleetShown() && m.playersVisible() && m.conn == connUp && m.ctx.Err() == nil
}

// toggleFleet is the f key: it switches the players pane between this proxy
// and the whole fleet, or shows the pane with the whole fleet when it is hidden.
func (m *Model) toggleFleet() {
	if !m.fleetConfigured() {
		m.say("this proxy is not in a fleet ([fleet] in infrarust.toml): the players pane shows its own players")
		return
	}
	if m.playersVisible() {
		m.fleetMode = !m.fleetMode
	} else {
		m.fleetMode = true
		m.playersPref = prefShown
	}
	m.focus = panePlayers
	if m.fleetMode {
		m.say("players: the whole fleet (send and kick act on this proxy's players only)")
	} else {
		m.say("players: this proxy only")
	}
	m.fixPlayerSelection()
}

// fleetTick starts or schedules the next fleet request when one is wanted and
// none is under way or scheduled. Update calls it after every message, so each
// way the pane comes to want the list (f, p, a resize, a reconnect) starts it,
// and each way it stops wanting it lets the loop die at its next timer.
func (m *Model) fleetTick() tea.Cmd {
	if !m.fleetWanted() || m.fleetFetching || m.fleetScheduled {
		return nil
	}
	at := m.fleetLast.Add(m.interval)
	if m.fleetHold.After(at) {
		at = m.fleetHold
	}
	if wait := at.Sub(m.now()); !m.fleetLast.IsZero() && wait > 0 {
		m.fleetScheduled = true
		return m.after(wait, fleetRefreshMsg{})
	}
	m.fleetFetching = true
	m.fleetLast = m.now()
	ctx, client, now, timeout := m.ctx, m.client, m.now, max(m.interval, 5*time.Second)
	return func() tea.Msg {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		list, err := client.FleetPlayers(cctx, "")
		return fleetPlayersMsg{list: list, err: err, at: now()}
	}
}

// onFleetPlayers keeps a new list, or keeps the last one and the failure.
func (m *Model) onFleetPlayers(msg fleetPlayersMsg) {
	m.fleetFetching = false
	if m.ctx.Err() != nil {
		return
	}
	if msg.err != nil {
		m.fleetErr = msg.err
		var ae *admin.APIError
		if errors.As(msg.err, &ae) && ae.RetryAfter > 0 {
			m.fleetHold = m.now().Add(ae.RetryAfter)
		}
		return
	}
	m.fleetErr = nil
	m.fleetList, m.fleetAt, m.fleetHave = msg.list, msg.at, true
	m.fixPlayerSelection()
}

// fleetRows is the fleet mode's rows: this proxy's players as the snapshot and
// the events have them (live, and with what send needs), and every other
// proxy's from the last fleet list.
func (m *Model) fleetRows() []playerRow {
	self := m.selfProxy()
	out := make([]playerRow, 0, len(m.snap.Players)+len(m.fleetList))
	for _, p := range m.snap.Players {
		out = append(out, playerRow{Player: p, proxy: self, local: true})
	}
	for _, p := range m.fleetList {
		if p.Proxy != self {
			out = append(out, playerRow{Player: p.Player, proxy: p.Proxy})
		}
	}
	return out
}

// fleetUnreachable reports whether the last fleet request failed because the
// fleet's Redis does not answer (the API's 503).
func (m *Model) fleetUnreachable() bool {
	var ae *admin.APIError
	return errors.As(m.fleetErr, &ae) && ae.Status == http.StatusServiceUnavailable
}

// fleetNote is the line under the pane's title in fleet mode: why the other
// proxies' players may be old (the age first, the error last, so a narrow
// terminal cuts only the error), or that they are on their way; "" when the
// list is current.
func (m *Model) fleetNote() string {
	st := m.st
	if m.fleetErr == nil {
		if m.fleetHave {
			return ""
		}
		return st.faint.Render("  fetching the other proxies' players…")
	}
	others := "only this proxy's players are listed"
	if m.fleetHave {
		others = "other proxies' players as of " + fmtAgo(m.now().Sub(m.fleetAt)) + " ago"
	}
	if m.fleetUnreachable() {
		return "  " + st.err.Render("✖ fleet unreachable: "+others)
	}
	return "  " + st.err.Render("✖ fleet list failed, "+others+": ") + st.faint.Render(describeErr(m.fleetErr))
}

// fleetKeyHint is the footer's word for f: where it switches to.
func (m *Model) fleetKeyHint() string {
	if m.fleetShown() {
		return "this proxy"
	}
	return "fleet"
}

// fleetFilterHint names what the players filter matches in the current mode.
func (m *Model) fleetFilterHint() string {
	if m.fleetShown() {
		return "name, server or proxy"
	}
	return "name or server"
}
