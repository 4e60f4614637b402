package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// States a managed server can be in; the admin API, SSE and the status MOTD show them.
const (
	StateOnline   = "online"   // ready: logins go straight through
	StateOffline  = "offline"  // not known (first panel poll pending, provider unreachable)
	StateSleeping = "sleeping" // down on purpose; a login wakes it
	StateStarting = "starting" // a start is under way; logins wait for it
	StateStopping = "stopping" // a stop is under way; logins wait for it, then start it again
	StateCrashed  = "crashed"  // went down on its own; the reason is kept, a login retries
)

// Errors EnsureStarted returns; their text is shown to the player as a Login Disconnect.
var (
	// ErrStartTimeout means the server was not ready within start_timeout; it keeps starting.
	ErrStartTimeout = errors.New("Server is starting, please reconnect in a moment") //nolint:staticcheck // shown to players
	// ErrShuttingDown means the proxy is exiting and will not start anything.
	ErrShuttingDown = errors.New("Proxy is shutting down, please reconnect in a moment") //nolint:staticcheck // shown to players
	// ErrNotManaged means the server has no [server_manager], so there is nothing to start or stop.
	ErrNotManaged = errors.New("server has no [server_manager] block")
)

// StartError says why a start failed (crash, failed start, stopped meanwhile), so the player sees the cause.
type StartError struct {
	Server string // the server id, for logs
	Reason string // why, as recorded in the state ("exited with exit status 1")
}

// Error is the player-facing disconnect text.
func (e *StartError) Error() string { return "Server could not start: " + e.Reason }

// StateChange is the Data of a server.state_change event; it lives in events so
// metrics and the SSE stream read it without importing the manager.
type StateChange = events.ServerState

// ServerState is one managed server as the admin API shows it.
type ServerState struct {
	ID      string    `json:"id"`
	Type    string    `json:"type"`             // local or pterodactyl
	State   string    `json:"state"`            // one of the State* constants
	Reason  string    `json:"reason,omitempty"` // why it is in this state
	Since   time.Time `json:"since"`            // when it entered this state
	Players int       `json:"players"`          // sessions the proxy counts on it
	// IdleSecs is how long an online server has had no players; absent when not counting.
	IdleSecs *float64 `json:"idle_secs,omitempty"`
	// ShutdownAfterSecs is the idle time before a stop; 0 means never.
	ShutdownAfterSecs float64 `json:"shutdown_after_secs"`
	// LastError is the provider's last failure (an unreachable panel), cleared by the next success.
	LastError string `json:"last_error,omitempty"`
	// LastOutput holds the last lines a local server printed, which usually explain a crash.
	LastOutput []string `json:"last_output,omitempty"`
}

// Options wires the manager into the proxy.
type Options struct {
	// Bus receives server.state_change events; nil publishes nothing.
	Bus *events.Bus
	// Logger receives state changes and local servers' output; nil discards.
	Logger *slog.Logger
	// Now is the clock for idle accounting and poll scheduling; nil means time.Now.
	Now func() time.Time
	// OnReady is called for each address of a server that just came online, so the
	// balancer puts it in slow start; it runs outside the manager's lock.
	OnReady func(server, address string)
	// Tick is how often Run checks idle timers and due polls; 0 means 1s.
	Tick time.Duration
	// HTTPClient talks to panels; nil means a client with a 15s timeout.
	HTTPClient *http.Client
}

const (
	ownerNone  = ""
	ownerStart = "start"
	ownerStop  = "stop"

	// statusTimeout bounds one provider Status call.
	statusTimeout = 10 * time.Second
	// pingProtocol is the protocol version sent in readiness pings; servers answer status for any.
	pingProtocol = 767
)

// entry is one managed server. Every field is guarded by Manager.mu.
type entry struct {
	id      string
	sm      config.ServerManager
	addrs   []string
	prov    Provider
	provKey string
	pending Provider // new provider config, swapped in once the server is down
	pendKey string

	state, reason string
	since         time.Time
	players       int
	idleSince     time.Time
	changed       chan struct{} // closed and replaced on every state change
	nudge         chan struct{} // cap 1: the provider saw something, look now

	gen      uint64 // moves whenever a start or stop loop takes over; stale loops quit
	owner    string
	cancel   context.CancelFunc // cancels the running start loop
	lastPoll time.Time
	polling  bool
	lastErr  string
	removed  bool
	stopGen  uint64 // gen of the last stop loop that finished, and its error
	stopErr  error
}

