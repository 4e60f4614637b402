package app

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/accounts"
)

// The auth limbo's account store: opened by the proxy the first time a
// configuration has a server with "auth"; the fleet's Redis with [fleet],
// <data_dir>/accounts.db otherwise.
type accountStore struct {
	mu    sync.Mutex
	store accounts.Store
}

func (a *App) openAccounts() (accounts.Store, error) {
	a.acct.mu.Lock()
	defer a.acct.mu.Unlock()
	if a.acct.store != nil {
		return a.acct.store, nil
	}
	if a.fleet != nil {
		store := a.fleet.AccountStore()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		n, err := store.SealExisting(ctx)
		cancel()
		switch {
		case err != nil:
			a.log.Warn("auth limbo: could not sign the accounts written before [fleet] had a secret; they are refused until a proxy starts with Redis reachable", "err", err)
		case n > 0:
			a.log.Warn("auth limbo: signed the accounts written before [fleet] had a secret; from now on an unsigned account in Redis is refused", "accounts", n)
		}
		a.acct.store = store
		a.log.Info("auth limbo: accounts are in the fleet's Redis")
		return a.acct.store, nil
	}
	if err := os.MkdirAll(a.cfg.Web.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data_dir %s: %w", a.cfg.Web.DataDir, err)
	}
	s, err := accounts.OpenBolt(a.cfg.Web.DataDir)
	if err != nil {
		return nil, err
	}
	a.acct.store = s
	a.log.Info("auth limbo: accounts opened", "file", a.cfg.Web.DataDir+string(os.PathSeparator)+accounts.FileName)
	return s, nil
}
