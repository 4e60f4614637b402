package metrics

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// ServerSample is one managed server's state as infrarust_server_state reports it.
type ServerSample struct {
	Server string
	State  string
}

// WatchServers makes infrarust_server_state read samples() at every scrape: a
// series for each of states for every managed server from the moment it is
// configured (1 for the current one, 0 for the others), like
// infrarust_backend_state, so an alert on `state="crashed"` has a 0 to compare
// before the first crash, and a server a reload removed simply vanishes. The
// caller names the states (the server manager's vocabulary), so metrics stays
// free of the manager. samples must be safe to call from the scrape's goroutine.
func (m *Metrics) WatchServers(states []string, samples func() []ServerSample) {
	if m == nil {
		return
	}
	m.serverState.mu.Lock()
	m.serverState.states, m.serverState.samples = slices.Clone(states), samples
	m.serverState.mu.Unlock()
}

type serverStateCollector struct {
	desc    *prometheus.Desc
	mu      sync.Mutex
	states  []string
	samples func() []ServerSample
}

// Describe implements prometheus.Collector.
func (c *serverStateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector: one series per known state, and one
// for a current state the caller did not list.
func (c *serverStateCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	states, samples := c.states, c.samples
	c.mu.Unlock()
	if samples == nil {
		return
	}
	for _, s := range samples() {
		for _, st := range states {
			ch <- c.sample(s, st)
		}
		if !slices.Contains(states, s.State) {
			ch <- c.sample(s, s.State)
		}
	}
}

func (c *serverStateCollector) sample(s ServerSample, st string) prometheus.Metric {
	v := 0.0
	if s.State == st {
		v = 1
	}
	return prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, s.Server, st)
}
