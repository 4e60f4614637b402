// Package logtap keeps what the proxy logs for the admin API: the last lines
// in a ring (GET /api/v1/logs/history) and a live feed for subscribers (the
// SSE stream GET /api/v1/logs, the dashboard's live log). It is an
// slog.Handler in front of the one that writes the log: it sees exactly what
// is written, never slows it (a subscriber that falls behind misses lines and
// is told how many), and holds a bounded amount of memory.
package logtap

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultHistory is how many lines the ring keeps.
const DefaultHistory = 1000

// Entry is one logged line as the API gives it.
type Entry struct {
	Time    time.Time      `json:"timestamp"`
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Fields  map[string]any `json:"fields,omitempty"`
	// Seq grows with every line, so a client can join the history and the
	// live feed without a gap or a repeat.
	Seq uint64 `json:"seq"`
}

// Tap is the handler. Its WithAttrs and WithGroup share one ring and one set
// of subscribers.
type Tap struct {
	inner  slog.Handler
	attrs  []slog.Attr // from WithAttrs, already prefixed by their group
	prefix string      // the open groups, "a.b."
	c      *shared
}

type shared struct {
	mu   sync.Mutex
	ring []Entry
	next int
	full bool
	seq  uint64
	subs map[*Sub]struct{}
}

// New taps inner, keeping the last history lines (DefaultHistory when < 1).
func New(inner slog.Handler, history int) *Tap {
	if history < 1 {
		history = DefaultHistory
	}
	return &Tap{inner: inner, c: &shared{ring: make([]Entry, history), subs: map[*Sub]struct{}{}}}
}

// Enabled is the inner handler's: the tap sees what is written, no more.
func (t *Tap) Enabled(ctx context.Context, l slog.Level) bool { return t.inner.Enabled(ctx, l) }

// Handle records r, hands it to the subscribers that take it, and writes it.
func (t *Tap) Handle(ctx context.Context, r slog.Record) error {
	e := Entry{Time: r.Time.UTC(), Level: r.Level.String(), Message: r.Message}
	if n := len(t.attrs) + r.NumAttrs(); n > 0 {
		e.Fields = make(map[string]any, n)
		for _, a := range t.attrs {
			addAttr(e.Fields, "", a)
		}
		r.Attrs(func(a slog.Attr) bool {
			addAttr(e.Fields, t.prefix, a)
			return true
		})
	}
	t.c.record(e)
	return t.inner.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (t *Tap) WithAttrs(as []slog.Attr) slog.Handler {
	n := *t
	n.inner = t.inner.WithAttrs(as)
	n.attrs = slices.Clip(t.attrs)
	for _, a := range as {
		n.attrs = append(n.attrs, slog.Attr{Key: t.prefix + a.Key, Value: a.Value})
	}
	return &n
}

// WithGroup implements slog.Handler.
func (t *Tap) WithGroup(name string) slog.Handler {
	if name == "" {
		return t
	}
	n := *t
	n.inner = t.inner.WithGroup(name)
	n.prefix = t.prefix + name + "."
	return &n
}

func addAttr(m map[string]any, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			addAttr(m, prefix+a.Key+".", g)
		}
		return
	}
	if a.Key == "" {
		return
	}
	switch v.Kind() {
	case slog.KindString:
		m[prefix+a.Key] = v.String()
	case slog.KindInt64:
		m[prefix+a.Key] = v.Int64()
	case slog.KindUint64:
		m[prefix+a.Key] = v.Uint64()
	case slog.KindFloat64:
		m[prefix+a.Key] = v.Float64()
	case slog.KindBool:
		m[prefix+a.Key] = v.Bool()
	case slog.KindDuration:
		m[prefix+a.Key] = v.Duration().String()
	case slog.KindTime:
		m[prefix+a.Key] = v.Time().UTC()
	default:
		if err, ok := v.Any().(error); ok {
			m[prefix+a.Key] = err.Error()
			return
		}
		m[prefix+a.Key] = v.String()
	}
}

func (c *shared) record(e Entry) {
	c.mu.Lock()
	c.seq++
	e.Seq = c.seq
	c.ring[c.next] = e
	c.next++
	if c.next == len(c.ring) {
		c.next, c.full = 0, true
	}
	for s := range c.subs {
		if !s.f.Match(e) {
			continue
		}
		select {
		case s.ch <- e:
		default:
			s.missed.Add(1)
		}
	}
	c.mu.Unlock()
}

// Filter picks lines: a minimum level, and a server or player any field of the
// line names ("" takes every line).
type Filter struct {
	Level          slog.Level
	Server, Player string
}

// Match reports whether f takes e.
func (f Filter) Match(e Entry) bool {
	var l slog.Level
	if l.UnmarshalText([]byte(e.Level)) == nil && l < f.Level {
		return false
	}
	return fieldIs(e, f.Server, "server") && fieldIs(e, f.Player, "player", "username", "name")
}

func fieldIs(e Entry, want string, keys ...string) bool {
	if want == "" {
		return true
	}
	for _, k := range keys {
		if v, ok := e.Fields[k].(string); ok && strings.EqualFold(v, want) {
			return true
		}
	}
	return false
}

// History is the last n lines f takes, oldest first (n < 1: all kept).
func (t *Tap) History(n int, f Filter) []Entry {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []Entry
	if c.full {
		all = append(all, c.ring[c.next:]...)
	}
	all = append(all, c.ring[:c.next]...)
	out := make([]Entry, 0, min(len(all), max(n, 0)))
	for i := len(all) - 1; i >= 0 && (n < 1 || len(out) < n); i-- {
		if f.Match(all[i]) {
			out = append(out, all[i])
		}
	}
	slices.Reverse(out)
	return out
}

// Sub is one live subscriber.
type Sub struct {
	t      *Tap
	f      Filter
	ch     chan Entry
	missed atomic.Uint64
	once   sync.Once
}

// Subscribe follows the lines f takes, with a buffer of buffer lines.
func (t *Tap) Subscribe(buffer int, f Filter) *Sub {
	s := &Sub{t: t, f: f, ch: make(chan Entry, max(buffer, 1))}
	t.c.mu.Lock()
	t.c.subs[s] = struct{}{}
	t.c.mu.Unlock()
	return s
}

// Next waits for the next line; missed says how many were dropped before it
// because the subscriber fell behind.
func (s *Sub) Next(ctx context.Context) (e Entry, missed uint64, err error) {
	select {
	case e = <-s.ch:
		return e, s.missed.Swap(0), nil
	case <-ctx.Done():
		return Entry{}, 0, ctx.Err()
	}
}

// Close detaches the subscriber; safe to call twice.
func (s *Sub) Close() {
	s.once.Do(func() {
		s.t.c.mu.Lock()
		delete(s.t.c.subs, s)
		s.t.c.mu.Unlock()
	})
}
