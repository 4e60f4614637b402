package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// column is one table column: a fixed width and an alignment.
type column struct {
	title string
	w     int
	right bool
}

// View renders the whole screen at the last known terminal size.
func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	w, h := max(m.width, 20), max(m.height, 6)
	header := m.viewHeader(w)
	status := m.viewStatus(w)
	footer := m.viewFooter(w)
	bodyH := max(0, h-len(header)-2)

	var body []string
	switch {
	case m.showHelp:
		body = m.viewHelp(w)
	case !m.haveSnap:
		msg := "connecting to the admin API"
		if m.target != "" {
			msg += " at " + m.target
		}
		body = []string{"", "  " + msg + "…"}
	default:
		body = m.viewPanes(w, bodyH)
	}
	if len(body) > bodyH {
		body = body[:bodyH]
	}
	for len(body) < bodyH {
		body = append(body, "")
	}
	lines := slices.Concat(header, body, []string{status, footer})
	for i, l := range lines {
		lines[i] = clip(l, w)
	}
	return strings.Join(lines, "\n")
}

// clip cuts a (possibly styled) line to w cells and drops trailing blanks.
func clip(s string, w int) string {
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "")
	}
	return strings.TrimRight(s, " ")
}

func (m *Model) viewHeader(w int) []string {
	st, now := m.st, m.now()
	s := m.snap.Stats
	var conn string
	switch m.conn {
	case connUp:
		conn = st.ok.Render("● live")
	case connDown, connRetrying:
		conn = st.err.Render("✖ disconnected")
	default:
		conn = st.warn.Render("◌ connecting")
	}
	kv := func(k, v string) string { return st.label.Render(k) + " " + st.value.Render(v) }
	segs := []string{st.title.Render("infrarust top"), conn}
	if m.haveSnap {
		bind := s.Bind
		if bind == "" {
			bind = "-"
		}
		segs = append(segs, kv("bind", bind))
		var up time.Duration
		if !s.StartedAt.IsZero() {
			up = now.Sub(s.StartedAt)
		} else {
			up = time.Duration(s.UptimeSecs*float64(time.Second)) + now.Sub(m.statsAt)
		}
		segs = append(segs,
			kv("up", fmtDur(up)),
			kv("players", fmt.Sprint(s.PlayersOnline)),
			kv("conn/s", fmtRate(s.ConnectionsPerSec)),
			kv("rej/s", fmtRate(s.RejectionsPerSec)),
		)
		if seg := m.fleetSegment(); seg != "" { // fleet.go
			segs = append(segs, seg)
		}
	}
	last := "-"
	if m.lastEv != "" {
		last = string(m.lastEv) + " " + fmtAgo(now.Sub(m.lastEvAt)) + " ago"
	}
	segs = append(segs, kv("last event", last))
	return flow(segs, w, "  ")
}

// flow lays segments out left to right, starting a new line when one would overflow.
func flow(segs []string, w int, sep string) []string {
	var lines []string
	cur := ""
	for _, seg := range segs {
		switch {
		case cur == "":
			cur = seg
		case ansi.StringWidth(cur)+len(sep)+ansi.StringWidth(seg) <= w:
			cur += sep + seg
		default:
			lines = append(lines, cur)
			cur = seg
		}
	}
	return append(lines, cur)
}

func (m *Model) viewStatus(w int) string {
	st := m.st
	if line, ok := m.playerStatus(); ok {
		return line
	}
	switch {
	case m.confirm != nil:
		c := m.confirm
		return st.prompt.Render(fmt.Sprintf("%s %s on %s? [y/n]", c.verb, c.address, c.server))
	case m.filtering:
		if m.filterPlays {
			return st.prompt.Render("filter players: ") + m.playerFilter + "▏" + st.faint.Render("  ("+m.fleetFilterHint()+" · enter keep · esc clear)")
		}
		return st.prompt.Render("filter servers: ") + m.filter + "▏" + st.faint.Render("  (enter keep · esc clear)")
	case m.conn == connDown:
		secs := max(0, int((m.retryAt.Sub(m.now())+time.Second-1)/time.Second))
		return st.err.Render(fmt.Sprintf("disconnected — retrying in %ds", secs)) + st.faint.Render(" · "+m.lastErrText())
	case m.conn == connRetrying:
		return st.err.Render("disconnected — reconnecting…") + st.faint.Render(" · "+m.lastErrText())
	case m.status != "":
		if m.statusErr {
			return st.err.Render(m.status)
		}
		return st.ok.Render(m.status)
	}
	return ""
}

