package events

import (
	"context"
	"slices"
	"sync"
)

// DefaultRecent is how many events Recent keeps.
const DefaultRecent = 100

// Recent keeps the last events of the bus for GET /api/v1/events/recent and
// the dashboard's first page: what happened lately, before its stream began.
// It is a subscriber like any other (run by its owner until ctx ends), of
// every announcement but stats.tick (a tick is no event) and the player
// events' decided copies (player.pre_login ...: building them on every login
// for a list nobody may read is a cost the logins would pay).
type Recent struct {
	mu   sync.Mutex
	ring []Event
	next int
	full bool
	sub  *Sub
}

// NewRecent subscribes to bus, keeping the last n events (DefaultRecent when < 1).
func NewRecent(bus *Bus, n int) *Recent {
	if n < 1 {
		n = DefaultRecent
	}
	var types []Type
	for _, t := range Subscribable() {
		if t != StatsTick && !slices.Contains(playerEvents, t) {
			types = append(types, t)
		}
	}
	return &Recent{ring: make([]Event, n), sub: bus.Subscribe(max(n, 256), types...)} // a burst is not lost
}

// Run keeps the events until ctx ends.
func (r *Recent) Run(ctx context.Context) {
	defer r.sub.Close()
	for {
		ev, err := r.sub.Next(ctx)
		if err != nil {
			return
		}
		if ev.Type == Lagged {
			continue
		}
		r.mu.Lock()
		r.ring[r.next] = ev
		if r.next++; r.next == len(r.ring) {
			r.next, r.full = 0, true
		}
		r.mu.Unlock()
	}
}

// List is the events kept, oldest first.
func (r *Recent) List() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	if r.full {
		out = append(out, r.ring[r.next:]...)
	}
	return append(out, r.ring[:r.next]...)
}
