package epoll

// Table names registrants by slot and generation, the two 32-bit words of an epoll
// event's data, never by fd number: an event queued for a registrant that has since
// gone (or whose slot now holds a newer one, perhaps on a reused fd number) fails
// the generation check and is dropped. It does no locking; its owner does.
type Table[T comparable] struct {
	entries []entry[T]
	free    []uint32
	gen     uint32
}

type entry[T comparable] struct {
	v   T
	gen uint32
}

// Add gives v a slot and a generation of its own.
func (t *Table[T]) Add(v T) (slot, gen uint32) {
	t.gen++
	e := entry[T]{v: v, gen: t.gen}
	if n := len(t.free); n > 0 {
		slot = t.free[n-1]
		t.free = t.free[:n-1]
		t.entries[slot] = e
	} else {
		slot = uint32(len(t.entries))
		t.entries = append(t.entries, e)
	}
	return slot, t.gen
}

// Remove frees slot if v still holds it.
func (t *Table[T]) Remove(slot uint32, v T) {
	if int(slot) < len(t.entries) && t.entries[slot].v == v {
		var zero T
		t.entries[slot] = entry[T]{v: zero}
		t.free = append(t.free, slot)
	}
}

// Get is the registrant an event names, if it is still there.
func (t *Table[T]) Get(slot, gen uint32) (T, bool) {
	var zero T
	if int(slot) >= len(t.entries) {
		return zero, false
	}
	e := t.entries[slot]
	if e.v == zero || e.gen != gen {
		return zero, false
	}
	return e.v, true
}

// Each calls fn for every registrant.
func (t *Table[T]) Each(fn func(T)) {
	var zero T
	for _, e := range t.entries {
		if e.v != zero {
			fn(e.v)
		}
	}
}

// Len counts the registrants.
func (t *Table[T]) Len() int { return len(t.entries) - len(t.free) }
