package accounts

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Guard limits what a guesser or a flood can do to accounts, across
// connections, addresses and (with a Redis Counter) the proxies of a fleet:
//
//   - Wrong passwords are counted per account (its case-folded name). Past
//     MaxFailures within Window the account cools down: until the window ends
//     an address that has not failed on it may try it once, so a guesser with
//     many addresses is slowed to one guess per address per window, and the
//     owner typing the right password from an address of his own still gets
//     in at his first try.
//   - On this proxy one password of an account is checked at a time, so
//     connections side by side guess no faster than one.
//   - Registrations are counted per address: past MaxRegistrations within
//     RegistrationWindow an address registers no more accounts.
type Guard struct {
	Counter            Counter
	MaxFailures        int
	Window             time.Duration
	MaxRegistrations   int // 0: no limit
	RegistrationWindow time.Duration

	locks keyedLock
}

// Counter counts events under a key within a window that starts with the
// first event. The fleet's is Redis, shared by every proxy.
type Counter interface {
	// Count is what was added under key in its current window, and how long
	// that window has left (0 when there is none).
	Count(ctx context.Context, key string) (n int, left time.Duration, err error)
	// Add adds one under key, starting a window of length window when there is
	// none, and returns the count with it and the window's time left.
	Add(ctx context.Context, key string, window time.Duration) (n int, left time.Duration, err error)
}

// CoolingDown is the answer of a check the account's cool-down stops: the
// address tried the account in this window already. Left is how long until
// the window ends.
type CoolingDown struct{ Left time.Duration }

func (c *CoolingDown) Error() string {
	return "too many wrong passwords for this account: this address may try again in " + c.Left.Round(time.Second).String()
}

// ErrTooManyRegistrations: the address registered as many accounts as it may
// within the window.
var ErrTooManyRegistrations = errors.New("too many accounts registered from this address")

// check begins a password check of name from ip: it waits for the account's
// other check on this proxy to end, and refuses while the account cools down
// and this address tried it in the window already. done records the check's
// outcome (failed: a wrong password) and lets the next check of the account
// run.
func (g *Guard) check(ctx context.Context, name, ip string) (done func(failed bool), err error) {
	if g == nil {
		return func(bool) {}, nil
	}
	key := Key(name)
	unlock, err := g.locks.lock(ctx, key)
	if err != nil {
		return nil, err
	}
	failures, left, err := g.Counter.Count(ctx, "fail:"+key)
	if err != nil {
		unlock()
		return nil, err
	}
	try := "try:" + key + ":" + ip
	if failures >= g.MaxFailures {
		// Cooling down: an address that failed, or had its one try, in this
		// window waits for its end.
		n, _, err := g.Counter.Count(ctx, try)
		if err == nil && n == 0 {
			_, _, err = g.Counter.Add(ctx, try, left)
		}
		if err != nil {
			unlock()
			return nil, err
		}
		if n > 0 {
			unlock()
			return nil, &CoolingDown{Left: left}
		}
	}
	return func(failed bool) {
		if failed {
			// Recorded even when the caller's context ends: a guess costs.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
			_, _, _ = g.Counter.Add(ctx, "fail:"+key, g.Window)
			_, _, _ = g.Counter.Add(ctx, try, g.Window)
			cancel()
		}
		unlock()
	}, nil
}

// register counts a registration from ip; ErrTooManyRegistrations past the
// address's allowance.
func (g *Guard) register(ctx context.Context, ip string) error {
	if g == nil || g.MaxRegistrations <= 0 {
		return nil
	}
	n, _, err := g.Counter.Add(ctx, "reg:"+ip, g.RegistrationWindow)
	if err != nil {
		return err
	}
	if n > g.MaxRegistrations {
		return ErrTooManyRegistrations
	}
	return nil
}

// keyedLock is a mutex per key, held while one check of an account runs.
type keyedLock struct {
	mu   sync.Mutex
	held map[string]*keyLock
}

type keyLock struct {
	ch      chan struct{} // holds one token while the key is free
	waiters int
}

// lock takes key's lock, waiting until it is free or ctx ends.
func (l *keyedLock) lock(ctx context.Context, key string) (unlock func(), err error) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*keyLock{}
	}
	k := l.held[key]
	if k == nil {
		k = &keyLock{ch: make(chan struct{}, 1)}
		k.ch <- struct{}{}
		l.held[key] = k
	}
	k.waiters++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		k.waiters--
		if k.waiters == 0 {
			delete(l.held, key)
		}
		l.mu.Unlock()
	}
	select {
	case <-k.ch:
		return func() {
			k.ch <- struct{}{}
			release()
		}, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// MemoryCounter is the Counter of a proxy on its own.
type MemoryCounter struct {
	Now func() time.Time // nil: time.Now
	// Max bounds the keys kept; past it the expired ones go, and a new key is
	// refused (the check it guards fails closed) until some expire.
	Max int

	mu   sync.Mutex
	keys map[string]*window
}

type window struct {
	n   int
	end time.Time
}

// ErrCounterFull: the memory counter holds Max keys that have not expired.
var ErrCounterFull = errors.New("accounts: too many attempts are being tracked; try again later")

func (m *MemoryCounter) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *MemoryCounter) Count(_ context.Context, key string) (int, time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	w := m.keys[key]
	if w == nil || !now.Before(w.end) {
		return 0, 0, nil
	}
	return w.n, w.end.Sub(now), nil
}

func (m *MemoryCounter) Add(_ context.Context, key string, d time.Duration) (int, time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.keys == nil {
		m.keys = map[string]*window{}
	}
	w := m.keys[key]
	if w == nil || !now.Before(w.end) {
		if w == nil && m.Max > 0 && len(m.keys) >= m.Max {
			for k, x := range m.keys {
				if !now.Before(x.end) {
					delete(m.keys, k)
				}
			}
			if len(m.keys) >= m.Max {
				return 0, 0, ErrCounterFull
			}
		}
		w = &window{end: now.Add(d)}
		m.keys[key] = w
	}
	w.n++
	return w.n, w.end.Sub(now), nil
}
