package metrics

import "github.com/prometheus/client_golang/prometheus"

// moveMetrics count what the one admission decision refused on moves, and the
// players a fallback budget ran out for, so an alert sees a network that turns
// players away between servers.
type moveMetrics struct {
	refused *prometheus.CounterVec
	bounced *prometheus.CounterVec
}

func newMoveMetrics(reg *prometheus.Registry) moveMetrics {
	m := moveMetrics{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_moves_refused_total",
			Help: "Moves of a player (fallback, redirect, send, BungeeCord Connect, drain, limbo exit) the target server's rules refused, by target and rule (ip_filter, ban, maintenance, capacity).",
		}, []string{"server", "rule"}),
		bounced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_fallback_exhausted_total",
			Help: "Players disconnected because their fallback budget ran out (fallback_max_bounces within a minute), by the server that lost them last.",
		}, []string{"server"}),
	}
	reg.MustRegister(m.refused, m.bounced)
	return m
}

// MoveRefused counts a move the target's rules refused; rule comes from a fixed set in code.
func (m *Metrics) MoveRefused(server, rule string) {
	if m == nil {
		return
	}
	m.moves.refused.WithLabelValues(server, m.reasons.value(rule)).Inc()
}

// FallbackExhausted counts a player the fallback budget disconnected.
func (m *Metrics) FallbackExhausted(server string) {
	if m == nil {
		return
	}
	m.moves.bounced.WithLabelValues(server).Inc()
}
