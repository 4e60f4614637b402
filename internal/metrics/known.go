package metrics

import (
	"strings"
	"sync"
)

// Series that alerts and panels read exist at 0 from the start for every
// label set the configuration knows, so increase() sees a proxy's first
// failure (a counter born at 1 shows no increase). And no label takes free
// text: every label value that is not a configured name passes a guard.

// ServersConfigured makes the per-server failure series of the configured
// servers exist at 0: fallback exhausted for every server, wake failures for
// the managed ones, health transitions to unhealthy for every address.
func (m *Metrics) ServersConfigured(servers map[string][]string, managed []string) {
	if m == nil {
		return
	}
	for id, addrs := range servers {
		m.moves.bounced.WithLabelValues(id)
		for _, a := range addrs {
			m.healthTransitions.WithLabelValues(id, a, "unhealthy")
		}
	}
	for _, id := range managed {
		m.ops.wakeFailed.WithLabelValues(id)
	}
}

// HookSeries are what a dispatcher runs, for the series to exist at 0.
type HookSeries struct {
	// Handlers are each compiled-in handler's name and event.
	Handlers [][2]string
	// Webhooks are each webhook's URL, events and whether it notifies.
	Webhooks []WebhookSeries
}

// WebhookSeries is one webhook.
type WebhookSeries struct {
	URL       string
	Events    []string
	Notifying bool
}

// handlerFailures are the reasons a handler fails (hooks' dispatcher).
var handlerFailures = []string{"panic", "timeout", "stuck"}

// HooksConfigured makes the hook and webhook failure series exist at 0.
func (m *Metrics) HooksConfigured(s HookSeries) {
	if m == nil {
		return
	}
	for _, h := range s.Handlers {
		for _, why := range handlerFailures {
			m.ops.hookFailures.WithLabelValues(h[0], h[1], why)
		}
	}
	for _, w := range s.Webhooks {
		for _, ev := range w.Events {
			m.ops.webhookFailures.WithLabelValues(webhookLabel(w.URL), ev)
		}
		if w.Notifying {
			m.ops.webhookDropped.WithLabelValues(webhookLabel(w.URL))
		}
	}
}

// labelGuard bounds one label: a value is kept when it looks like a code
// constant (lower-case letters, digits and _, at most 40) and fewer than max
// values were seen; anything else is "other". Reasons and outcomes come from
// fixed sets in code; the guard keeps a mistake (an error's text as a
// reason) from growing the series without bound.
type labelGuard struct {
	mu   sync.Mutex
	seen map[string]bool
	max  int
}

func newLabelGuard(max int) *labelGuard { return &labelGuard{seen: map[string]bool{}, max: max} }

func (g *labelGuard) value(v string) string {
	if v == "" {
		return v
	}
	if len(v) > 40 || strings.ContainsFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}) {
		return "other"
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen[v] {
		return v
	}
	if len(g.seen) >= g.max {
		return "other"
	}
	g.seen[v] = true
	return v
}
