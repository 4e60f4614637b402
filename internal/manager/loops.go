package manager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// The loops: Run (idle stops and due polls), poll (reconcile with the provider
// while no loop owns a server), the start loop (request a start, then follow it
// until ready) and the stop loop. A loop owns a server through entry.owner and
// entry.gen; a loop whose gen moved on quits without touching the state.

// Run polls providers every poll_interval and stops idle servers until ctx ends
// or Shutdown is called.
func (m *Manager) Run(ctx context.Context) {
	for {
		m.check()
		tick, stop := m.clock.NewTimer(m.tick)
		select {
		case <-ctx.Done():
			stop()
			return
		case <-m.base.Done():
			stop()
			return
		case <-tick:
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
	now := m.clock.Now()
	for _, e := range m.servers {
		m.fleetPlayers(e, now) // fleet.go: players elsewhere in the fleet hold off the idle stop
		if idle := e.sm.ShutdownAfter.D(); idle > 0 && e.state == StateOnline && e.owner == ownerNone &&
			e.players == 0 && !e.idleSince.IsZero() && now.Sub(e.idleSince) >= idle {
			m.beginStop(e, fmt.Sprintf("no players for %s (shutdown_after)", idle))
			continue
		}
		if e.owner == ownerNone && (e.lastPoll.IsZero() || now.Sub(e.lastPoll) >= e.sm.PollInterval.D()) {
			m.beginPoll(e)
		}
	}
}

// providerChanged is the provider's "look now" (a process exited, a ready line
// appeared): it wakes a start loop, or polls at once when no loop owns the server.
func (m *Manager) providerChanged(e *entry) {
	m.mu.Lock()
	if !m.closed && !e.removed && e.owner == ownerNone {
		m.beginPoll(e)
	}
	m.unlock()
	select {
	case e.nudge <- struct{}{}:
	default:
	}
}

// beginPoll starts one poll of e unless one is already under way.
func (m *Manager) beginPoll(e *entry) {
	if e.polling {
		return
	}
	e.polling = true
	prov := e.prov
	m.spawn(func() { m.poll(e, prov) })
}

// poll reconciles the state with the provider while no start or stop loop owns it,
// catching crashes and starts or stops made outside the proxy.
func (m *Manager) poll(e *entry, prov Provider) {
	ctx, cancel := context.WithTimeout(m.base, statusTimeout)
	obs, err := prov.Status(ctx)
	cancel()

	m.mu.Lock()
	defer m.unlock()
	e.polling, e.lastPoll = false, m.clock.Now()
	if m.closed || e.removed || e.owner != ownerNone || e.prov != prov {
		return
	}
	if err != nil {
		m.noteErrLocked(e, err)
		if e.state == StateOffline {
			m.setState(e, StateOffline, err.Error())
		}
		return
	}
	e.lastErr = ""
	switch obs.Phase {
	case PhaseRunning, PhaseStarting:
		if e.state != StateOnline {
			m.adoptStart(e, "started outside the proxy")
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

// startRun is what one start loop works with, read under the lock when it took over.
type startRun struct {
	ctx   context.Context // ends when another loop takes over or at Shutdown
	e     *entry
	gen   uint64
	prov  Provider
	addrs []string
	sm    config.ServerManager
}

// beginStart asks the provider to start the server and follows it until ready.
func (m *Manager) beginStart(e *entry, why string) {
	r := m.takeStart(e, why)
	m.spawn(func() {
		if m.fleet != nil {
			m.fleetStart(r) // fleet.go: one proxy of the fleet starts it
			return
		}
		if m.requestStart(r) {
			m.awaitReady(r)
		}
	})
}

// adoptStart follows a start made outside the proxy until ready.
func (m *Manager) adoptStart(e *entry, why string) {
	r := m.takeStart(e, why)
	m.spawn(func() { m.awaitReady(r) })
}

// takeStart hands the server to a new start loop; a loop in progress is abandoned.
func (m *Manager) takeStart(e *entry, why string) startRun {
	if e.cancel != nil {
		e.cancel()
	}
	e.gen++
	ctx, cancel := context.WithCancel(m.base)
	e.owner, e.cancel = ownerStart, cancel
	m.setState(e, StateStarting, why)
	return startRun{ctx: ctx, e: e, gen: e.gen, prov: e.prov, addrs: slices.Clone(e.addrs), sm: e.sm}
}

// requestStart calls the provider's Start; it reports whether to follow the start.
func (m *Manager) requestStart(r startRun) bool {
	sctx, cancel := context.WithTimeout(r.ctx, r.sm.StartTimeout.D())
	err := r.prov.Start(sctx)
	cancel()
	if r.ctx.Err() != nil {
		return false
	}
	if err != nil {
		m.log.Warn("server start request failed", "server", r.e.id, "err", err)
		m.endStart(r, StateCrashed, startFailed+": "+reasonFrom(err))
		return false
	}
	return true
}

// readyInterval is how often a starting server is checked: often enough that a
// waiting player is not held long after it is ready, never more often than 100/s.
func readyInterval(poll time.Duration) time.Duration {
	return min(max(poll, 10*time.Millisecond), 500*time.Millisecond)
}

// awaitReady follows a start until the server is online (provider says it runs
// and its first address answers a status ping), crashed or stopped. A server not
// ready after start_timeout keeps starting: big servers take minutes.
func (m *Manager) awaitReady(r startRun) {
	timeout := r.sm.StartTimeout.D()
	interval := readyInterval(r.sm.PollInterval.D())
	deadline := m.clock.Now().Add(timeout)
	late, stopLate := m.clock.NewTimer(timeout)
	defer stopLate()
	sawUp, warned := false, false
	for {
		// Judged by the clock at every look, whatever woke the loop, so the verdict
		// does not depend on which of several ready wake-ups came first.
		if !m.clock.Now().Before(deadline) {
			if !sawUp {
				m.endStart(r, StateCrashed, fmt.Sprintf("the provider still reports it stopped %s after the start request (start_timeout)", timeout))
				return
			}
			if !warned {
				warned = true
				m.log.Warn("server is still not ready after start_timeout; players are asked to reconnect, the start goes on",
					"server", r.e.id, "start_timeout", timeout)
			}
		}
		sctx, cancel := context.WithTimeout(r.ctx, statusTimeout)
		obs, err := r.prov.Status(sctx)
		cancel()
		if r.ctx.Err() != nil {
			return
		}
		m.noteErr(r, err)
		if err == nil {
			switch obs.Phase {
			case PhaseCrashed:
				m.endStart(r, StateCrashed, obs.Reason)
				return
			case PhaseStopping:
				m.endStart(r, StateStopping, "stopping outside the proxy")
				return
			case PhaseStopped:
				if sawUp {
					m.endStart(r, StateCrashed, "it went down again while starting")
					return
				}
			case PhaseStarting:
				sawUp = true
			case PhaseRunning:
				sawUp = true
				if len(r.addrs) == 0 || pingStatus(r.ctx, r.addrs[0], max(interval, time.Second)) == nil {
					m.endStart(r, StateOnline, "ready")
					return
				}
			}
		}
		tick, stopTick := m.clock.NewTimer(interval)
		select {
		case <-r.ctx.Done():
		case <-r.e.nudge:
		case <-tick:
		case <-late:
		}
		stopTick()
	}
}

// noteErr records a failed Status of a start loop that still owns the server.
func (m *Manager) noteErr(r startRun, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.e.gen != r.gen {
		return
	}
	if err == nil {
		r.e.lastErr = ""
		return
	}
	m.noteErrLocked(r.e, err)
}

// noteErrLocked keeps the provider's last failure for the admin API and logs it
// once, not at every poll.
func (m *Manager) noteErrLocked(e *entry, err error) {
	if e.lastErr != err.Error() {
		m.log.Warn("cannot read server state", "server", e.id, "err", err)
	}
	e.lastErr = err.Error()
}

// endStart ends a start loop's ownership with the state it reached.
func (m *Manager) endStart(r startRun, to State, reason string) {
	m.mu.Lock()
	defer m.unlock()
	e := r.e
	if e.gen != r.gen {
		return
	}
	e.owner, e.cancel = ownerNone, nil
	e.lastPoll = m.clock.Now()
	m.setState(e, to, reason)
	if to == StateCrashed {
		m.swapPending(e)
	}
}

// beginStop hands the server to a stop loop; a start in progress is abandoned.
// The stop gets the server's own grace (shutdown_timeout), whoever asked for it.
func (m *Manager) beginStop(e *entry, why string) {
	if e.cancel != nil {
		e.cancel()
		e.cancel = nil
	}
	e.gen++
	e.owner = ownerStop
	m.setState(e, StateStopping, why)
	gen, prov, grace := e.gen, e.prov, e.sm.ShutdownTimeout.D()
	// A child process always gets its whole grace, even at proxy exit: it would
	// otherwise be killed without saving. A panel finishes a stop on its own, so
	// proxy exit does not wait for that one.
	ctx := m.base
	if _, child := prov.(ChildProcess); child {
		ctx = context.WithoutCancel(m.base)
	}
	m.spawn(func() { m.stopLoop(ctx, e, gen, prov, grace, why) })
}

func (m *Manager) stopLoop(ctx context.Context, e *entry, gen uint64, prov Provider, grace time.Duration, why string) {
	how, err := prov.Stop(ctx, grace)
	m.mu.Lock()
	defer m.unlock()
	if e.gen != gen {
		return
	}
	e.owner = ownerNone
	e.lastPoll = m.clock.Now()
	e.stopGen, e.stopErr = gen, err
	switch {
	case err != nil && m.closed && errors.Is(err, context.Canceled):
		m.log.Info("proxy exiting; the provider finishes the stop on its own", "server", e.id)
	case err != nil:
		m.log.Error("stopping server failed", "server", e.id, "err", err)
		m.setState(e, StateOffline, why+", but the stop failed: "+reasonFrom(err))
	default:
		m.setState(e, StateSleeping, why+"; "+how)
		m.swapPending(e)
	}
}
