package app

import (
	"context"
	"io"
	"sync"
	"time"
)

// The stores serve opens on first need (the auth limbo's accounts, bot
// verification's passes): the local ones (bbolt in the data dir) drop what
// ended every hour (Redis expires its own), and each is closed at the end.

// sweeper is a local store that drops what ended before now.
type sweeper interface {
	Sweep(now time.Time) (removed int, err error)
}

// sweepLocalStores sweeps the local stores every hour until ctx ends.
func (a *App) sweepLocalStores(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a.sweep("auth limbo: ended sessions", &a.acct.mu, func() any { return a.acct.store })
		a.sweep("bot verification: ended passes", &a.passes.mu, func() any { return a.passes.store })
	}
}

func (a *App) sweep(what string, mu *sync.Mutex, store func() any) {
	mu.Lock()
	s, _ := store().(sweeper)
	mu.Unlock()
	if s == nil {
		return
	}
	if n, err := s.Sweep(time.Now()); err != nil {
		a.log.Warn(what+": sweeping", "err", err)
	} else if n > 0 {
		a.log.Debug(what+": swept", "removed", n)
	}
}

// closeLocalStores closes the stores at the end of shutdown.
func (a *App) closeLocalStores() {
	a.closeStore("auth limbo: closing the accounts", &a.acct.mu, func() io.Closer { return a.acct.store })
	a.closeStore("bot verification: closing the passes", &a.passes.mu, func() io.Closer { return a.passes.store })
}

func (a *App) closeStore(what string, mu *sync.Mutex, store func() io.Closer) {
	mu.Lock()
	defer mu.Unlock()
	if s := store(); s != nil {
		if err := s.Close(); err != nil {
			a.log.Warn(what, "err", err)
		}
	}
}
