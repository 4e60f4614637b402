package app

import (
	"errors"
	"sync"
)

// readiness is what GET /api/v1/ready reports: not ready until the listener is up
// with the configuration loaded, ready while serving, not ready again from the
// moment shutdown starts, so an orchestrator stops sending players before the
// listener closes.
type readiness struct {
	mu     sync.Mutex
	reason string // "" means ready
}

func newReadiness() *readiness {
	return &readiness{reason: "starting: the proxy's listener is not accepting players yet"}
}

// set records the current state; reason "" means ready.
func (r *readiness) set(reason string) {
	r.mu.Lock()
	r.reason = reason
	r.mu.Unlock()
}

// check is admin.ServerOptions.Ready.
func (r *readiness) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reason == "" {
		return nil
	}
	return errors.New(r.reason)
}
