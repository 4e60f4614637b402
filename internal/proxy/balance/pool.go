package balance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Pool balances the logins of one server across its addresses; every method is safe for concurrent use.
type Pool struct {
	mu       sync.Mutex
	opts     Options
	backends []*backend          // config order
	byAddr   map[string]*backend // same backends, by address
	drained  int                 // how many backends are drained
	pending  []Change            // events not yet delivered
	emitMu   sync.Mutex          // serialises OnChange delivery so events arrive in order
	codes    []uint8             // scratch for Acquire, indexed like backends
	weights  []float64           // scratch for Acquire, indexed like backends
}

// backend is the state of one address; every field is guarded by Pool.mu.
type backend struct {
	addr     string
	weight   int
	priority int
	index    int
	removed  bool // dropped by Update; outstanding leases still release into it harmlessly

	health   State // unknown, healthy, probing or unhealthy
	isDrain  bool
	active   int
	inflight int

	failures     []time.Time // failure times inside the window, oldest first
	probeFails   int         // failed probes in a row while serving; any success clears it
	lastFailure  time.Time
	ejections    int // consecutive ejections; decays while healthy (see effEjections)
	nextProbe    time.Time
	healthySince time.Time
	rampStart    time.Time // zero: not in slow start
	probeSince   time.Time // when the in-flight recovery attempt was handed out
	probeOwner   *Lease    // the player holding the recovery attempt; nil when the prober holds it
	lastProbe    time.Time // last healthy-address probe handed out
	probeLatency time.Duration
	// needsProof: the address failed at the Minecraft level (accepted TCP, never
	// answered a login), so only a Minecraft exchange, not a TCP connect, may
	// readmit it.
	needsProof bool

	ewma     time.Duration
	measured bool
	degraded bool
	cw       float64 // smooth weighted round-robin current weight

	statusOnline, statusMax int
	statusAt                time.Time
	joinedSince             int // logins connected since the last ReportStatus
}

// NewPool builds the pool of one server; every address starts unknown at full weight.
func NewPool(opts Options, addrs []Address, now time.Time) *Pool {
	p := &Pool{}
	p.Update(opts, addrs, now)
	return p
}

// Update applies a hot reload: addresses that stay keep their health, counts, drain and latency;
// removed ones are dropped; new ones start unknown at full weight (a config edit is not a recovery,
// and nothing has checked the new address yet).
func (p *Pool) Update(opts Options, addrs []Address, now time.Time) {
	opts = opts.normalized()
	p.mu.Lock()
	strategyChanged := p.opts.Strategy != opts.Strategy
	p.opts = opts
	old := p.byAddr
	list := make([]*backend, 0, len(addrs))
	byAddr := make(map[string]*backend, len(addrs))
	for _, a := range addrs {
		if _, dup := byAddr[a.Address]; dup {
			continue
		}
		w := max(a.Weight, 1)
		b := old[a.Address]
		if b == nil {
			b = &backend{
				addr:     a.Address,
				health:   StateUnknown,
				failures: make([]time.Time, 0, opts.FailThreshold),
			}
		} else {
			delete(old, a.Address)
		}
		if strategyChanged {
			b.cw = 0
		}
		b.weight, b.priority, b.index = w, a.Priority, len(list)
		list = append(list, b)
		byAddr[a.Address] = b
	}
	for _, b := range old {
		b.removed = true
		b.probeOwner = nil
	}
	p.backends, p.byAddr = list, byAddr
	p.drained = 0
	for _, b := range list {
		if b.isDrain {
			p.drained++
		}
	}
	p.codes = make([]uint8, len(list))
	p.weights = make([]float64, len(list))
	p.unlock()
}

// Strategy reports the active strategy so the admin API can show it next to the backends.
func (p *Pool) Strategy() Strategy {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.opts.Strategy
}

// ReportStatus records a backend's player count from a status ping so logins avoid a full address
// while another one has room; the verdict expires after Options.FullTTL. The answer also proves an
// unknown address works (it does not readmit an ejected one: that takes its recovery attempt).
func (p *Pool) ReportStatus(addr string, online, maxPlayers int, now time.Time) {
	p.mu.Lock()
	if b := p.byAddr[addr]; b != nil {
		b.statusOnline, b.statusMax, b.statusAt, b.joinedSince = online, maxPlayers, now, 0
		if b.health == StateUnknown {
			p.confirm(b, now, "status answered")
		}
	}
	p.unlock()
}

// MarkWarming restarts slow start for an address the server manager just woke, and trusts it again:
// failures recorded while it slept say nothing about the freshly started process.
func (p *Pool) MarkWarming(addr string, now time.Time) error {
	p.mu.Lock()
	b := p.byAddr[addr]
	if b == nil {
		p.mu.Unlock()
		return fmt.Errorf("mark warming %q: %w", addr, ErrUnknownAddress)
	}
	b.ejections = 0
	p.recover(b, now, "server woken")
	p.unlock()
	return nil
}

