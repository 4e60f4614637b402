// Package testutil holds the small helpers several packages' tests share: a clock
// the test moves by hand, a buffer that collects logs from many goroutines, and
// a loopback server for one-off peers.
// Only tests import it.
package testutil

import (
	"bytes"
	"sync"
	"time"
)

// Clock is an injectable clock that moves only when the test advances it, so
// windows and backoffs are crossed without sleeping.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now is the clock's current time; pass c.Now where a func() time.Time is injected.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// SyncBuffer collects log output written from several goroutines.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