// Manager owns the managed servers' states and the loops that start, stop and poll them.
type Manager struct {
	bus     *events.Bus
	log     *slog.Logger
	now     func() time.Time
	onReady func(server, address string)
	tick    time.Duration
	http    *http.Client

	base       context.Context
	baseCancel context.CancelFunc
	wg         sync.WaitGroup

	mu      sync.Mutex
	servers map[string]*entry
	closed  bool
	after   []func() // callbacks collected under mu, run by unlock
}

// New makes a manager with no servers; call Configure, then run Run in the background.
func New(opts Options) *Manager {
	m := &Manager{
		bus: opts.Bus, log: opts.Logger, now: opts.Now, onReady: opts.OnReady,
		tick: opts.Tick, http: opts.HTTPClient, servers: map[string]*entry{},
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.tick <= 0 {
		m.tick = time.Second
	}
	if m.http == nil {
		m.http = &http.Client{Timeout: 15 * time.Second}
	}
	m.base, m.baseCancel = context.WithCancel(context.Background())
	return m
}

// unlock releases mu and then runs the callbacks collected while it was held,
// so user callbacks can never deadlock against the manager.
func (m *Manager) unlock() {
	after := m.after
	m.after = nil
	m.mu.Unlock()
	for _, f := range after {
		f()
	}
}

// Configure applies the servers of a (re)loaded configuration. New managed servers
// are added, removed ones forgotten (a local process of a removed server is stopped,
// panel servers are left alone), and changed ones keep their running process: new
// timings apply at once, a new command or panel takes effect once the server is
// down. The error lists servers whose [server_manager] cannot work; they stay
// listed with that reason so a login shows it.
func (m *Manager) Configure(servers []*config.Server) error {
	m.mu.Lock()
	defer m.unlock()
	var errs []error
	seen := map[string]bool{}
	for _, s := range servers {
		if s == nil || s.ServerManager == nil {
			continue
		}
		seen[s.ID] = true
		addrs := make([]string, 0, len(s.Addresses))
		for _, a := range s.Addresses {
			addrs = append(addrs, a.Address)
		}
		sm := withDefaults(*s.ServerManager)
		key := providerKey(&sm)
		e := m.servers[s.ID]
		if e == nil {
			e = &entry{
				id: s.ID, changed: make(chan struct{}), nudge: make(chan struct{}, 1),
				since: m.now(),
			}
			m.servers[s.ID] = e
			e.sm, e.addrs = sm, addrs
			prov, err := m.newProvider(e, &sm)
			errs = appendErr(errs, err)
			e.prov, e.provKey = prov, key
			m.initState(e, err)
			continue
		}
		e.sm, e.addrs = sm, addrs
		if key == e.provKey {
			e.pending = nil
			continue
		}
		prov, err := m.newProvider(e, &sm)
		errs = appendErr(errs, err)
		e.pending, e.pendKey = prov, key
		if m.isDown(e) {
			m.swapPending(e)
			m.initState(e, err)
		}
	}
	for id, e := range m.servers {
		if seen[id] {
			continue
		}
		delete(m.servers, id)
		e.removed = true
		if lp, ok := e.prov.(*localProvider); ok && !m.closed {
			if ph := lp.statusNow().Phase; ph != PhaseStopped && ph != PhaseCrashed {
				m.beginStop(context.Background(), e, "removed from the configuration")
			}
		}
		if e.cancel != nil && e.owner == ownerStart {
			e.cancel()
		}
		m.broadcast(e)
		m.log.Info("server no longer managed", "server", id)
	}
	return errors.Join(errs...)
}

// withDefaults fills the timings config validation normally fills, so a
// hand-built config can never mean "time out at once" or "poll in a busy loop".
func withDefaults(sm config.ServerManager) config.ServerManager {
	if sm.StartTimeout <= 0 {
		sm.StartTimeout = config.Duration(60 * time.Second)
	}
	if sm.PollInterval <= 0 {
		sm.PollInterval = config.Duration(5 * time.Second)
	}
	if sm.ShutdownTimeout <= 0 {
		sm.ShutdownTimeout = config.Duration(30 * time.Second)
	}
	return sm
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		return append(errs, err)
	}
	return errs
}

