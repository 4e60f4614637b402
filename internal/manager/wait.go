package manager

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errLimit is await's "ended" when the wait's own limit (start_timeout) passed.
var errLimit = errors.New("wait limit reached")

// await is the one way the manager's callers wait for a server: it runs step under
// m.mu now and again after every change of e, until step reports done and its
// error. It gives up when ctx ends or limit fires (a nil limit never does), and
// then says why in ended (ctx.Err() or errLimit) so each caller can word it for
// its reader. EnsureStarted, Start and Stop differ only in their step.
func (m *Manager) await(ctx context.Context, e *entry, limit <-chan time.Time, step func() (done bool, err error)) (err, ended error) {
	m.mu.Lock()
	for {
		if done, err := step(); done {
			m.unlock()
			return err, nil
		}
		ch := e.changed
		m.unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-limit:
			return nil, errLimit
		}
		m.mu.Lock()
	}
}

// lookup finds a managed server, for the calls that name one.
func (m *Manager) lookup(server string) (*entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.servers[server]; e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("server %q: %w", server, ErrNotManaged)
}

// EnsureStarted starts the server if it is down and waits, up to start_timeout
// or ctx, until it is online. Concurrent callers share one start; a caller that
// arrives while the server is stopping waits for the stop and then starts it.
// Every error's text is fit for the player: ErrStartTimeout, *StartError,
// ErrShuttingDown, or, when ctx ends first, an error that reads like
// ErrStartTimeout (the start goes on) and wraps ctx's error.
func (m *Manager) EnsureStarted(ctx context.Context, server string) error {
	e, err := m.lookup(server)
	if err != nil {
		return err
	}
	m.mu.Lock()
	timeout := e.sm.StartTimeout.D()
	m.mu.Unlock()
	limit, stopLimit := m.clock.NewTimer(timeout)
	defer stopLimit()

	joined := false // we started it or joined a start in progress
	err, ended := m.await(ctx, e, limit, func() (bool, error) {
		switch {
		case m.closed:
			return true, ErrShuttingDown
		case e.removed:
			return true, &StartError{Server: server, Reason: "it was removed from the proxy's configuration"}
		}
		switch e.state {
		case StateOnline:
			// A login is activity: do not let an idle stop race this player's connect.
			if e.players == 0 {
				e.idleSince = m.clock.Now()
			}
			return true, nil
		case StateStarting:
			joined = true
		case StateStopping:
			// Not ours: wait for the stop to finish, then start it. Ours: it was stopped under us.
			if joined {
				return true, &StartError{Server: server, Reason: "it is being stopped (" + e.reason + ")"}
			}
		default:
			if joined {
				return true, &StartError{Server: server, Reason: playerSafe(e.reason)}
			}
			m.beginStart(e, "a player is joining")
			joined = true
		}
		return false, nil
	})
	switch {
	case errors.Is(ended, errLimit):
		return ErrStartTimeout
	case ended != nil:
		return stoppedWaiting{cause: ended}
	}
	return err
}

// Start asks for a start without waiting for readiness (admin API, CLI). A server
// that is stopping is started once the stop finished, within ctx.
func (m *Manager) Start(ctx context.Context, server string) error {
	e, err := m.lookup(server)
	if err != nil {
		return err
	}
	err, ended := m.await(ctx, e, nil, func() (bool, error) {
		switch {
		case m.closed:
			return true, ErrShuttingDown
		case e.removed:
			return true, fmt.Errorf("server %q was removed from the configuration", server)
		}
		switch e.state {
		case StateOnline, StateStarting:
			return true, nil
		case StateStopping:
			return false, nil
		}
		m.beginStart(e, "started by an operator")
		return true, nil
	})
	if ended != nil {
		return fmt.Errorf("server %q is still stopping; start it again once it is asleep: %w", server, ended)
	}
	return err
}

// Stop stops the server and waits until it is down or ctx ends; the stop goes on
// in the background after ctx ends. Players on it are disconnected by the server.
func (m *Manager) Stop(ctx context.Context, server string) error {
	e, err := m.lookup(server)
	if err != nil {
		return err
	}
	var gen uint64 // the stop this call waits for
	begun := false
	err, ended := m.await(ctx, e, nil, func() (bool, error) {
		if !begun {
			begun = true
			switch {
			case m.closed:
				return true, ErrShuttingDown
			case e.removed:
				return true, fmt.Errorf("server %q was removed from the configuration", server)
			case e.state == StateSleeping:
				return true, nil
			}
			if e.owner != ownerStop {
				m.beginStop(e, "stopped by an operator")
			}
			gen = e.gen
		}
		// Wait for this stop's own result: a login may restart the server right after it.
		if e.gen == gen && e.owner == ownerStop {
			return false, nil
		}
		switch {
		case e.stopGen != gen:
			return true, fmt.Errorf("server %q: the stop was interrupted (now %s: %s)", server, e.state, e.reason)
		case e.stopErr != nil:
			return true, fmt.Errorf("server %q did not stop: %w", server, e.stopErr)
		}
		return true, nil
	})
	if ended != nil {
		return fmt.Errorf("server %q is still stopping (it continues in the background): %w", server, ended)
	}
	return err
}