func (m *Model) lastErrText() string {
	err := m.snapErr
	if err == nil {
		err = m.streamErr
	}
	if err == nil {
		return ""
	}
	return describeErr(err)
}

func (m *Model) viewFooter(w int) string {
	// drop is the order in which keys give way on a narrow screen; ? help lists them all.
	type key struct {
		key, what string
		drop      int
	}
	// The action keys are those of the focused pane: a player's, or a backend's.
	actions := []key{{"d", "drain", 9}, {"e", "enable", 9}, {"r", "reset", 9}}
	if m.focus == panePlayers {
		actions = []key{{"m", "send", 9}, {"x", "kick", 9}}
		if m.fleetConfigured() {
			actions = append(actions, key{"f", m.fleetKeyHint(), 4})
		}
	}
	keys := slices.Concat([]key{{"tab", "pane", 9}, {"↑↓", "move", 9}}, actions, []key{
		{"/", "filter", 2}, {"p", "players", 3}, {"s", "sort", 1}, {"v", "events", 2}, {"?", "help", 9}, {"q", "quit", 9},
	})
	render := func(limit int) string {
		var segs []string
		for _, k := range keys {
			if k.drop > limit {
				segs = append(segs, m.st.bold.Render(k.key)+" "+m.st.faint.Render(k.what))
			}
		}
		return strings.Join(segs, "  ")
	}
	for limit := 0; limit < 9; limit++ {
		if out := render(limit); ansi.StringWidth(out) <= w {
			return out
		}
	}
	return render(9)
}

func (m *Model) viewHelp(w int) []string {
	lines := []string{
		m.paneTitle("HELP", true, w),
		"  tab ← → h l   switch between the servers, backends and players panes",
		"  ↑ ↓ j k       move the selection (g / G: first / last)",
		"  d e r         drain, enable or reset the selected backend (asks y/n)",
		"  m x           send or kick the selected player (asks where or why, then y/n)",
		"  /             filter servers (id, domain) or players (name, server, proxy)",
		"  s             cycle the sort order of the focused pane",
		"  v p           show or hide the event log / the players pane",
		"  f             players of this proxy or of the whole fleet (with [fleet])",
		"  R             refresh now    q ctrl+c  quit",
		"",
		"  " + m.st.unknown.Render("○ unknown") + "   takes players; not checked yet (no login, probe or ping so far)",
		"  " + m.st.healthy.Render("● healthy") + "   takes players; seen working",
		"  " + m.st.probing.Render("◐ probing") + "   ejected, one recovery attempt allowed",
		"  " + m.st.unhealthy.Render("✖ unhealthy") + " ejected, waiting out its backoff",
		"  " + m.st.draining.Render("⇣ draining") + "  takes no new players, keeps existing ones",
		"  WEIGHT EFF RAMP  configured weight, effective weight and its slow-start ramp",
		"  CONNS            active sessions + logins in flight",
		"",
		m.st.faint.Render("  press any key to close"),
	}
	return lines
}

// paneTitle draws a rule with the pane's name; the focused pane is marked with ▸.
func (m *Model) paneTitle(title string, focused bool, w int) string {
	mark, style := "──", m.st.paneBlurred
	if focused {
		mark, style = "─▸", m.st.paneFocused
	}
	text := mark + " " + title + " "
	if pad := w - ansi.StringWidth(text); pad > 0 {
		text += strings.Repeat("─", pad)
	}
	return style.Render(fit(text, w))
}

// Layout thresholds: a terminal at least sideLogWidth wide shows the event log in
// a column to the right of the tables; one at least bottomLogHeight tall shows it
// below them. Smaller terminals show it when the operator presses v.
const (
	sideLogWidth    = 160
	bottomLogHeight = 40
)

// logVisible reports whether the event log is on screen: the operator's choice
// (v), else whether the terminal has room for it.
func (m *Model) logVisible() bool {
	switch m.logPref {
	case prefShown:
		return true
	case prefHidden:
		return false
	}
	return m.width >= sideLogWidth || m.height >= bottomLogHeight
}

