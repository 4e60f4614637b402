package balance

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Login candidate classes, computed per Acquire. Lower rank is preferred; inside the best rank the
// lowest priority group wins, and the strategy picks inside that group.
const (
	codeRecovery uint8 = iota // ejected, backoff elapsed, passive mode: gets the next login (rank 0)
	codeRoom                  // serving (healthy or unknown), not drained, not full (rank 0)
	codeFull                  // serving but reported full (rank 1)
	codeEjected               // ejected: last resort (rank 2)
	codeDrained               // drained: after ejected (rank 3)
	codeNone                  // tried, or its recovery attempt is in flight
	codeCand                  // marked as a candidate of the chosen group
)

func rank(c uint8) uint8 {
	if c == codeRecovery {
		return 0
	}
	return c - 1
}

func (p *Pool) loginCode(b *backend, now time.Time, ignoreDrain bool) uint8 {
	due := recoveryDue(b, now)
	if b.health == StateProbing && !due {
		return codeNone // exactly one recovery attempt: nobody else gets it until the result
	}
	if b.isDrain && !ignoreDrain {
		return codeDrained
	}
	if b.health.Serving() {
		if p.isFull(b, now) {
			return codeFull
		}
		return codeRoom
	}
	if due && !p.opts.ActiveProbing {
		return codeRecovery
	}
	return codeEjected
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// pick chooses the backend for a new login; recovery reports that the pick is the address's
// recovery attempt. Callers hold p.mu.
func (p *Pool) pick(now time.Time, tried []string) (b *backend, recovery bool) {
	ignoreDrain := p.drained == len(p.backends)
	var bestRank uint8
	bestPrio, found := 0, false
	for i, b := range p.backends {
		c := codeNone
		if !contains(tried, b.addr) {
			c = p.loginCode(b, now, ignoreDrain)
		}
		p.codes[i] = c
		if c == codeNone {
			continue
		}
		if r := rank(c); !found || r < bestRank || (r == bestRank && b.priority < bestPrio) {
			bestRank, bestPrio, found = r, b.priority, true
		}
	}
	if !found {
		return nil, false
	}
	if bestRank == 0 {
		for i, b := range p.backends {
			if p.codes[i] == codeRecovery && b.priority == bestPrio {
				return b, true
			}
		}
	}
	first := -1
	for i, b := range p.backends {
		if c := p.codes[i]; c != codeNone && rank(c) == bestRank && b.priority == bestPrio {
			p.codes[i] = codeCand
			p.weights[i] = p.effWeight(b, now)
			if first < 0 {
				first = i
			}
		} else {
			p.codes[i] = codeNone
		}
	}
	switch p.opts.Strategy {
	case RoundRobin:
		return p.swrr(), false
	case LeastConn:
		return p.leastConn(), false
	case Latency:
		return p.lowestLatency(), false
	case Random:
		return p.random(first), false
	default:
		return p.backends[first], false
	}
}

// swrr is nginx's smooth weighted round-robin over the marked candidates:
// cw += w_eff for each; the highest cw wins (first in config order on ties); the winner's cw -= total.
func (p *Pool) swrr() *backend {
	var best *backend
	total := 0.0
	for i, b := range p.backends {
		if p.codes[i] != codeCand {
			continue
		}
		w := p.weights[i]
		b.cw += w
		total += w
		if best == nil || b.cw > best.cw {
			best = b
		}
	}
	best.cw -= total
	return best
}

// leastConn keeps the candidates with the lowest (active+inflight+1)/w_eff and breaks ties with swrr.
func (p *Pool) leastConn() *backend {
	var bestN, bestW float64
	found := false
	for i, b := range p.backends {
		if p.codes[i] != codeCand {
			continue
		}
		n, w := float64(b.active+b.inflight+1), p.weights[i]
		if !found || n*bestW < bestN*w { // n/w < bestN/bestW without dividing
			bestN, bestW, found = n, w, true
		}
	}
	for i, b := range p.backends {
		if p.codes[i] == codeCand && !approxEqual(float64(b.active+b.inflight+1)*bestW, bestN*p.weights[i]) {
			p.codes[i] = codeNone
		}
	}
	return p.swrr()
}

func approxEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b))
}

