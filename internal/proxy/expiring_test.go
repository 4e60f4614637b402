package proxy

import (
	"fmt"
	"testing"
	"time"
)

// Keys last until their time; take forgets; a full set starts over rather
// than grow past its bound.
func TestExpiringSet(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := expiringSet{max: 3}
	s.add("a", now.Add(time.Minute))
	if !s.has("a", now) || s.has("a", now.Add(time.Minute)) || s.has("b", now) {
		t.Fatal("a key is remembered until its time, and only it")
	}
	if !s.take("a", now) || s.take("a", now) {
		t.Fatal("take reports a remembered key once")
	}
	for i := range 5 {
		s.add(fmt.Sprint(i), now.Add(time.Minute))
		if len(s.m) > 3 {
			t.Fatalf("%d keys held, bound 3", len(s.m))
		}
	}
	if !s.has("4", now) {
		t.Fatal("the newest key survives the start-over")
	}
}
