package balance

import "time"

const (
	stageNone uint8 = iota
	stageInflight
	stageActive
	stageDone
)

// Lease is one login's claim on an address: it counts toward the address's load from Acquire until
// Failed, Skipped or Release, so a burst of simultaneous logins spreads out. Its fields are guarded
// by the pool's mutex; one lease belongs to one login and is not reused concurrently.
type Lease struct {
	pool     *Pool
	b        *backend
	addr     string
	stage    uint8
	recovery bool
}

// Acquire picks the best address for a new login that is not in tried (addresses already attempted
// for this login), takes a lease on it and advances rotation state. ok is false when nothing is left.
func (p *Pool) Acquire(now time.Time, tried []string) (l *Lease, ok bool) {
	l = new(Lease)
	if !p.AcquireInto(l, now, tried) {
		return nil, false
	}
	return l, true
}

// AcquireInto is Acquire into a caller-owned Lease (for example a field of the connection state), so
// the login path allocates nothing. A lease still held in l is released first.
func (p *Pool) AcquireInto(l *Lease, now time.Time, tried []string) bool {
	if l.pool != nil {
		l.Release(now)
	}
	p.mu.Lock()
	b, recovery := p.pick(now, tried)
	if b == nil {
		*l = Lease{}
		p.mu.Unlock()
		return false
	}
	b.inflight++
	*l = Lease{pool: p, b: b, addr: b.addr, stage: stageInflight, recovery: recovery}
	if recovery {
		from := b.health
		b.health, b.probeSince, b.probeOwner = StateProbing, now, l
		p.event(b, from, StateProbing, "recovery attempt", now)
	}
	p.unlock()
	return true
}

// Address is the "host:port" to dial.
func (l *Lease) Address() string { return l.addr }

// Recovery reports that this login carries the address's single recovery attempt, worth a log line.
func (l *Lease) Recovery() bool { return l.recovery }

// Connected records a successful dial: it proves the address healthy (an unknown one is confirmed, an
// ejected or probing one recovers into slow start), feeds the connect-time EWMA, and turns the lease
// into an active session.
func (l *Lease) Connected(now time.Time, connectTime time.Duration) {
	p := l.pool
	if p == nil {
		return
	}
	p.mu.Lock()
	if l.stage != stageInflight {
		p.mu.Unlock()
		return
	}
	b := l.b
	b.inflight--
	b.active++
	l.stage = stageActive
	if !b.removed {
		p.observeConnect(b, connectTime)
		b.joinedSince++
		p.proven(b, now, "connect ok")
	}
	p.unlock()
}

// Failed records a failed dial toward ejection (or fails the recovery attempt it carried) and ends the lease.
func (l *Lease) Failed(now time.Time, reason string) {
	l.end(now, true, reason)
}

// Unresponsive records that the address accepted the connection but gave no
// Minecraft answer within the connect budget (a frozen server), and ends the
// lease: the address is ejected at once and must answer a status ping before it
// is readmitted.
func (l *Lease) Unresponsive(now time.Time, reason string) {
	l.endWith(func(p *Pool, b *backend, owner bool) { p.unresponsive(b, now, reason, owner) })
}

// Skipped ends the lease without any health effect, for a backend that answered but refused the
// login for a reason of its own (for example "server is full").
func (l *Lease) Skipped(now time.Time) {
	l.end(now, false, "")
}

// Release ends the session; it is idempotent and safe after Failed or Skipped.
func (l *Lease) Release(now time.Time) {
	l.end(now, false, "")
}

func (l *Lease) end(now time.Time, failed bool, reason string) {
	l.endWith(func(p *Pool, b *backend, owner bool) {
		switch {
		case failed:
			p.failure(b, now, reason, owner)
		case owner:
			p.abandonRecovery(b, now)
		}
	})
}

// endWith ends the lease once and, for an address still configured, lets effect
// record what the lease's end means for its health (owner: the lease carried the
// address's recovery attempt).
func (l *Lease) endWith(effect func(p *Pool, b *backend, owner bool)) {
	p := l.pool
	if p == nil {
		return
	}
	p.mu.Lock()
	b := l.b
	switch l.stage {
	case stageInflight:
		b.inflight--
	case stageActive:
		b.active--
	default:
		p.mu.Unlock()
		return
	}
	l.stage = stageDone
	if !b.removed {
		effect(p, b, b.health == StateProbing && b.probeOwner == l)
	}
	p.unlock()
}