// SetDrain turns the operator drain of an address on or off; it never touches the health record.
func (p *Pool) SetDrain(addr string, drained bool, now time.Time) error {
	p.mu.Lock()
	b := p.byAddr[addr]
	if b == nil {
		p.mu.Unlock()
		return fmt.Errorf("drain %q: %w", addr, ErrUnknownAddress)
	}
	if b.isDrain != drained {
		b.isDrain = drained
		if drained {
			p.drained++
			p.event(b, b.health, StateDraining, "operator drain", now)
		} else {
			p.drained--
			p.event(b, StateDraining, b.health, "operator enable", now)
		}
	}
	p.unlock()
	return nil
}

// Reset is the operator's way to end a backoff early after fixing a backend: it clears failures,
// the ejection count and the backoff (an ejected address becomes due for its recovery attempt now).
// It does not lift a drain, and it does not change the state: what was observed stays true until
// the next check (an ejected address's recovery attempt is that check, and it is due at once), so
// a reset address never goes back to unknown.
func (p *Pool) Reset(addr string, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.byAddr[addr]
	if b == nil {
		return fmt.Errorf("reset %q: %w", addr, ErrUnknownAddress)
	}
	b.failures = b.failures[:0]
	b.probeFails = 0
	b.ejections = 0
	if b.health == StateUnhealthy {
		b.nextProbe = now
	}
	return nil
}

// --- health bookkeeping (callers hold p.mu) ---

// proven records a successful dial, probe or login: an unknown address is confirmed, an ejected
// or probing one recovers into slow start, and a run of failed probes ends.
func (p *Pool) proven(b *backend, now time.Time, reason string) {
	b.probeFails = 0
	switch b.health {
	case StateHealthy:
	case StateUnknown:
		p.confirm(b, now, reason)
	default:
		p.recover(b, now, reason)
	}
}

// confirm makes an unknown address healthy at the first proof that it works. There is no slow
// start: it already took its full share while unknown, so the ramp would only take load away.
func (p *Pool) confirm(b *backend, now time.Time, reason string) {
	b.health = StateHealthy
	b.healthySince = now
	p.event(b, StateUnknown, StateHealthy, reason, now)
}

// recover makes b healthy and starts its slow start.
func (p *Pool) recover(b *backend, now time.Time, reason string) {
	from := b.health
	b.health = StateHealthy
	b.healthySince = now
	b.rampStart = now
	b.failures = b.failures[:0]
	b.probeFails = 0
	b.nextProbe = time.Time{}
	b.probeOwner = nil
	b.probeSince = time.Time{}
	b.needsProof = false
	p.event(b, from, StateHealthy, reason, now)
}

// failure records one failed connection (player dial or probe). recoveryAttempt says the failure is
// the result of the address's recovery attempt.
func (p *Pool) failure(b *backend, now time.Time, reason string, recoveryAttempt bool) {
	b.lastFailure = now
	switch b.health {
	case StateHealthy, StateUnknown:
		keep := b.failures[:0]
		for _, t := range b.failures {
			if now.Sub(t) < p.opts.FailWindow {
				keep = append(keep, t)
			}
		}
		b.failures = append(keep, now)
		if len(b.failures) >= p.opts.FailThreshold {
			why := fmt.Sprintf("%d failures in %s", len(b.failures), p.opts.FailWindow)
			if reason != "" {
				why += ": " + reason
			}
			p.eject(b, now, p.effEjections(b, now)+1, why)
		}
	case StateProbing:
		if recoveryAttempt {
			why := "recovery attempt failed"
			if reason != "" {
				why += ": " + reason
			}
			p.eject(b, now, b.ejections+1, why)
		}
	}
}

// unresponsive records a Minecraft-level failure: the address took the
// connection and never answered. It is conclusive where a refused dial may be a
// blip, so a healthy address is ejected at once instead of after FailThreshold
// failures (logins keep arriving meanwhile, each waiting connect_timeout), and it
// must prove itself with a Minecraft exchange before it is readmitted.
func (p *Pool) unresponsive(b *backend, now time.Time, reason string, recoveryAttempt bool) {
	b.lastFailure = now
	b.needsProof = true
	switch b.health {
	case StateHealthy, StateUnknown:
		p.eject(b, now, p.effEjections(b, now)+1, "no Minecraft answer: "+reason)
	case StateProbing:
		if recoveryAttempt {
			p.eject(b, now, b.ejections+1, "recovery attempt failed: "+reason)
		}
	}
}

// NeedsProtocolProof reports that addr may only be readmitted by a Minecraft
// exchange (a status ping), whatever the configured probe kind.
func (p *Pool) NeedsProtocolProof(addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.byAddr[addr]
	return b != nil && b.needsProof
}

// eject moves b to unhealthy with the backoff of its ejectionsth consecutive ejection.
func (p *Pool) eject(b *backend, now time.Time, ejections int, reason string) {
	from := b.health
	b.health = StateUnhealthy
	b.ejections = ejections
	b.nextProbe = now.Add(p.backoff(ejections))
	b.failures = b.failures[:0]
	b.probeFails = 0
	b.rampStart = time.Time{}
	b.probeOwner = nil
	b.probeSince = time.Time{}
	p.event(b, from, StateUnhealthy, reason, now)
}

