package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// subscribedTypes are the event types the dashboard asks the stream for.
func subscribedTypes() []events.Type {
	return []events.Type{events.BackendHealthChange, events.PlayerJoin, events.PlayerLeave, events.PlayerSwitch,
		events.StatsTick, events.ConfigReload, events.ServerStateChange}
}

// The dashboard's request budget: at most one snapshot request per interval, the
// event stream for everything between, so `top` stays far inside the admin API's
// per-IP limit (DefaultInterval: 12 requests a minute against 60).
const (
	// DefaultInterval is the refresh interval when Options.Interval is zero; it
	// matches the proxy's stats.tick.
	DefaultInterval = 5 * time.Second
	minBackoff      = time.Second
	maxBackoff      = 30 * time.Second
	maxLogEntries   = 200
	minWidth        = 80
	minHeight       = 24
	// statusRefreshing is shown while a manual refresh runs.
	statusRefreshing = "refreshing…"
)

// pane is a focusable part of the screen.
type pane int

const (
	paneServers pane = iota
	paneBackends
	panePlayers
)

// connection states shown in the status line.
const (
	connConnecting = iota
	connUp
	connDown
	connRetrying
)

// Options configures a dashboard Model.
type Options struct {
	// Client reads snapshots and performs actions; required.
	Client Client
	// Events feeds live updates; nil means snapshot polling only.
	Events EventSource
	// Interval between snapshot requests (the safety net under the live stream);
	// no two requests are ever closer than this. Zero means DefaultInterval.
	Interval time.Duration
	// Now is the clock; tests inject a fixed one so views are stable.
	Now func() time.Time
	// Renderer decides the colour profile; an ASCII-profile renderer gives colour-free output.
	Renderer *lipgloss.Renderer
	// Target names the admin endpoint in the disconnected message.
	Target string
	// Context bounds every call and the event stream; cancelling it stops them.
	Context context.Context
}

// Model is the dashboard's state; *Model implements tea.Model.
type Model struct {
	client   Client
	source   EventSource
	interval time.Duration
	now      func() time.Time
	after    func(time.Duration, tea.Msg) tea.Cmd
	// wait reads the next event of a stream; tests replace it to deliver events by hand.
	wait   func(Stream) tea.Cmd
	st     styles
	target string
	ctx    context.Context
	cancel context.CancelFunc

	width, height int

	// data
	snap     Snapshot
	haveSnap bool
	statsAt  time.Time
	log      []logEntry
	lastEv   events.Type
	lastEvAt time.Time

	// connection
	conn          int
	snapErr       error
	streamErr     error
	stream        Stream
	subscribing   bool
	fetching      bool
	due           bool      // a refresh fell due while a request was in flight
	lastFetch     time.Time // when the last snapshot request started
	refreshGen    int       // only the latest scheduled refresh counts
	failures      int
	retryGen      int
	retryPending  bool
	retryAt       time.Time
	backoffActive time.Duration

	// interaction
	focus         pane
	selServer     string
	selBackend    string
	selPlayer     string
	selProxy      string // the fleet id of the selected player's proxy
	filter        string // of the servers pane
	playerFilter  string // of the players pane
	filtering     bool
	filterPlays   bool // the filter being typed is the players pane's
	serverSort    int
	backendSort   int
	playerSort    int
	logPref       panePref
	playersPref   panePref
	showHelp      bool
	confirm       *pendingAction
	input         *playerInput  // a send's target or a kick's reason being typed
	confirmPlayer *playerAction // a send or kick waiting for y/n
	acting        bool
	status        string
	statusErr     bool // the status line reports a failure (shown in the error style)
	quitting      bool

	// the players pane's fleet mode (fleetplayers.go)
	fleetMode      bool                // f: the pane lists the whole fleet
	fleetList      []admin.FleetPlayer // the fleet's players as last fetched
	fleetHave      bool                // fleetList has been fetched at least once
	fleetAt        time.Time           // when fleetList was fetched
	fleetErr       error               // the last fleet request's failure; nil after a success
	fleetFetching  bool
	fleetScheduled bool      // a fleetRefreshMsg is on its way
	fleetLast      time.Time // when the last fleet request started
	fleetHold      time.Time // no fleet request before this (a 429's Retry-After)
}

type logEntry struct {
	at   time.Time
	text string
}

type pendingAction struct {
	verb    admin.Action
	server  string
	address string
}

// panePref is the operator's choice for a pane that can be hidden (the event
// log, the players); auto shows it when the terminal has room for it.
type panePref int

