package manager

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// StateChange is the Data of a server.state_change event; it lives in events so
// metrics and the SSE stream read it without importing the manager.
type StateChange = events.ServerState

// ServerState is one managed server as the admin API shows it.
type ServerState struct {
	ID      string    `json:"id"`
	Type    string    `json:"type"`             // local, pterodactyl, crafty, docker or kubernetes
	State   State     `json:"state"`            // one of the State* constants
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

// owner says which loop drives a server; at most one does at a time.
type owner int

const (
	ownerNone  owner = iota // polls reconcile the state
	ownerStart              // a start loop follows it until ready
	ownerStop               // a stop loop follows it until down
)

// entry is one managed server. Every field is guarded by Manager.mu.
type entry struct {
	id      string
	sm      config.ServerManager // timings defaulted
	addrs   []string
	prov    Provider
	provKey string
	pending Provider // new provider config, swapped in once the server is down
	pendKey string

	state     State
	reason    string
	since     time.Time
	players   int
	idleSince time.Time
	changed   chan struct{} // closed and replaced on every state change
	nudge     chan struct{} // cap 1: the provider saw something, look now

	gen      uint64 // moves whenever a start or stop loop takes over; stale loops quit
	owner    owner
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
	bus       *events.Bus
	log       *slog.Logger
	clock     Clock
	onReady   func(server, address string)
	tick      time.Duration
	http      *http.Client
	providers map[string]ProviderFunc
	fleet     Fleet // nil unless in a [fleet] (fleet.go)

	base       context.Context // ends at Shutdown: start loops and polls stop
	baseCancel context.CancelFunc
	wg         sync.WaitGroup // every loop the manager started

	mu      sync.Mutex
	servers map[string]*entry
	closed  bool
	after   []func() // callbacks collected under mu, run by unlock
}

// New makes a manager with no servers; call Configure, then run Run in the background.
func New(opts Options) *Manager {
	opts = opts.withDefaults()
	m := &Manager{
		bus: opts.Bus, log: opts.Logger, clock: opts.Clock, onReady: opts.OnReady,
		tick: opts.Tick, http: opts.HTTPClient, providers: opts.Providers, fleet: opts.Fleet,
		servers: map[string]*entry{},
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

// spawn runs f as one of the manager's loops, which Shutdown waits for.
func (m *Manager) spawn(f func()) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
}

// Configure applies the servers of a (re)loaded configuration. New managed servers
// are added, removed ones forgotten (a child process of a removed server is stopped,
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
		errs = append(errs, m.configure(s))
	}
	for id, e := range m.servers {
		if !seen[id] {
			m.forget(e)
		}
	}
	return errors.Join(errs...)
}

// configure adds or updates one server.
func (m *Manager) configure(s *config.Server) error {
	sm := s.ServerManager.WithDefaults()
	addrs := make([]string, 0, len(s.Addresses))
	for _, a := range s.Addresses {
		addrs = append(addrs, a.Address)
	}
	key := providerKey(&sm)
	e := m.servers[s.ID]
	if e == nil {
		e = &entry{
			id: s.ID, changed: make(chan struct{}), nudge: make(chan struct{}, 1),
			since: m.clock.Now(), sm: sm, addrs: addrs,
		}
		m.servers[s.ID] = e
		prov, err := m.newProvider(e, &sm)
		e.prov, e.provKey = prov, key
		m.initState(e, err)
		return err
	}
	e.sm, e.addrs = sm, addrs
	if key == e.provKey {
		e.pending = nil
		return nil
	}
	prov, err := m.newProvider(e, &sm)
	e.pending, e.pendKey = prov, key
	if e.owner == ownerNone && e.state.down() {
		m.swapPending(e)
		m.initState(e, err)
	}
	return err
}

// forget drops a server that left the configuration; its child process, if any,
// is stopped, since nothing else would stop it.
func (m *Manager) forget(e *entry) {
	delete(m.servers, e.id)
	e.removed = true
	if c, ok := e.prov.(ChildProcess); ok && c.Alive() && !m.closed {
		m.beginStop(e, "removed from the configuration")
	}
	if e.cancel != nil && e.owner == ownerStart {
		e.cancel()
	}
	m.broadcast(e)
	m.log.Info("server no longer managed", "server", e.id)
}

// initState sets a fresh provider's first state: known at once when the provider
// can tell without I/O, "offline" until the first poll otherwise.
func (m *Manager) initState(e *entry, err error) {
	if err != nil {
		m.setState(e, StateOffline, err.Error())
		return
	}
	if is, ok := e.prov.(InstantStatus); ok {
		if obs := is.StatusNow(); obs.Phase == PhaseCrashed {
			m.setState(e, StateCrashed, obs.Reason)
		} else {
			m.setState(e, StateSleeping, "not running")
		}
		return
	}
	m.setState(e, StateOffline, "waiting for the first poll")
	e.lastPoll = time.Time{}
}

// swapPending puts a reloaded provider in place once the server is down.
func (m *Manager) swapPending(e *entry) {
	if e.pending != nil {
		e.prov, e.provKey, e.pending = e.pending, e.pendKey, nil
		m.log.Info("server manager now uses the reloaded configuration", "server", e.id)
	}
}

// setState records a transition, wakes waiters and publishes the event.
func (m *Manager) setState(e *entry, to State, reason string) {
	from := e.state
	if from == to && e.reason == reason {
		return
	}
	if !canMove(from, to) {
		// A bug in the manager; applied anyway so no waiter hangs on a state that never comes.
		m.log.Error("server manager: state change outside the state machine", "server", e.id,
			"from", from, "to", to, "reason", reason)
	}
	e.state, e.reason, e.since = to, reason, m.clock.Now()
	if to == StateOnline && e.players == 0 {
		e.idleSince = e.since
	}
	m.broadcast(e)
	if from == to || from == "" { // "" is a newly configured server: nothing changed yet
		return
	}
	m.bus.Publish(events.ServerStateChange, StateChange{Server: e.id, From: string(from), To: string(to), Reason: reason})
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

// broadcast wakes everyone waiting for e to change.
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
func (m *Manager) State(server string) State {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.servers[server]; e != nil {
		return e.state
	}
	return ""
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
			e.idleSince = m.clock.Now()
		}
	}
}

// Snapshot lists the managed servers sorted by id, for the admin API.
func (m *Manager) Snapshot() []ServerState {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
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
		if co, ok := e.prov.(ConsoleOutput); ok {
			st.LastOutput = co.LastOutput()
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b ServerState) int { return strings.Compare(a.ID, b.ID) })
	return out
}