// lowestLatency keeps the candidates whose connect EWMA is within LatencyTie of the best
// (unmeasured addresses count as 0 so they get measured) and breaks ties with swrr.
func (p *Pool) lowestLatency() *backend {
	best := time.Duration(math.MaxInt64)
	for i, b := range p.backends {
		if p.codes[i] == codeCand {
			best = min(best, b.latencyKey())
		}
	}
	for i, b := range p.backends {
		if p.codes[i] == codeCand && b.latencyKey() > best+LatencyTie {
			p.codes[i] = codeNone
		}
	}
	return p.swrr()
}

func (b *backend) latencyKey() time.Duration {
	if !b.measured {
		return 0
	}
	return b.ewma
}

// random picks a candidate with probability proportional to its effective weight.
func (p *Pool) random(first int) *backend {
	total := 0.0
	for i := range p.backends {
		if p.codes[i] == codeCand {
			total += p.weights[i]
		}
	}
	rnd := p.opts.Rand
	if rnd == nil {
		rnd = defaultRand
	}
	r := rnd() * total
	last := p.backends[first]
	for i, b := range p.backends {
		if p.codes[i] != codeCand {
			continue
		}
		if r -= p.weights[i]; r < 0 {
			return b
		}
		last = b
	}
	return last
}

// StatusOrder gives the order in which status and legacy pings should try addresses. It advances no
// rotation and takes no lease, so pings never steal a login's turn or a recovery attempt. Order:
// serving (healthy or unknown) with room, serving but full, ejected and due for recovery, drained, then ejected not yet
// due or with a recovery attempt in flight; priority groups and the strategy order each class.
func (p *Pool) StatusOrder(now time.Time) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	type entry struct {
		b     *backend
		class int
		key   float64
	}
	ignoreDrain := p.drained == len(p.backends)
	rnd := p.opts.Rand
	if rnd == nil {
		rnd = defaultRand
	}
	es := make([]entry, len(p.backends))
	for i, b := range p.backends {
		e := entry{b: b}
		drained := b.isDrain && !ignoreDrain
		switch {
		case b.health.Serving() && !drained && !p.isFull(b, now):
			e.class = 0
		case b.health.Serving() && !drained:
			e.class = 1
		case b.health == StateUnhealthy && !drained && !now.Before(b.nextProbe):
			e.class = 2
		case b.health.Serving():
			e.class = 3
		default:
			e.class = 4
		}
		w := p.effWeight(b, now)
		switch p.opts.Strategy {
		case RoundRobin:
			e.key = -(b.cw + w) // the next smooth WRR pick has the highest cw + w
		case LeastConn:
			e.key = float64(b.active+b.inflight+1) / w
		case Latency:
			e.key = float64(b.latencyKey())
		case Random:
			e.key = -math.Log(rnd()) / w // weighted shuffle (Efraimidis–Spirakis)
		}
		es[i] = e
	}
	slices.SortStableFunc(es, func(x, y entry) int {
		return cmp.Or(cmp.Compare(x.class, y.class), cmp.Compare(x.b.priority, y.b.priority), cmp.Compare(x.key, y.key))
	})
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.b.addr
	}
	return out
}

// DueForProbe is DueForProbeLimit without a limit.
func (p *Pool) DueForProbe(now time.Time, probeHealthy bool, healthyInterval time.Duration) []string {
	return p.DueForProbeLimit(now, probeHealthy, healthyInterval, 0)
}

