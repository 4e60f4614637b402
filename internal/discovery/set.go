package discovery

import (
	"sort"
	"sync"

	"github.com/infrarust-go/infrarust/internal/config"
)

// Set keeps the latest snapshot of every source, so a reload of servers_dir can
// put the discovered servers back without asking the sources again.
type Set struct {
	mu     sync.Mutex
	latest map[string][]*config.Server
	seen   map[string]bool // conflicts already reported
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{latest: map[string][]*config.Server{}, seen: map[string]bool{}}
}

// Update replaces source's snapshot.
func (s *Set) Update(source string, servers []*config.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest[source] = servers
}

// Servers is every source's latest snapshot, in source-name order.
func (s *Set) Servers() []*config.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.latest))
	for n := range s.latest {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*config.Server
	for _, n := range names {
		out = append(out, s.latest[n]...)
	}
	return out
}

// Merge merges the latest snapshots with files (see Merge). fresh holds only the
// conflicts not returned by the previous call, so a conflict that stays is logged
// once, not at every reload; one that went away and comes back is fresh again.
func (s *Set) Merge(files []*config.Server) (merged []*config.Server, fresh []error) {
	merged, conflicts := Merge(files, s.Servers())
	s.mu.Lock()
	defer s.mu.Unlock()
	now := map[string]bool{}
	for _, c := range conflicts {
		k := c.Error()
		now[k] = true
		if !s.seen[k] {
			fresh = append(fresh, c)
		}
	}
	s.seen = now
	return merged, fresh
}
