package manager

import (
	"context"
	"fmt"
	"time"
)

// Fleet is what the manager needs when several proxies share managed servers
// (internal/fleet provides it through Options.Fleet; nil means this proxy is on
// its own and nothing here runs):
//
//   - one start: a start first takes the server's wake lock. The proxy that gets
//     it starts the server; the others wait until it answers a status ping, and
//     try the lock again meanwhile, so a holder that died (its lock expires after
//     wake_lock_ttl) is replaced. A proxy that finds the server already answering
//     once it holds the lock does not start it again.
//   - fleet-wide idle: players on the other proxies count as players here, so
//     the idle stop waits until the whole fleet has left.
//   - a local server run by another proxy: when this proxy does not run the
//     process itself but the server answers, it is online here too.
//
// Redis unreachable: TryWake fails and the manager starts the server itself
// (started twice beats never started); idle counting keeps the last known counts.
type Fleet interface {
	// TryWake tries to take server's wake lock. held: this proxy starts it and
	// calls release when the start ended (the lock is renewed meanwhile). Not
	// held: holder is starting it. err: the fleet cannot tell.
	TryWake(ctx context.Context, server string) (release func(), held bool, holder string, err error)
	// OtherPlayers is the number of players on server through the other live
	// proxies, as last known; it must not block.
	OtherPlayers(server string) int
}

// fleetStart is the start loop of a fleet member: take the wake lock, then start
// the server (unless it already answers) or wait for the holder's start.
func (m *Manager) fleetStart(r startRun) {
	interval := readyInterval(r.sm.PollInterval.D())
	announced := ""
	for {
		release, held, holder, err := m.fleet.TryWake(r.ctx, r.e.id)
		if r.ctx.Err() != nil {
			if held {
				release()
			}
			return
		}
		if err != nil {
			m.log.Warn("cannot ask the fleet who starts the server; starting it here (another proxy may start it too)",
				"server", r.e.id, "err", err)
			held, release = true, func() {}
		}
		if held {
			defer release()
			if m.answering(r) {
				m.endStart(r, StateOnline, "already running (started by another proxy of the fleet)")
				return
			}
			if m.requestStart(r) {
				m.awaitReady(r)
			}
			return
		}
		if holder != announced {
			announced = holder
			m.log.Info("another proxy of the fleet is starting the server; waiting for it", "server", r.e.id, "proxy", holder)
			m.setReason(r, fmt.Sprintf("being started by proxy %s of the fleet", holder))
		}
		if m.answering(r) {
			m.endStart(r, StateOnline, "started by proxy "+holder+" of the fleet")
			return
		}
		tick, stop := m.clock.NewTimer(interval)
		select {
		case <-r.ctx.Done():
		case <-r.e.nudge:
		case <-tick:
		}
		stop()
		if r.ctx.Err() != nil {
			return
		}
	}
}

// answering reports whether the server is up without this proxy starting it: its
// first address answers a status ping, or (no address) its provider says it runs.
func (m *Manager) answering(r startRun) bool {
	if len(r.addrs) > 0 {
		return pingStatus(r.ctx, r.addrs[0], time.Second) == nil
	}
	ctx, cancel := context.WithTimeout(r.ctx, statusTimeout)
	defer cancel()
	obs, err := r.prov.Status(ctx)
	return err == nil && obs.Phase == PhaseRunning
}

// setReason updates the reason of a start still owned by r, so the admin API
// says who is starting the server.
func (m *Manager) setReason(r startRun, reason string) {
	m.mu.Lock()
	defer m.unlock()
	if r.e.gen == r.gen && r.e.state == StateStarting {
		m.setState(r.e, StateStarting, reason)
	}
}

// fleetPlayers keeps an online server's idle clock at zero while the other
// proxies have players on it; the caller holds mu.
func (m *Manager) fleetPlayers(e *entry, now time.Time) {
	if m.fleet != nil && e.state == StateOnline && e.players == 0 && m.fleet.OtherPlayers(e.id) > 0 {
		e.idleSince = now
	}
}

// elsewhere wraps a ChildProcess provider of a fleet member: when this proxy does
// not run the process but the server answers, another proxy runs it, and the
// server is running here too (instead of flapping to sleeping at every poll).
type elsewhere struct {
	Provider
	child ChildProcess
	addrs func() []string
}

// fleetProvider wraps p when the manager is in a fleet and p runs a child process.
func (m *Manager) fleetProvider(p Provider, e *entry) Provider {
	child, ok := p.(ChildProcess)
	if m.fleet == nil || !ok {
		return p
	}
	return &elsewhere{Provider: p, child: child, addrs: func() []string {
		m.mu.Lock()
		defer m.mu.Unlock()
		return append([]string(nil), e.addrs...)
	}}
}

// Status is the child's own when it runs here, else whether the server answers.
func (w *elsewhere) Status(ctx context.Context) (Observation, error) {
	obs, err := w.Provider.Status(ctx)
	if err != nil || w.child.Alive() || obs.Phase == PhaseCrashed {
		return obs, err
	}
	if a := w.addrs(); len(a) > 0 && pingStatus(ctx, a[0], time.Second) == nil {
		return Observation{Phase: PhaseRunning}, nil
	}
	return obs, nil
}

// Alive implements ChildProcess.
func (w *elsewhere) Alive() bool { return w.child.Alive() }

// StatusNow implements InstantStatus without I/O: the process as this proxy sees it.
func (w *elsewhere) StatusNow() Observation {
	if is, ok := w.Provider.(InstantStatus); ok {
		return is.StatusNow()
	}
	return Observation{Phase: PhaseStopped}
}

// LastOutput implements ConsoleOutput.
func (w *elsewhere) LastOutput() []string {
	if co, ok := w.Provider.(ConsoleOutput); ok {
		return co.LastOutput()
	}
	return nil
}