// providerKey fingerprints the fields that make a different provider.
func providerKey(sm *config.ServerManager) string {
	b, _ := json.Marshal([]any{sm.Type, sm.Command, sm.Args, sm.WorkingDir, sm.Env, sm.ReadyPattern, sm.URL, sm.APIKey, sm.ServerID})
	return string(b)
}

func (m *Manager) newProvider(e *entry, sm *config.ServerManager) (Provider, error) {
	var (
		p   Provider
		err error
	)
	switch sm.Type {
	case "local":
		p, err = newLocalProvider(e.id, sm, m.log, func() { m.providerChanged(e) })
	case "pterodactyl":
		p, err = newPteroProvider(sm, m.http)
	default:
		err = fmt.Errorf("type %q is not one of local, pterodactyl", sm.Type)
	}
	if err != nil {
		err = fmt.Errorf("server %q: [server_manager]: %w", e.id, err)
		return brokenProvider{err: err}, err
	}
	return p, nil
}

// initState sets a fresh provider's first state: known at once for a local
// process, "offline" until the first poll for a panel.
func (m *Manager) initState(e *entry, err error) {
	if err != nil {
		m.setState(e, StateOffline, err.Error())
		return
	}
	if is, ok := e.prov.(instantStatus); ok {
		if obs := is.statusNow(); obs.Phase == PhaseCrashed {
			m.setState(e, StateCrashed, obs.Reason)
		} else {
			m.setState(e, StateSleeping, "not running")
		}
		return
	}
	m.setState(e, StateOffline, "waiting for the first poll")
	e.lastPoll = time.Time{}
}

func (m *Manager) isDown(e *entry) bool {
	return e.owner == ownerNone && (e.state == StateSleeping || e.state == StateOffline || e.state == StateCrashed)
}

func (m *Manager) swapPending(e *entry) {
	if e.pending != nil {
		e.prov, e.provKey, e.pending = e.pending, e.pendKey, nil
		m.log.Info("server manager now uses the reloaded configuration", "server", e.id)
	}
}

// setState records a transition, wakes waiters and publishes the event.
func (m *Manager) setState(e *entry, to, reason string) {
	from := e.state
	if from == to && e.reason == reason {
		return
	}
	e.state, e.reason, e.since = to, reason, m.now()
	if to == StateOnline && e.players == 0 {
		e.idleSince = e.since
	}
	m.broadcast(e)
	if from == to || from == "" { // "" is a newly configured server: nothing changed yet
		return
	}
	m.bus.Publish(events.ServerStateChange, StateChange{Server: e.id, From: from, To: to, Reason: reason})
	lvl := slog.LevelInfo
	if to == StateCrashed {
		lvl = slog.LevelWarn
	}
	m.log.Log(context.Background(), lvl, "server state changed", "server", e.id, "from", from, "to", to, "reason", reason)
	if to == StateOnline && m.onReady != nil {
		for _, a := range e.addrs {
			m.after = append(m.after, func() { m.onReady(e.id, a) })
		}
	}
}

func (m *Manager) broadcast(e *entry) {
	close(e.changed)
	e.changed = make(chan struct{})
}

// Managed reports whether a login for server must go through EnsureStarted.
func (m *Manager) Managed(server string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[server] != nil
}

// State reads the server's state for the status MOTD; it never starts anything.
// An unmanaged server has no state: "".
func (m *Manager) State(server string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.servers[server]; e != nil {
		return e.state
	}
	return ""
}

// EnsureStarted starts the server if it is down and waits, up to start_timeout
// or ctx, until it is online. Concurrent callers share one start; a caller that
// arrives while the server is stopping waits for the stop and then starts it.
// Errors are player-facing: ErrStartTimeout, *StartError, ErrShuttingDown.
func (m *Manager) EnsureStarted(ctx context.Context, server string) error {
	m.mu.Lock()
	e := m.servers[server]
	if e == nil {
		m.mu.Unlock()
		return fmt.Errorf("server %q: %w", server, ErrNotManaged)
	}
	wctx, cancel := context.WithTimeout(ctx, e.sm.StartTimeout.D())
	defer cancel()
	joined := false // we started it or joined a start in progress
	for {
		if m.closed {
			m.unlock()
			return ErrShuttingDown
		}
		if e.removed {
			m.unlock()
			return &StartError{Server: server, Reason: "it was removed from the proxy's configuration"}
		}
		switch e.state {
		case StateOnline:
			// A login is activity: do not let an idle stop race this player's connect.
			if e.players == 0 {
				e.idleSince = m.now()
			}
			m.unlock()
			return nil
		case StateStarting:
			joined = true
		case StateStopping:
			if joined {
				m.unlock()
				return &StartError{Server: server, Reason: "it is being stopped (" + e.reason + ")"}
			}
		default:
			if joined {
				err := &StartError{Server: server, Reason: e.reason}
				m.unlock()
				return err
			}
			m.beginStart(e, "a player is joining", true)
			joined = true
		}
		ch := e.changed
		m.unlock()
		select {
		case <-ch:
		case <-wctx.Done():
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("stopped waiting for server %q: %w", server, err)
			}
			return ErrStartTimeout
		}
		m.mu.Lock()
	}
}