func (m *Model) viewPanes(w, h int) []string {
	if !m.logVisible() {
		return m.viewTables(w, h)
	}
	if w >= sideLogWidth {
		// Side by side: the tables keep what they need, the log takes the rest.
		logW := min(max(w/3, 50), 90)
		leftW := w - logW - 3
		left, right := m.viewTables(leftW, h), m.viewLog(logW, h)
		out := make([]string, h)
		for i := range out {
			var l, r string
			if i < len(left) {
				l = left[i]
			}
			if i < len(right) {
				r = right[i]
			}
			out[i] = fit(clip(l, leftW), leftW) + m.st.faint.Render(" │ ") + r
		}
		return out
	}
	logH := max(3, h/3)
	rest := h - logH
	out := m.viewTables(w, rest)
	// The log sits at the bottom, just above the status line.
	out = out[:min(len(out), rest)]
	for len(out) < rest {
		out = append(out, "")
	}
	return append(out, m.viewLog(w, logH)...)
}

// viewTables is the servers pane above the backends pane, and the players pane
// below them when it is shown, in w×h cells.
func (m *Model) viewTables(w, h int) []string {
	servers := m.visibleServers()
	backends := m.visibleBackends()
	if !m.playersVisible() {
		srvRows := min(max(len(servers), 1), max(2, (h-4)*2/5))
		bkRows := max(1, h-4-srvRows)
		out := m.viewServers(servers, w, srvRows)
		return append(out, m.viewBackends(backends, w, bkRows)...)
	}
	// Each pane has a title and a header line; the players take what the
	// servers and backends leave.
	avail := h - 6
	srvRows := min(max(len(servers), 1), max(2, avail/4))
	bkRows := min(max(len(backends), 1), max(2, avail/3))
	plRows := max(1, avail-srvRows-bkRows)
	out := m.viewServers(servers, w, srvRows)
	out = append(out, m.viewBackends(backends, w, bkRows)...)
	return append(out, m.viewPlayers(m.visiblePlayers(), w, plRows)...)
}

// window returns the [start,end) slice of n rows of which rows fit, keeping sel visible.
func window(sel, n, rows int) (int, int) {
	if n <= rows {
		return 0, n
	}
	start := 0
	if sel >= rows {
		start = sel - rows + 1
	}
	return start, start + rows
}

func renderRow(cols []column, cells []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		if c.right {
			parts[i] = fitRight(cells[i], c.w)
		} else {
			parts[i] = fit(cells[i], c.w)
		}
	}
	return strings.Join(parts, " ")
}

func (m *Model) cursor(selected bool) string {
	if selected {
		return m.st.cursor.Render("▶") + " "
	}
	return "  "
}

func (m *Model) viewServers(servers []admin.ServerInfo, w, rows int) []string {
	title := fmt.Sprintf("SERVERS %d · sort %s", len(servers), serverSorts[m.serverSort])
	if len(servers) != len(m.snap.Servers) {
		title = fmt.Sprintf("SERVERS %d of %d · sort %s", len(servers), len(m.snap.Servers), serverSorts[m.serverSort])
	}
	if m.filter != "" {
		title += " · filter " + m.filter
	}
	idW, domW := 2, 7
	for _, s := range servers {
		idW = max(idW, ansi.StringWidth(s.ID))
		domW = max(domW, domainsWidth(s.Domains))
	}
	idW = min(idW, 20)
	healthyW := 7
	for _, s := range servers {
		healthyW = max(healthyW, ansi.StringWidth(fmtHealthy(s)))
	}
	cols := []column{{"ID", idW, false}, {"DOMAINS", 0, false}, {"STRATEGY", 15, false}, {"PLAYERS", 7, true}, {"HEALTHY", healthyW, true}}
	fixed := 2 + len(cols) - 1
	for _, c := range cols {
		fixed += c.w
	}
	// Every domain in full when the terminal has the room.
	cols[1].w = max(7, min(domW, w-fixed))

	out := []string{m.paneTitle(title, m.focus == paneServers, w)}
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.title
	}
	out = append(out, "  "+m.st.label.Render(renderRow(cols, titles)))
	if len(servers) == 0 {
		msg := "  no servers configured"
		if m.filter != "" {
			msg = "  no server matches the filter"
		}
		return append(out, m.st.faint.Render(msg))
	}
	sel := slices.IndexFunc(servers, func(s admin.ServerInfo) bool { return s.ID == m.selServer })
	start, end := window(max(sel, 0), len(servers), rows)
	for i := start; i < end; i++ {
		s := servers[i]
		cells := []string{s.ID, fmtDomains(s.Domains, cols[1].w), s.Strategy, fmt.Sprint(s.Players), fmtHealthy(s)}
		row := renderRow(cols[:4], cells[:4]) + " "
		hs := m.st.healthy
		switch up := s.HealthyCount + s.UnknownCount; {
		case s.AddressCount > 0 && up == 0:
			hs = m.st.unhealthy
		case up < s.AddressCount:
			hs = m.st.probing
		case s.UnknownCount > 0:
			hs = m.st.unknown
		}
		row += hs.Render(fitRight(cells[4], cols[4].w))
		out = append(out, m.cursor(s.ID == m.selServer)+row)
	}
	return out
}

