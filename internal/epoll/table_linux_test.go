package epoll

import "testing"

func TestTableNamesByGeneration(t *testing.T) {
	var tb Table[*int]
	a, b := new(int), new(int)
	sa, ga := tb.Add(a)
	if got, ok := tb.Get(sa, ga); !ok || got != a {
		t.Fatalf("Get(%d, %d) = %v, %v; want a", sa, ga, got, ok)
	}
	tb.Remove(sa, a)
	if _, ok := tb.Get(sa, ga); ok {
		t.Fatal("a removed registrant is still found")
	}
	sb, gb := tb.Add(b) // reuses a's slot with a newer generation
	if sb != sa || gb == ga {
		t.Fatalf("b got slot %d gen %d; want a's slot %d with a generation other than %d", sb, gb, sa, ga)
	}
	if _, ok := tb.Get(sa, ga); ok {
		t.Fatal("an event for a's generation names b")
	}
	if got, ok := tb.Get(sb, gb); !ok || got != b {
		t.Fatal("b is not found by its own slot and generation")
	}
	tb.Remove(sb, a) // not the holder: nothing happens
	if tb.Len() != 1 {
		t.Fatalf("Len %d after removing a non-holder, want 1", tb.Len())
	}
	if _, ok := tb.Get(99, gb); ok {
		t.Fatal("a slot past the end is found")
	}
	n := 0
	tb.Each(func(*int) { n++ })
	if n != 1 {
		t.Fatalf("Each saw %d registrants, want 1", n)
	}
}
