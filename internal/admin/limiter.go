package admin

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The admin API limits each client IP with two token buckets from
// golang.org/x/time/rate, so an operator who holds the key is never treated like
// someone guessing it:
//
//   - failed authentication attempts: a strict, fixed budget. Once an IP has spent
//     it, its requests with a wrong or missing key are answered 429 until the bucket
//     refills; a request with the right key is never refused for them (an operator
//     behind the guesser's NAT keeps working; keys are 16+ characters, out of a
//     guesser's reach at any rate);
//   - authenticated requests: [web] requests_per_minute, with a full minute of
//     burst; 0 turns this bucket off.
//
// GET /api/v1/health spends neither: an uptime checker must not eat the quota of
// the operator on the same host, and answering it costs less than a 429 would.
const (
	// FailedAuthPerMinute is how many wrong or missing keys one IP may present per
	// minute (with that many at once); a person mistyping a key stays well under it.
	FailedAuthPerMinute = 10
	// maxTrackedClients bounds the limiter's memory under a spray from many addresses.
	maxTrackedClients = 10000
)

// clientLimits holds both buckets of every client IP seen recently.
type clientLimits struct {
	mu        sync.Mutex
	reqLimit  rate.Limit // authenticated requests per second; 0 means off
	reqBurst  int
	failLimit rate.Limit
	failBurst int
	clients   map[string]*clientBuckets
	max       int
}

// clientBuckets is one IP's pair of buckets; requests is nil while the IP has
// made no authenticated request (or the limit is off), so a flood of unknown IPs
// costs one bucket each.
type clientBuckets struct {
	requests *rate.Limiter
	failures *rate.Limiter
}

// newClientLimits builds the limiter; perMinute is [web] requests_per_minute
// (0 = authenticated requests are not limited).
func newClientLimits(perMinute int) *clientLimits {
	l := &clientLimits{
		failLimit: rate.Limit(float64(FailedAuthPerMinute) / 60),
		failBurst: FailedAuthPerMinute,
		clients:   make(map[string]*clientBuckets),
		max:       maxTrackedClients,
	}
	if perMinute > 0 {
		l.reqLimit, l.reqBurst = rate.Limit(float64(perMinute)/60), perMinute
	}
	return l
}

// lockedOut reports whether ip has spent its failed-attempt budget and, if so, how
// long until it may present a key again. It spends nothing.
func (l *clientLimits) lockedOut(ip string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.clients[ip]
	if !ok {
		return false, 0
	}
	wait := untilToken(c.failures, now)
	return wait > 0, wait
}

// failed charges ip one failed authentication attempt.
func (l *clientLimits) failed(ip string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entry(ip, now).failures.AllowN(now, 1)
}

// allow admits one authenticated (or open) request from ip at now, or says how
// long to wait before the next one would be admitted.
func (l *clientLimits) allow(ip string, now time.Time) (bool, time.Duration) {
	if l.reqLimit == 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.entry(ip, now)
	if c.requests == nil {
		c.requests = rate.NewLimiter(l.reqLimit, l.reqBurst) // starts full
	}
	if wait := untilToken(c.requests, now); wait > 0 {
		return false, wait
	}
	c.requests.AllowN(now, 1)
	return true, 0
}

// untilToken is how long b needs before it holds one whole token (0 if it does).
func untilToken(b *rate.Limiter, now time.Time) time.Duration {
	tokens := b.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(b.Limit()) * float64(time.Second))
}

// entry returns ip's buckets, making room for a new client first; l.mu is held.
func (l *clientLimits) entry(ip string, now time.Time) *clientBuckets {
	if c, ok := l.clients[ip]; ok {
		return c
	}
	if len(l.clients) >= l.max {
		l.makeRoom(now)
	}
	c := &clientBuckets{failures: rate.NewLimiter(l.failLimit, l.failBurst)}
	l.clients[ip] = c
	return c
}

// makeRoom brings the table under 90% of max so the sweep runs once per many new
// clients. It forgets, in this order: clients whose buckets are both full (that
// grants nothing), clients with no failed attempt (at most a fresh request burst),
// then any client. A guesser is forgotten last.
func (l *clientLimits) makeRoom(now time.Time) {
	target := l.max * 9 / 10
	full := func(b *rate.Limiter) bool { return b == nil || b.TokensAt(now) >= float64(b.Burst()) }
	passes := []func(*clientBuckets) bool{
		func(c *clientBuckets) bool { return full(c.failures) && full(c.requests) },
		func(c *clientBuckets) bool { return full(c.failures) },
		func(*clientBuckets) bool { return true },
	}
	for _, forget := range passes {
		for ip, c := range l.clients {
			if len(l.clients) < target {
				return
			}
			if forget(c) {
				delete(l.clients, ip)
			}
		}
	}
}

// tracked is how many clients the limiter remembers (tests, memory bound).
func (l *clientLimits) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}