const (
	prefAuto panePref = iota
	prefShown
	prefHidden
)

// Messages.
type (
	snapshotMsg struct {
		snap Snapshot
		err  error
	}
	streamOpenMsg struct {
		stream Stream
		err    error
	}
	eventMsg struct {
		stream Stream
		ev     Event
		err    error
	}
	actionMsg struct {
		act pendingAction
		res admin.ActionResult
		err error
	}
	refreshMsg struct{ gen int }
	clockMsg   struct{}
	retryMsg   struct{ gen int }
)

var (
	serverSorts  = []string{"id", "players", "health"}
	backendSorts = []string{"config", "address", "state", "load"}
)

// New builds a dashboard model; call Init through a tea.Program to start it.
func New(o Options) *Model {
	m := &Model{
		client:   o.Client,
		source:   o.Events,
		interval: o.Interval,
		now:      o.Now,
		target:   o.Target,
		width:    minWidth,
		height:   minHeight,
		conn:     connConnecting,
		focus:    paneServers,
	}
	if m.interval <= 0 {
		m.interval = DefaultInterval
	}
	if m.now == nil {
		m.now = time.Now
	}
	r := o.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	m.st = newStyles(r)
	parent := o.Context
	if parent == nil {
		parent = context.Background()
	}
	m.ctx, m.cancel = context.WithCancel(parent)
	m.after = func(d time.Duration, msg tea.Msg) tea.Cmd {
		return tea.Tick(d, func(time.Time) tea.Msg { return msg })
	}
	m.wait = waitEvent
	return m
}

// Init starts the first fetch, the event stream and the clock.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(
		m.refresh(),
		m.subscribeCmd(),
		m.after(time.Second, clockMsg{}),
	)
}

// Close stops the event stream and any call in flight; safe to call twice.
func (m *Model) Close() {
	m.cancel()
	if m.stream != nil {
		m.stream.Close()
		m.stream = nil
	}
}

// Update applies one message; every state change happens here, so the model needs no locks.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if m.quitting {
		return m, cmd
	}
	// The fleet list follows whatever the message changed (fleetplayers.go).
	if fc := m.fleetTick(); fc != nil {
		if cmd == nil {
			return m, fc
		}
		return m, tea.Batch(cmd, fc)
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return nil
	case tea.KeyMsg:
		return m.handleKey(msg)
	case snapshotMsg:
		return m.onSnapshot(msg)
	case streamOpenMsg:
		return m.onStreamOpen(msg)
	case eventMsg:
		return m.onEvent(msg)
	case actionMsg:
		return m.onAction(msg)
	case playerActionMsg:
		return m.onPlayerAction(msg)
	case fleetPlayersMsg:
		m.onFleetPlayers(msg)
		return nil
	case fleetRefreshMsg:
		m.fleetScheduled = false // fleetTick sends the request if it is still wanted
		return nil
	case refreshMsg:
		if msg.gen != m.refreshGen || m.retryPending {
			return nil // superseded, or the pending retry refreshes
		}
		return m.refresh()
	case clockMsg:
		return m.after(time.Second, clockMsg{})
	case retryMsg:
		if msg.gen != m.retryGen || !m.retryPending {
			return nil
		}
		m.retryPending = false
		m.conn = connRetrying
		cmds := []tea.Cmd{m.refresh()}
		if m.source != nil && m.stream == nil {
			cmds = append(cmds, m.subscribeCmd())
		}
		return tea.Batch(cmds...)
	}
	return nil
}

// ---- data and connection ----

// refresh asks for a snapshot as soon as the budget allows: now if the last request
// started at least an interval ago, else at that moment. Every caller (the timer,
// a retry, a reopened stream, the R key) goes through here, so no two requests
// are ever closer than the interval.
func (m *Model) refresh() tea.Cmd {
	if m.fetching {
		m.due = true
		return nil
	}
	wait := m.lastFetch.Add(m.interval).Sub(m.now())
	if m.lastFetch.IsZero() || wait <= 0 {
		return m.startFetch()
	}
	m.refreshGen++
	return m.after(wait, refreshMsg{gen: m.refreshGen})
}

// startFetch sends one snapshot request and schedules the next refresh an interval
// after it.
func (m *Model) startFetch() tea.Cmd {
	m.fetching = true
	m.lastFetch = m.now()
	m.refreshGen++
	next := m.after(m.interval, refreshMsg{gen: m.refreshGen})
	ctx, client, now, timeout := m.ctx, m.client, m.now, max(m.interval, 5*time.Second)
	return tea.Batch(func() tea.Msg {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		snap, err := Fetch(cctx, client, now())
		return snapshotMsg{snap: snap, err: err}
	}, next)
}