// DueForProbeLimit hands the prober what to probe now: ejected addresses whose backoff elapsed (they
// move to "probing" and their recovery attempt is reserved for the prober); then, when
// probeHealthy, unknown addresses and then healthy ones not probed for healthyInterval (unknown
// first: a probe is how an address nobody has used becomes known). At most limit addresses are
// returned (limit <= 0: all), so the prober never reserves an attempt it has no probe slot for.
func (p *Pool) DueForProbeLimit(now time.Time, probeHealthy bool, healthyInterval time.Duration, limit int) []string {
	p.mu.Lock()
	var out []string
	full := func() bool { return limit > 0 && len(out) >= limit }
	for _, b := range p.backends {
		if full() {
			break
		}
		if b.health != StateHealthy && recoveryDue(b, now) {
			from := b.health
			b.health, b.probeSince, b.probeOwner = StateProbing, now, nil
			p.event(b, from, StateProbing, "recovery probe", now)
			out = append(out, b.addr)
		}
	}
	for _, want := range []State{StateUnknown, StateHealthy} {
		if !probeHealthy {
			break
		}
		for _, b := range p.backends {
			if full() {
				break
			}
			if b.health == want && (b.lastProbe.IsZero() || now.Sub(b.lastProbe) >= healthyInterval) {
				b.lastProbe = now
				out = append(out, b.addr)
			}
		}
	}
	p.unlock()
	return out
}

// ProbeResult feeds an active probe back: success confirms an unknown address and recovers an
// ejected or probing one into slow start; failure of a recovery probe re-ejects with a longer
// backoff; failure on a healthy or unknown address counts like a failed dial, and FailThreshold
// failed probes in a row eject it however far apart they are (probes come every interval, so they
// would rarely fall inside FailWindow and a dead address nobody dials would never be ejected).
// Results for addresses no longer configured are ignored.
func (p *Pool) ProbeResult(addr string, ok bool, latency time.Duration, now time.Time) {
	p.mu.Lock()
	if b := p.byAddr[addr]; b != nil {
		if ok {
			b.probeLatency = latency
			p.proven(b, now, "probe ok")
		} else {
			serving := b.health.Serving()
			p.failure(b, now, "probe failed", b.health == StateProbing && b.probeOwner == nil)
			if serving && b.health.Serving() {
				b.probeFails++
				if b.probeFails >= p.opts.FailThreshold {
					p.eject(b, now, p.effEjections(b, now)+1, fmt.Sprintf("%d probes failed in a row", b.probeFails))
				}
			}
		}
	}
	p.unlock()
}

// BackendStatus is one address as the admin API, the dashboard and metrics show it.
type BackendStatus struct {
	Address         string        // configured "host:port"
	Weight          int           // configured weight
	EffectiveWeight float64       // weight after slow start and latency degradation
	Priority        int           // failover group, lower first
	State           State         // draining when drained, else Health
	Drained         bool          // operator drain is on
	Health          State         // unknown, healthy, probing or unhealthy
	Active          int           // sessions attached to the address
	Inflight        int           // logins still negotiating
	Ejections       int           // consecutive ejections driving the backoff (after forgiveness)
	HealthySince    time.Time     // zero unless healthy
	LastFailure     time.Time     // zero if it never failed
	ConnectEWMA     time.Duration // zero until measured
	Full            bool          // last status ping said full; logins prefer others
	NextProbe       time.Time     // when an ejected address is due for recovery; zero otherwise
	Degraded        bool          // the connect EWMA is over DegradedLatency and the weight is lowered
	ProbeLatency    time.Duration // latency of the last successful active probe
}

// Snapshot reports every address in config order.
func (p *Pool) Snapshot(now time.Time) []BackendStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]BackendStatus, len(p.backends))
	for i, b := range p.backends {
		s := BackendStatus{
			Address:         b.addr,
			Weight:          b.weight,
			EffectiveWeight: p.effWeight(b, now),
			Priority:        b.priority,
			State:           b.health,
			Drained:         b.isDrain,
			Health:          b.health,
			Active:          b.active,
			Inflight:        b.inflight,
			Ejections:       p.effEjections(b, now),
			LastFailure:     b.lastFailure,
			ConnectEWMA:     b.ewma,
			Full:            p.isFull(b, now),
			Degraded:        b.degraded,
			ProbeLatency:    b.probeLatency,
		}
		if b.isDrain {
			s.State = StateDraining
		}
		if b.health == StateHealthy {
			s.HealthySince = b.healthySince
		}
		if b.health == StateUnhealthy {
			s.NextProbe = b.nextProbe
		}
		out[i] = s
	}
	return out
}
