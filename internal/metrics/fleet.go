package metrics

import "github.com/prometheus/client_golang/prometheus"

// FleetSample is the fleet as the gauges report it, read at every scrape.
type FleetSample struct {
	// Connected says whether the fleet's Redis answered the last call.
	Connected bool
	// LiveProxies counts the proxies heartbeating, this one included.
	LiveProxies int
	// Pending counts changes made here that the fleet has not acknowledged.
	Pending int
	// RedisCommands counts the commands this proxy sent to Redis since start.
	RedisCommands uint64
	// Rejected counts what was dropped from Redis since start, by reason
	// (unsigned, bad_signature, not_member, stale): every reason is present.
	Rejected map[string]uint64
}

// WatchFleet adds the fleet series, read from sample at every scrape, so an
// alert sees a proxy cut off from the fleet (infrarust_fleet_connected == 0) and
// changes piling up. Only a proxy with [fleet] calls it; without it the series
// do not exist.
func (m *Metrics) WatchFleet(sample func() FleetSample) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&fleetCollector{
		sample:    sample,
		connected: prometheus.NewDesc("infrarust_fleet_connected", "1 while the fleet's Redis answers this proxy, 0 while it is cut off (players are served with the last known state).", nil, nil),
		proxies:   prometheus.NewDesc("infrarust_fleet_proxies", "Proxies of the fleet heartbeating, this one included, as last seen.", nil, nil),
		pending:   prometheus.NewDesc("infrarust_fleet_pending_changes", "Drains, enables and bans made on this proxy that the fleet has not acknowledged yet.", nil, nil),
		commands:  prometheus.NewDesc("infrarust_fleet_redis_commands_total", "Commands this proxy sent to the fleet's Redis.", nil, nil),
		rejected: prometheus.NewDesc("infrarust_fleet_rejected_total",
			"Messages and entries read from the fleet's Redis and dropped: unsigned or bad_signature (no valid signature of [fleet] secret_file), not_member (from a proxy id that is no live member), stale (a replay).",
			[]string{"reason"}, nil),
	})
}

type fleetCollector struct {
	sample                                          func() FleetSample
	connected, proxies, pending, commands, rejected *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.connected
	ch <- c.proxies
	ch <- c.pending
	ch <- c.commands
	ch <- c.rejected
}

// Collect implements prometheus.Collector.
func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.sample()
	up := 0.0
	if s.Connected {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(c.connected, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(c.proxies, prometheus.GaugeValue, float64(s.LiveProxies))
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(s.Pending))
	ch <- prometheus.MustNewConstMetric(c.commands, prometheus.CounterValue, float64(s.RedisCommands))
	for reason, n := range s.Rejected {
		ch <- prometheus.MustNewConstMetric(c.rejected, prometheus.CounterValue, float64(n), reason)
	}
}