// Start asks for a start without waiting for readiness (admin API, CLI). A server
// that is stopping is started once the stop finished, within ctx.
func (m *Manager) Start(ctx context.Context, server string) error {
	m.mu.Lock()
	e := m.servers[server]
	if e == nil {
		m.mu.Unlock()
		return fmt.Errorf("server %q: %w", server, ErrNotManaged)
	}
	for {
		if m.closed {
			m.unlock()
			return ErrShuttingDown
		}
		if e.removed {
			m.unlock()
			return fmt.Errorf("server %q was removed from the configuration", server)
		}
		switch e.state {
		case StateOnline, StateStarting:
			m.unlock()
			return nil
		case StateStopping:
		default:
			m.beginStart(e, "started by an operator", true)
			m.unlock()
			return nil
		}
		ch := e.changed
		m.unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("server %q is still stopping; start it again once it is asleep: %w", server, ctx.Err())
		}
		m.mu.Lock()
	}
}

// Stop stops the server and waits until it is down or ctx ends; the stop goes on
// in the background after ctx ends. Players on it are disconnected by the server.
func (m *Manager) Stop(ctx context.Context, server string) error {
	m.mu.Lock()
	e := m.servers[server]
	if e == nil {
		m.mu.Unlock()
		return fmt.Errorf("server %q: %w", server, ErrNotManaged)
	}
	if m.closed {
		m.unlock()
		return ErrShuttingDown
	}
	if e.state == StateSleeping {
		m.unlock()
		return nil
	}
	if e.owner != ownerStop {
		m.beginStop(context.Background(), e, "stopped by an operator")
	}
	gen := e.gen
	// Wait for this stop's own result: a login may restart the server right after it.
	for e.gen == gen && e.owner == ownerStop {
		ch := e.changed
		m.unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("server %q is still stopping (it continues in the background): %w", server, ctx.Err())
		}
		m.mu.Lock()
	}
	var err error
	switch {
	case e.stopGen != gen:
		err = fmt.Errorf("server %q: the stop was interrupted (now %s: %s)", server, e.state, e.reason)
	case e.stopErr != nil:
		err = fmt.Errorf("server %q did not stop: %w", server, e.stopErr)
	}
	m.unlock()
	return err
}

// PlayerJoined counts a session on the server, which holds off the idle stop.
func (m *Manager) PlayerJoined(server string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.servers[server]; e != nil {
		e.players++
		e.idleSince = time.Time{}
	}
}

// PlayerLeft ends a session; the idle clock starts when the last player leaves.
func (m *Manager) PlayerLeft(server string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.servers[server]; e != nil {
		e.players = max(e.players-1, 0)
		if e.players == 0 {
			e.idleSince = m.now()
		}
	}
}

