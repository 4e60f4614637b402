package proxy

import (
	"net/netip"
	"strings"
	"sync"
	"time"
)

// playerAt keys what the proxy remembers of a player name at an address (a
// verification pass, a failed premium proof): names are case-insensitive.
func playerAt(name string, ip netip.Addr) string { return strings.ToLower(name) + "|" + ip.String() }

// expiringSet remembers keys until a time each. With max set it holds at most
// max keys and starts over when full, so a flood of names costs the players it
// forgets a second check, never unbounded memory; max 0 is no bound.
type expiringSet struct {
	mu  sync.Mutex
	m   map[string]time.Time
	max int
}

// add remembers key until then.
func (s *expiringSet) add(key string, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || (s.max > 0 && len(s.m) >= s.max) {
		s.m = map[string]time.Time{}
	}
	s.m[key] = until
}

// has reports whether key is remembered at now.
func (s *expiringSet) has(key string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.m[key]
	return ok && now.Before(until)
}

// take is has, and forgets key.
func (s *expiringSet) take(key string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.m[key]
	delete(s.m, key)
	return ok && now.Before(until)
}

// forget drops every key match says to.
func (s *expiringSet) forget(match func(key string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.m {
		if match(k) {
			delete(s.m, k)
		}
	}
}
