package manager

import (
	"errors"
	"fmt"
)

// Shutdown is for proxy exit; call it after the proxy's own Shutdown returned (its
// sessions are over), whatever that took. Nothing starts any more and logins still
// waiting get ErrShuttingDown. Every server that is the proxy's child process
// (type "local") and still runs is stopped with its own grace: the stop command,
// then its shutdown_timeout (SIGTERM at half, SIGKILL at the end); a stop already
// under way keeps its own. Panel servers are left as they are, and a panel stop in
// progress is left to the panel.
//
// It takes no deadline on purpose: a deadline the caller already spent on its
// sessions would kill the servers without saving. It returns once those stops
// ended, at most the largest shutdown_timeout of a running local server plus 5 s
// (the wait for the process to vanish after SIGKILL); with no running local
// server it returns at once. The error names the servers that could not be
// stopped. Calling it again waits for the same stops.
func (m *Manager) Shutdown() error {
	m.mu.Lock()
	stops := map[*entry]uint64{} // child stops whose result Shutdown reports
	if !m.closed {
		m.closed = true
		m.baseCancel()
		for _, e := range m.servers {
			c, child := e.prov.(ChildProcess)
			switch {
			case child && e.owner == ownerStop:
				stops[e] = e.gen // an idle or operator stop runs with its own grace
			case child && c.Alive():
				m.beginStop(e, "the proxy is shutting down")
				stops[e] = e.gen
			default:
				m.broadcast(e) // waiting logins see closed and leave
			}
		}
	}
	m.unlock()
	m.wg.Wait()

	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for e, gen := range stops {
		if e.stopGen == gen && e.stopErr != nil {
			errs = append(errs, fmt.Errorf("server %q: %w", e.id, e.stopErr))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("server manager: some servers did not stop: %w", errors.Join(errs...))
	}
	return nil
}