func (m *Model) backendCols(w int, bs []admin.Backend) []column {
	cols := []column{
		{"ADDRESS", 0, false}, {"PRI", 3, true}, {"STATE", 11, false}, {"W", 3, true}, {"EFF", 5, true},
		{"RAMP", 5, false}, {"CONNS", 6, true}, {"EJ", 3, true}, {"FAIL", 6, true}, {"LATENCY", 7, true},
	}
	if w >= 100 {
		cols = append(cols, column{"UP FOR", 7, true})
	}
	fixed := 2 + len(cols) - 1
	for _, c := range cols {
		fixed += c.w
	}
	addrW := 10
	for _, b := range bs {
		addrW = max(addrW, ansi.StringWidth(b.Address))
	}
	cols[0].w = max(10, min(addrW, w-fixed))
	return cols
}

func (m *Model) viewBackends(bs []admin.Backend, w, rows int) []string {
	bk := m.snap.Backends[m.selServer]
	title := "BACKENDS"
	if m.selServer != "" {
		title = fmt.Sprintf("BACKENDS %s · %s · sort %s", m.selServer, bk.Strategy, backendSorts[m.backendSort])
	}
	cols := m.backendCols(w, bs)
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.title
	}
	out := []string{m.paneTitle(title, m.focus == paneBackends, w), "  " + m.st.label.Render(renderRow(cols, titles))}
	if len(bs) == 0 {
		return append(out, m.st.faint.Render("  no backends"))
	}
	now, at := m.now(), m.snap.At
	sel := slices.IndexFunc(bs, func(b admin.Backend) bool { return b.Address == m.selBackend })
	start, end := window(max(sel, 0), len(bs), rows)
	for i := start; i < end; i++ {
		b := bs[i]
		fail := "-"
		if d, ok := secsAgo(b.LastFailureSecsAgo, at, now); ok {
			fail = fmtAgo(d)
		}
		upFor := "-"
		if d, ok := secsAgo(b.HealthySinceSecs, at, now); ok {
			upFor = fmtAgo(d)
		}
		conns := fmt.Sprintf("%d+%d", b.ActiveConnections, b.Inflight)
		if b.Full {
			conns = "full " + conns
		}
		cells := []string{b.Address, fmt.Sprint(b.Priority), stateSymbol(b.BackendState()) + " " + b.State, fmt.Sprint(b.Weight),
			fmtEff(b.EffectiveWeight), rampBar(b, 5), conns, fmt.Sprint(b.Ejections), fail, fmtLatency(b.ConnectEWMAms), upFor}
		parts := make([]string, len(cols))
		for j, c := range cols {
			if c.right {
				parts[j] = fitRight(cells[j], c.w)
			} else {
				parts[j] = fit(cells[j], c.w)
			}
		}
		parts[2] = m.st.state(b.BackendState()).Render(parts[2])
		if ramping(b) {
			parts[5] = m.st.ramp.Render(parts[5])
		} else if b.BackendState().Serving() {
			parts[5] = m.st.full.Render(parts[5])
		} else {
			parts[5] = m.st.faint.Render(parts[5])
		}
		out = append(out, m.cursor(b.Address == m.selBackend && m.focus == paneBackends)+strings.Join(parts, " "))
	}
	return out
}

// viewLog shows the newest events first; an entry too long for the pane wraps
// under itself rather than being cut.
func (m *Model) viewLog(w, h int) []string {
	out := []string{m.paneTitle(fmt.Sprintf("EVENTS %d", len(m.log)), false, w)}
	if len(m.log) == 0 {
		return append(out, m.st.faint.Render("  no events yet"))
	}
	now := m.now()
	const indent = "       " // "  " + 4-cell age + " "
	textW := max(10, w-len(indent))
	for i := len(m.log) - 1; i >= 0 && len(out) < h; i-- {
		e := m.log[i]
		lines := strings.Split(ansi.Wrap(e.text, textW, " "), "\n")
		out = append(out, "  "+m.st.faint.Render(fitRight(fmtAgo(now.Sub(e.at)), 4))+" "+lines[0])
		for _, l := range lines[1:] {
			if len(out) >= h {
				break
			}
			out = append(out, indent+l)
		}
	}
	return out
}
