package admin

import (
	"sync"
	"time"
)

// maxTrackedClients bounds the limiter's memory under a spray from many addresses.
const maxTrackedClients = 10000

// ipLimiter is a per-client GCRA: one "theoretical arrival time" per IP, burst equal
// to the per-minute quota, steady refill of one request every minute/quota. A GCRA
// keeps one timestamp per client and an IP whose TAT is in the past is at full
// burst, so forgetting it can never grant more than the quota; that makes the sweep safe.
type ipLimiter struct {
	mu       sync.Mutex
	interval time.Duration // time one request "costs"
	tau      time.Duration // how far ahead of now the TAT may run (the burst)
	tat      map[string]time.Time
	max      int
}

func newIPLimiter(perMinute int) *ipLimiter {
	if perMinute <= 0 {
		perMinute = 60
	}
	interval := time.Minute / time.Duration(perMinute)
	return &ipLimiter{
		interval: interval,
		tau:      time.Duration(perMinute-1) * interval,
		tat:      make(map[string]time.Time),
		max:      maxTrackedClients,
	}
}

// allow admits one request from ip at now, or says how long to wait.
func (l *ipLimiter) allow(ip string, now time.Time) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tat, seen := l.tat[ip]
	if !seen {
		l.makeRoom(now)
	}
	if tat.Before(now) {
		tat = now
	}
	if ahead := tat.Sub(now); ahead > l.tau {
		return false, ahead - l.tau
	}
	l.tat[ip] = tat.Add(l.interval)
	return true, 0
}

// makeRoom keeps the table under max: first drop clients back at full burst, then,
// if a flood of distinct IPs still fills it, the one closest to full burst. The
// evicted client gains at most what it would have had moments later.
func (l *ipLimiter) makeRoom(now time.Time) {
	if len(l.tat) < l.max {
		return
	}
	for ip, t := range l.tat {
		if !t.After(now) {
			delete(l.tat, ip)
		}
	}
	for len(l.tat) >= l.max {
		var oldest string
		var ot time.Time
		for ip, t := range l.tat {
			if oldest == "" || t.Before(ot) {
				oldest, ot = ip, t
			}
		}
		delete(l.tat, oldest)
	}
}