func (m *Model) subscribeCmd() tea.Cmd {
	if m.source == nil || m.stream != nil || m.subscribing || m.retryPending {
		return nil // the pending retry resubscribes, after its backoff
	}
	m.subscribing = true
	ctx, src := m.ctx, m.source
	return func() tea.Msg {
		s, err := src.Subscribe(ctx)
		return streamOpenMsg{stream: s, err: err}
	}
}

func waitEvent(s Stream) tea.Cmd {
	return func() tea.Msg {
		ev, err := s.Next()
		return eventMsg{stream: s, ev: ev, err: err}
	}
}

func (m *Model) onSnapshot(msg snapshotMsg) tea.Cmd {
	m.fetching = false
	if msg.err != nil {
		m.due = false
		m.snapErr = msg.err
		return m.disconnected()
	}
	m.snapErr = nil
	if m.status == statusRefreshing {
		m.say("")
	}
	m.snap = msg.snap
	m.statsAt = msg.snap.At
	m.haveSnap = true
	m.fixSelection()
	var cmds []tea.Cmd
	if m.due {
		m.due = false
		cmds = append(cmds, m.refresh())
	}
	cmds = append(cmds, m.subscribeCmd())
	m.maybeUp()
	return tea.Batch(cmds...)
}

func (m *Model) onStreamOpen(msg streamOpenMsg) tea.Cmd {
	m.subscribing = false
	if msg.err != nil || msg.stream == nil {
		if m.ctx.Err() != nil {
			return nil
		}
		if msg.err == nil {
			msg.err = errors.New("event stream: no stream")
		}
		m.streamErr = msg.err
		return m.disconnected()
	}
	if m.ctx.Err() != nil {
		msg.stream.Close()
		return nil
	}
	m.stream = msg.stream
	m.streamErr = nil
	m.maybeUp()
	// Events may have been missed while the stream was down: refresh as soon as
	// the budget allows (at once after a long outage).
	return tea.Batch(m.wait(msg.stream), m.refresh())
}

// maybeUp marks the connection up once both the snapshot and the stream work.
func (m *Model) maybeUp() {
	if m.snapErr == nil && m.streamErr == nil && m.haveSnap && (m.source == nil || m.stream != nil) {
		if m.conn == connDown || m.conn == connRetrying {
			m.addLog(m.now(), "reconnected")
		}
		m.conn = connUp
		m.failures = 0
		m.backoffActive = 0
	}
}

// disconnected records a failure and schedules one retry with exponential backoff.
// A proxy that answered (the request counted against its limit) is not asked
// again before an interval has passed, and a 429 is waited out for as long as its
// Retry-After says.
func (m *Model) disconnected() tea.Cmd {
	if m.conn == connUp {
		m.addLog(m.now(), "connection lost: "+m.lastErrText())
	}
	m.conn = connDown
	if m.retryPending || m.ctx.Err() != nil {
		return nil
	}
	m.failures++
	d := min(minBackoff<<min(m.failures-1, 10), maxBackoff)
	for _, err := range []error{m.snapErr, m.streamErr} {
		var ae *admin.APIError
		if errors.As(err, &ae) {
			d = max(d, m.interval, ae.RetryAfter)
		}
	}
	m.backoffActive = d
	m.retryGen++
	m.retryPending = true
	m.retryAt = m.now().Add(d)
	return m.after(d, retryMsg{gen: m.retryGen})
}

func (m *Model) onEvent(msg eventMsg) tea.Cmd {
	if msg.stream != m.stream {
		return nil // from a stream we already dropped
	}
	if msg.err != nil {
		m.stream.Close()
		m.stream = nil
		if m.ctx.Err() != nil {
			return nil
		}
		m.streamErr = fmt.Errorf("event stream: %w", msg.err)
		return m.disconnected()
	}
	m.applyEvent(msg.ev)
	return m.wait(msg.stream)
}

