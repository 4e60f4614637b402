package app

import (
	"errors"
	"sort"
	"strings"
	"sync"
)

// readiness is what GET /api/v1/ready reports: not ready while anything blocks it.
// The listener blocks it until the proxy accepts players with its configuration
// loaded, each discovery source until its first list arrived (a proxy that has not
// seen its servers yet would tell players none exist), and shutdown from the moment
// it starts, so an orchestrator stops sending players before the listener closes.
type readiness struct {
	mu     sync.Mutex
	blocks map[string]string // what -> why, shown to the prober
}

func newReadiness() *readiness {
	return &readiness{blocks: map[string]string{"listener": "starting: the proxy's listener is not accepting players yet"}}
}

// block makes the proxy not ready for why until unblock(what).
func (r *readiness) block(what, why string) {
	r.mu.Lock()
	r.blocks[what] = why
	r.mu.Unlock()
}

// unblock lifts what's block.
func (r *readiness) unblock(what string) {
	r.mu.Lock()
	delete(r.blocks, what)
	r.mu.Unlock()
}

// check is admin.ServerOptions.Ready.
func (r *readiness) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.blocks) == 0 {
		return nil
	}
	why := make([]string, 0, len(r.blocks))
	for _, w := range r.blocks {
		why = append(why, w)
	}
	sort.Strings(why)
	return errors.New(strings.Join(why, "; "))
}
