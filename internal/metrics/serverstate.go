package metrics

import (
	"slices"
	"sync"

	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/prometheus/client_golang/prometheus"
)

// ServerSample is one managed server's state as infrarust_server_state reports it.
type ServerSample struct {
	Server string
	State  manager.State
}

// WatchServers makes infrarust_server_state read states() at every scrape: a
// series for every state of every managed server from the moment it is
// configured (1 for the current one, 0 for the others), like
// infrarust_backend_state, so an alert on `state="crashed"` has a 0 to compare
// before the first crash, and a server a reload removed simply vanishes.
// states must be safe to call from the scrape's goroutine.
func (m *Metrics) WatchServers(states func() []ServerSample) {
	if m == nil {
		return
	}
	m.serverState.mu.Lock()
	m.serverState.states = states
	m.serverState.mu.Unlock()
}

type serverStateCollector struct {
	desc   *prometheus.Desc
	mu     sync.Mutex
	states func() []ServerSample
}

// Describe implements prometheus.Collector.
func (c *serverStateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector: one series per known state, and one
// for a current state this build does not list.
func (c *serverStateCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	states := c.states
	c.mu.Unlock()
	if states == nil {
		return
	}
	for _, s := range states() {
		for _, st := range manager.States {
			ch <- c.sample(s, st)
		}
		if !slices.Contains(manager.States, s.State) {
			ch <- c.sample(s, s.State)
		}
	}
}

func (c *serverStateCollector) sample(s ServerSample, st manager.State) prometheus.Metric {
	v := 0.0
	if s.State == st {
		v = 1
	}
	return prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, s.Server, string(st))
}