// applyEvent folds one live event into the view. Events never send a request of
// their own: what they cannot update in place (effective weights, ejection counts
// after a health change, a reloaded server list) arrives with the next scheduled
// refresh, at most an interval later.
func (m *Model) applyEvent(ev Event) {
	now := m.now()
	if ev.Type != events.StatsTick {
		m.lastEv, m.lastEvAt = ev.Type, now
	}
	if m.applyPlayerEvent(ev, now) {
		return
	}
	switch ev.Type {
	case events.StatsTick:
		var s admin.Stats
		if err := json.Unmarshal(ev.Data, &s); err == nil {
			m.snap.Stats = s
			m.statsAt = now
		}
	case events.BackendHealthChange:
		var hc events.HealthChange
		if err := json.Unmarshal(ev.Data, &hc); err != nil {
			return
		}
		m.setBackendState(hc.Server, hc.Address, balance.State(hc.From), balance.State(hc.To))
		text := fmt.Sprintf("%s %s %s → %s", hc.Server, hc.Address, hc.From, hc.To)
		if hc.Reason != "" {
			text += " (" + hc.Reason + ")"
		}
		m.addLog(now, text)
	case events.Lagged:
		var l events.LaggedInfo
		_ = json.Unmarshal(ev.Data, &l)
		m.addLog(now, fmt.Sprintf("missed %d events; refreshing", l.Missed))
	case events.ConfigReload:
		m.addLog(now, "configuration reloaded")
	case events.ServerStateChange:
		var st events.ServerState
		if err := json.Unmarshal(ev.Data, &st); err != nil {
			return
		}
		text := fmt.Sprintf("server %s %s → %s", st.Server, st.From, st.To)
		if st.Reason != "" {
			text += " (" + st.Reason + ")"
		}
		m.addLog(now, text)
	}
}

func (m *Model) addLog(at time.Time, text string) {
	m.log = append(m.log, logEntry{at: at, text: text})
	if len(m.log) > maxLogEntries {
		m.log = slices.Delete(m.log, 0, len(m.log)-maxLogEntries)
	}
}

func (m *Model) setBackendState(server, addr string, from, to balance.State) {
	bs, ok := m.snap.Backends[server]
	if !ok {
		return
	}
	for i := range bs.Backends {
		if bs.Backends[i].Address == addr {
			bs.Backends[i].State = string(to)
		}
	}
	for i := range m.snap.Servers {
		s := &m.snap.Servers[i]
		if s.ID != server {
			continue
		}
		s.HealthyCount = bump(s.HealthyCount, s.AddressCount, from, to, balance.StateHealthy)
		s.UnknownCount = bump(s.UnknownCount, s.AddressCount, from, to, balance.StateUnknown)
	}
}

// bump moves a per-state address count by one transition from -> to.
func bump(n, total int, from, to, state balance.State) int {
	switch {
	case from == state && to != state:
		return max(0, n-1)
	case from != state && to == state:
		return min(total, n+1)
	}
	return n
}

func (m *Model) addPlayers(server, addr string, delta int) {
	if bs, ok := m.snap.Backends[server]; ok {
		for i := range bs.Backends {
			if bs.Backends[i].Address == addr {
				bs.Backends[i].ActiveConnections = max(0, bs.Backends[i].ActiveConnections+delta)
			}
		}
	}
	for i := range m.snap.Servers {
		if m.snap.Servers[i].ID == server {
			m.snap.Servers[i].Players = max(0, m.snap.Servers[i].Players+delta)
		}
	}
	m.snap.Stats.PlayersOnline = max(0, m.snap.Stats.PlayersOnline+delta)
}

// ---- actions ----

func (m *Model) actionCmd(a pendingAction) tea.Cmd {
	ctx, client := m.ctx, m.client
	return func() tea.Msg {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		res, err := client.Act(cctx, a.verb, a.server, a.address)
		return actionMsg{act: a, res: res, err: err}
	}
}

func (m *Model) onAction(msg actionMsg) tea.Cmd {
	m.acting = false
	a := msg.act
	if msg.err != nil {
		m.fail(fmt.Sprintf("%s %s failed: %s", a.verb, a.address, describeErr(msg.err)))
		return nil
	}
	b := msg.res.Backend
	if b.Address == "" {
		b.Address = a.address
	}
	if bs, ok := m.snap.Backends[a.server]; ok && b.State != "" {
		for i := range bs.Backends {
			if bs.Backends[i].Address == b.Address {
				bs.Backends[i] = b
			}
		}
	}
	m.say(fmt.Sprintf("%s %s on %s", a.verb.Done(), b.Address, a.server))
	if b.State != "" {
		m.status += " — now " + b.State
	}
	// The answer carries the address's new state; the rest follows with the next
	// scheduled refresh.
	return nil
}

// describeErr shortens API errors to their code and message.
func describeErr(err error) string {
	if text, ok := apiErrorText(err); ok {
		return text
	}
	if errors.Is(err, admin.ErrNoAdminAPI) {
		return "proxy not reachable" // the long CLI hint does not fit a status line
	}
	return err.Error()
}

// ---- selection ----
