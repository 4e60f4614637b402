package balance

import "time"

// FreeSlots is how many more players the server's addresses said they have room
// for in their status answers of the last FullTTL, less the logins connected
// since; known is false when no serving address answered one that recently. A
// full server's queue lets that many players in at once.
func (p *Pool) FreeSlots(now time.Time) (free int, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.backends {
		if b.isDrain || b.health == StateUnhealthy || b.statusMax <= 0 || now.Sub(b.statusAt) >= p.opts.FullTTL {
			continue
		}
		known = true
		free += max(0, b.statusMax-b.statusOnline-b.joinedSince)
	}
	return free, known
}
