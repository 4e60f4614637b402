package app

import (
	"fmt"
	"os"
	"sync"

	"github.com/infrarust-go/infrarust/internal/passes"
)

// Bot verification's passes (docs/offline-networks.md): opened by the proxy
// the first time a configuration has a server with "verify"; the fleet's Redis
// with [fleet] (every proxy knows every pass), <data_dir>/verify.db otherwise
// (passes outlive a restart).
type passStore struct {
	mu    sync.Mutex
	store passes.Store
}

func (a *App) openPasses() (passes.Store, error) {
	a.passes.mu.Lock()
	defer a.passes.mu.Unlock()
	if a.passes.store != nil {
		return a.passes.store, nil
	}
	if a.fleet != nil {
		a.passes.store = a.fleet.PassStore()
		a.log.Info("bot verification: passes are in the fleet's Redis")
		return a.passes.store, nil
	}
	if err := os.MkdirAll(a.cfg.Web.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data_dir %s: %w", a.cfg.Web.DataDir, err)
	}
	s, err := passes.OpenBolt(a.cfg.Web.DataDir)
	if err != nil {
		return nil, err
	}
	a.passes.store = s
	return s, nil
}