// abandonRecovery returns an unfinished recovery attempt (its lease ended without a dial result) so
// the next login or probe can make it.
func (p *Pool) abandonRecovery(b *backend, now time.Time) {
	b.health = StateUnhealthy
	b.probeOwner = nil
	b.probeSince = time.Time{}
	p.event(b, StateProbing, StateUnhealthy, "recovery attempt abandoned", now)
}

// backoff is BackoffBase × 2^(n−1), capped at BackoffMax.
func (p *Pool) backoff(n int) time.Duration {
	d := p.opts.BackoffBase
	for i := 1; i < n && d < p.opts.BackoffMax; i++ {
		d *= 2
	}
	return min(d, p.opts.BackoffMax)
}

// effEjections is the consecutive-ejection count after forgiveness: one ejection is forgiven per
// BackoffMax of continuous health, so an address that has been fine for a while starts again at 30s.
func (p *Pool) effEjections(b *backend, now time.Time) int {
	n := b.ejections
	if n > 0 && b.health == StateHealthy {
		n -= int(min(now.Sub(b.healthySince)/p.opts.BackoffMax, time.Duration(n)))
	}
	return n
}

// observeConnect feeds a connect time into the EWMA and the degraded hysteresis.
func (p *Pool) observeConnect(b *backend, d time.Duration) {
	if d < 0 {
		d = 0
	}
	if !b.measured {
		b.ewma, b.measured = d, true
	} else {
		b.ewma = time.Duration(EWMAAlpha*float64(d) + (1-EWMAAlpha)*float64(b.ewma))
	}
	if dl := p.opts.DegradedLatency; dl > 0 {
		switch {
		case !b.degraded && b.ewma > dl:
			b.degraded = true
		case b.degraded && float64(b.ewma) < DegradedRecoverRatio*float64(dl):
			b.degraded = false
		}
	} else {
		b.degraded = false
	}
}

// effWeight is the weight strategies use: nominal weight × slow-start ramp × latency degradation.
func (p *Pool) effWeight(b *backend, now time.Time) float64 {
	w := float64(b.weight)
	if p.opts.Strategy == FirstAvailable {
		return w
	}
	if ss := p.opts.SlowStart; ss > 0 && !b.rampStart.IsZero() {
		if el := now.Sub(b.rampStart); el < ss {
			w *= slowStartFactor(el, ss, p.opts.SlowStartAggression)
		}
	}
	if b.degraded && p.opts.DegradedLatency > 0 {
		w *= max(0.1, 1-float64(b.ewma)/(2*float64(p.opts.DegradedLatency)))
	}
	return w
}

// slowStartFactor is clamp((elapsed/window)^(1/aggression), 0.01, 1).
func slowStartFactor(elapsed, window time.Duration, aggression float64) float64 {
	x := max(float64(elapsed)/float64(window), 0)
	if aggression != 1 {
		x = math.Pow(x, 1/aggression)
	}
	return min(max(x, 0.01), 1)
}

func (p *Pool) isFull(b *backend, now time.Time) bool {
	return b.statusMax > 0 && now.Sub(b.statusAt) < p.opts.FullTTL && b.statusOnline+b.joinedSince >= b.statusMax
}

// recoveryDue reports whether b may be handed out as a recovery attempt now.
func recoveryDue(b *backend, now time.Time) bool {
	switch b.health {
	case StateUnhealthy:
		return !now.Before(b.nextProbe)
	case StateProbing:
		return now.Sub(b.probeSince) >= RecoveryTimeout
	}
	return false
}

// --- events ---

func (p *Pool) event(b *backend, from, to State, reason string, now time.Time) {
	if from == to || p.opts.OnChange == nil || b.removed {
		return
	}
	p.pending = append(p.pending, Change{Address: b.addr, From: from, To: to, Reason: reason, At: now})
}

// unlock releases p.mu and then delivers pending events, so OnChange may call back into the pool.
func (p *Pool) unlock() {
	n := len(p.pending)
	p.mu.Unlock()
	if n > 0 {
		p.flush()
	}
}

// flush delivers pending events in order. Only one goroutine delivers at a time; a goroutine that
// finds delivery in progress leaves its events to the deliverer, which re-checks before leaving.
func (p *Pool) flush() {
	for p.emitMu.TryLock() {
		func() {
			defer p.emitMu.Unlock() // a panicking callback must not stop all later deliveries
			p.deliver()
		}()
		p.mu.Lock()
		n := len(p.pending)
		p.mu.Unlock()
		if n == 0 {
			return
		}
	}
}

func (p *Pool) deliver() {
	for {
		p.mu.Lock()
		evs, fn := p.pending, p.opts.OnChange
		p.pending = nil
		p.mu.Unlock()
		if len(evs) == 0 || fn == nil {
			return
		}
		for _, e := range evs {
			fn(e)
		}
	}
}

// defaultRand is the random source when Options.Rand is nil.
func defaultRand() float64 { return rand.Float64() }
