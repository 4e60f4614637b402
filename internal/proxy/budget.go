package proxy

import (
	"sync"
	"time"
)

// bounceWindow is how long a fallback counts against a player's budget: a
// player who stays this long on a server starts a new incident.
const bounceWindow = 60 * time.Second

// mover is a player's moves: one at a time (the lock is held for a whole move,
// a fallback's chain included), and the fallback budget they spend.
type mover struct {
	mu sync.Mutex
	// bounces are the fallbacks of the last bounceWindow; tried the servers tried
	// since the incident began (each at most once). Both guarded by mu.
	bounces []time.Time
	tried   map[string]bool
}

// bounce spends one fallback at now. It reports false when the player already
// bounced max times within bounceWindow: the budget is spent and they are
// disconnected instead. Called with mu held.
func (m *mover) bounce(now time.Time, max int) bool {
	kept := m.bounces[:0]
	for _, t := range m.bounces {
		if now.Sub(t) < bounceWindow {
			kept = append(kept, t)
		}
	}
	m.bounces = kept
	if len(m.bounces) == 0 || m.tried == nil {
		m.tried = map[string]bool{} // a new incident: every server may be tried again
	}
	if max > 0 && len(m.bounces) >= max {
		return false
	}
	m.bounces = append(m.bounces, now)
	return true
}

// try claims server id for this incident; false when it was tried already.
// Called with mu held.
func (m *mover) try(id string) bool {
	if m.tried == nil {
		m.tried = map[string]bool{}
	}
	if m.tried[id] {
		return false
	}
	m.tried[id] = true
	return true
}