// Snapshot lists the managed servers sorted by id, for the admin API.
func (m *Manager) Snapshot() []ServerState {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	out := make([]ServerState, 0, len(m.servers))
	for _, e := range m.servers {
		st := ServerState{
			ID: e.id, Type: e.sm.Type, State: e.state, Reason: e.reason, Since: e.since,
			Players: e.players, ShutdownAfterSecs: e.sm.ShutdownAfter.D().Seconds(), LastError: e.lastErr,
		}
		if e.state == StateOnline && e.players == 0 && !e.idleSince.IsZero() {
			idle := now.Sub(e.idleSince).Seconds()
			st.IdleSecs = &idle
		}
		if lp, ok := e.prov.(*localProvider); ok {
			st.LastOutput = lp.lastOutput()
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b ServerState) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Run polls providers every poll_interval and stops idle servers until ctx ends
// or Shutdown is called.
func (m *Manager) Run(ctx context.Context) {
	t := time.NewTicker(m.tick)
	defer t.Stop()
	for {
		m.check()
		select {
		case <-ctx.Done():
			return
		case <-m.base.Done():
			return
		case <-t.C:
		}
	}
}

// check is one pass of Run: idle stops and due polls.
func (m *Manager) check() {
	m.mu.Lock()
	defer m.unlock()
	if m.closed {
		return
	}
	now := m.now()
	for _, e := range m.servers {
		if idle := e.sm.ShutdownAfter.D(); idle > 0 && e.state == StateOnline && e.owner == ownerNone &&
			e.players == 0 && !e.idleSince.IsZero() && now.Sub(e.idleSince) >= idle {
			m.beginStop(context.Background(), e, fmt.Sprintf("no players for %s (shutdown_after)", idle))
			continue
		}
		if e.owner == ownerNone && !e.polling && (e.lastPoll.IsZero() || now.Sub(e.lastPoll) >= e.sm.PollInterval.D()) {
			e.polling = true
			m.wg.Add(1)
			go m.poll(e)
		}
	}
}

// providerChanged is the provider's "look now" (a process exited, a ready line
// appeared): it wakes a start loop, or polls at once when no loop owns the server.
func (m *Manager) providerChanged(e *entry) {
	m.mu.Lock()
	if !m.closed && !e.removed && e.owner == ownerNone && !e.polling {
		e.polling = true
		m.wg.Add(1)
		go m.poll(e)
	}
	m.unlock()
	select {
	case e.nudge <- struct{}{}:
	default:
	}
}

// poll reconciles the state with the provider while no start or stop loop owns it,
// catching crashes and starts or stops made outside the proxy.
func (m *Manager) poll(e *entry) {
	defer m.wg.Done()
	m.mu.Lock()
	prov := e.prov
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(m.base, statusTimeout)
	obs, err := prov.Status(ctx)
	cancel()

	m.mu.Lock()
	defer m.unlock()
	e.polling, e.lastPoll = false, m.now()
	if m.closed || e.removed || e.owner != ownerNone || e.prov != prov {
		return
	}
	if err != nil {
		if e.lastErr != err.Error() {
			m.log.Warn("cannot read server state", "server", e.id, "err", err)
		}
		e.lastErr = err.Error()
		if e.state == StateOffline {
			m.setState(e, StateOffline, err.Error())
		}
		return
	}
	e.lastErr = ""
	switch obs.Phase {
	case PhaseRunning, PhaseStarting:
		if e.state != StateOnline {
			m.beginStart(e, "started outside the proxy", false)
		}
	case PhaseStopping:
		m.setState(e, StateStopping, "stopping outside the proxy")
	case PhaseStopped:
		if e.state != StateSleeping && e.state != StateCrashed {
			reason := "stopped outside the proxy"
			if e.state == StateOffline {
				reason = "not running"
			}
			m.setState(e, StateSleeping, reason)
		}
		m.swapPending(e)
	case PhaseCrashed:
		m.setState(e, StateCrashed, obs.Reason)
		m.swapPending(e)
	}
}

// beginStart hands the server to a start loop; call=false adopts a start made elsewhere.
func (m *Manager) beginStart(e *entry, why string, call bool) {
	if e.cancel != nil {
		e.cancel()
	}
	e.gen++
	ctx, cancel := context.WithCancel(m.base)
	e.owner, e.cancel = ownerStart, cancel
	m.setState(e, StateStarting, why)
	m.wg.Add(1)
	go m.startLoop(ctx, e, e.gen, call)
}

// readyInterval is how often a starting server is checked: often enough that a
// waiting player is not held long after it is ready, never more often than 100/s.
func readyInterval(poll time.Duration) time.Duration {
	return min(max(poll, 10*time.Millisecond), 500*time.Millisecond)
}

func (m *Manager) startLoop(ctx context.Context, e *entry, gen uint64, call bool) {
	defer m.wg.Done()
	m.mu.Lock()
	prov, addrs, sm := e.prov, slices.Clone(e.addrs), e.sm
	m.mu.Unlock()
	timeout := sm.StartTimeout.D()
	if call {
		sctx, cancel := context.WithTimeout(ctx, timeout)
		err := prov.Start(sctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			m.endStart(e, gen, StateCrashed, "the start failed: "+err.Error())
			return
		}
	}
	interval := readyInterval(sm.PollInterval.D())
	tick := time.NewTicker(interval)
	defer tick.Stop()
	late := time.NewTimer(timeout)
	defer late.Stop()
	sawUp, warned := false, false
	for {
		sctx, cancel := context.WithTimeout(ctx, statusTimeout)
		obs, err := prov.Status(sctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		m.noteErr(e, gen, err)
		if err == nil {
			switch obs.Phase {
			case PhaseCrashed:
				m.endStart(e, gen, StateCrashed, obs.Reason)
				return
			case PhaseStopping:
				m.endStart(e, gen, StateStopping, "stopping outside the proxy")
				return
			case PhaseStopped:
				if sawUp {
					m.endStart(e, gen, StateCrashed, "it went down again while starting")
					return
				}
			case PhaseStarting:
				sawUp = true
			case PhaseRunning:
				sawUp = true
				if len(addrs) == 0 || pingStatus(ctx, addrs[0], max(interval, time.Second)) == nil {
					m.endStart(e, gen, StateOnline, "ready")
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-e.nudge:
		case <-tick.C:
		case <-late.C:
			if !sawUp {
				m.endStart(e, gen, StateCrashed, fmt.Sprintf("the provider still reports it stopped %s after the start request (start_timeout)", timeout))
				return
			}
			if !warned {
				warned = true
				m.log.Warn("server is still not ready after start_timeout; players are asked to reconnect, the start goes on",
					"server", e.id, "start_timeout", timeout)
			}
		}
	}
}

func (m *Manager) noteErr(e *entry, gen uint64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.gen != gen {
		return
	}
	if err == nil {
		e.lastErr = ""
		return
	}
	if e.lastErr != err.Error() {
		m.log.Warn("cannot read server state", "server", e.id, "err", err)
	}
	e.lastErr = err.Error()
}

func (m *Manager) endStart(e *entry, gen uint64, to, reason string) {
	m.mu.Lock()
	defer m.unlock()
	if e.gen != gen {
		return
	}
	e.owner, e.cancel = ownerNone, nil
	e.lastPoll = m.now()
	m.setState(e, to, reason)
	if to == StateCrashed {
		m.swapPending(e)
	}
}

// beginStop hands the server to a stop loop; a start in progress is abandoned.
func (m *Manager) beginStop(ctx context.Context, e *entry, why string) {
	if e.cancel != nil {
		e.cancel()
		e.cancel = nil
	}
	e.gen++
	e.owner = ownerStop
	m.setState(e, StateStopping, why)
	m.wg.Add(1)
	go m.stopLoop(ctx, e, e.gen, why)
}

func (m *Manager) stopLoop(ctx context.Context, e *entry, gen uint64, why string) {
	defer m.wg.Done()
	m.mu.Lock()
	prov, grace := e.prov, e.sm.ShutdownTimeout.D()
	m.mu.Unlock()
	how, err := prov.Stop(ctx, grace)
	m.mu.Lock()
	defer m.unlock()
	if e.gen != gen {
		return
	}
	e.owner = ownerNone
	e.lastPoll = m.now()
	e.stopGen, e.stopErr = gen, err
	if err != nil {
		m.log.Error("stopping server failed", "server", e.id, "err", err)
		m.setState(e, StateOffline, fmt.Sprintf("%s, but the stop failed: %v", why, err))
		return
	}
	m.setState(e, StateSleeping, why+"; "+how)
	m.swapPending(e)
}

// Shutdown is for proxy exit: nothing starts any more, waiting players are
// released, local processes are stopped cleanly (they are our children), panel
// servers keep running. It returns when every loop ended or ctx is done; at
// ctx's end, local processes still stopping are killed.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		m.baseCancel()
		for _, e := range m.servers {
			if lp, ok := e.prov.(*localProvider); ok {
				if ph := lp.statusNow().Phase; ph != PhaseStopped && ph != PhaseCrashed {
					m.beginStop(ctx, e, "the proxy is shutting down")
					continue
				}
			}
			m.broadcast(e)
		}
	}
	m.unlock()
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server manager: gave up waiting for servers to stop: %w", ctx.Err())
	}
}

// pingStatus reports whether a status exchange with addr succeeds, which is when
// a Minecraft server accepts players.
func pingStatus(ctx context.Context, addr string, timeout time.Duration) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return fmt.Errorf("address %q: bad port: %w", addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, _, err := mc.QueryStatus(c, host, uint16(port), pingProtocol); err != nil && !errors.Is(err, mc.ErrNoPong) {
		return err
	}
	return nil
}
