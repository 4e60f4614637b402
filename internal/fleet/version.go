package fleet

import (
	"cmp"
	"fmt"
	"strings"
)

// Version orders the changes to one key across the fleet: the later TS wins, and
// on a tie the greater proxy id, so every proxy picks the same winner without
// talking to the others.
type Version struct {
	// TS is a hybrid logical clock in Unix milliseconds: the wall clock of the
	// proxy that made the change, pushed past every version that proxy had seen,
	// so a change made after seeing another always wins over it even when the
	// clocks disagree.
	TS int64 `json:"ts"`
	// Proxy is the fleet id of the proxy that made the change.
	Proxy string `json:"proxy"`
}

// Compare is -1, 0 or +1 as v is older than, the same as or newer than w.
func (v Version) Compare(w Version) int {
	return cmp.Or(cmp.Compare(v.TS, w.TS), strings.Compare(v.Proxy, w.Proxy))
}

// Newer reports whether v wins over w.
func (v Version) Newer(w Version) bool { return v.Compare(w) > 0 }

func (v Version) String() string { return fmt.Sprintf("%d@%s", v.TS, v.Proxy) }

// clock is the hybrid logical clock behind new versions; the caller holds Fleet.mu.
type clock struct {
	max int64 // the highest TS made or seen
}

// next is the version of a change made now (wall clock in ms).
func (c *clock) next(nowMS int64, proxy string) Version {
	ts := max(nowMS, c.max+1)
	c.max = ts
	return Version{TS: ts, Proxy: proxy}
}

// see moves the clock past a version made elsewhere.
func (c *clock) see(v Version) { c.max = max(c.max, v.TS) }
