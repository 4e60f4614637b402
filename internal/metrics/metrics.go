// Package metrics owns the Prometheus series the proxy exports at /metrics. Every
// recording method is safe on a nil *Metrics, so the proxy can run with metrics off
// without a branch at each call site, and label values are only ever configured
// server ids and addresses, which Forget* removes on reload to keep cardinality bounded.
package metrics

import (
	"context"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// latencyBuckets span 1 ms to about 8 s: LAN backends answer in a millisecond, a
// backend on another continent or a cold JVM takes seconds.
var latencyBuckets = prometheus.ExponentialBuckets(0.001, 2, 14)

// Metrics is the proxy's set of series on its own registry, so tests and several
// proxies in one process never collide on the global default registry.
type Metrics struct {
	reg *prometheus.Registry
	// reasons guards every reason, result and outcome label (known.go).
	reasons *labelGuard

	connAccepted      prometheus.Counter
	connActive        prometheus.Gauge
	connRejected      *prometheus.CounterVec
	connectDuration   *prometheus.HistogramVec
	connectFailures   *prometheus.CounterVec
	healthTransitions *prometheus.CounterVec
	statusLatency     *prometheus.HistogramVec
	playersOnline     *prometheus.GaugeVec
	bytesForwarded    *prometheus.CounterVec
	statusCacheHits   prometheus.Counter
	statusCacheMisses prometheus.Counter
	serverState       *serverStateCollector
	logins            *prometheus.CounterVec
	moves             moveMetrics
	ops               *opsMetrics
	buildInfo         *prometheus.GaugeVec
	backendState      *backendStateCollector

	// What every login and session records into, looked up once: the vectors'
	// WithLabelValues validates, hashes and finds its labels under the vector's
	// lock at every call, which a profile of whole logins put at 2 % of a login's
	// CPU (on caches a login finds cold, several µs a call).
	servers              cowMap[*serverSeries] // by server id
	upstream, downstream prometheus.Counter
}

// serverSeries are one server's children of the vectors a login records into.
type serverSeries struct {
	players prometheus.Gauge
	success prometheus.Counter
	connect cowMap[prometheus.Observer] // by address
}

// cowMap is a map read without a lock and written by copying: logins read it on
// every call, and it changes only when a server or an address is first seen or
// forgotten. (sync.Map's hash trie was a chain of cold loads a login, and its
// values an interface asserted at each call.)
type cowMap[V any] struct {
	mu sync.Mutex // writers
	m  atomic.Pointer[map[string]V]
}

func (c *cowMap[V]) load(k string) (V, bool) {
	v, ok := c.current()[k]
	return v, ok
}

// current is the map as it is now; nil (which reads as empty) until the first add.
func (c *cowMap[V]) current() map[string]V {
	if m := c.m.Load(); m != nil {
		return *m
	}
	return nil
}

// add stores v under k unless k has a value already, and returns k's value.
func (c *cowMap[V]) add(k string, v V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.current()
	if have, ok := old[k]; ok {
		return have
	}
	next := make(map[string]V, len(old)+1)
	maps.Copy(next, old)
	next[k] = v
	c.m.Store(&next)
	return v
}

func (c *cowMap[V]) delete(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.current()
	if _, ok := old[k]; !ok {
		return
	}
	next := maps.Clone(old)
	delete(next, k)
	c.m.Store(&next)
}

// New builds the registry with every proxy series plus the Go runtime and process
// collectors that dashboards expect next to them.
func New() *Metrics {
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		reasons: newLabelGuard(256),
		connAccepted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "infrarust_connections_accepted_total",
			Help: "Client TCP connections accepted by the proxy listener.",
		}),
		connActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "infrarust_connections_active",
			Help: "Client connections currently open (handshaking, status or playing).",
		}),
		connRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_connections_rejected_total",
			Help: "Client connections refused, by reason (rate_limit, ip_filter, ban, max_connections, ...).",
		}, []string{"reason"}),
		connectDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "infrarust_backend_connect_duration_seconds",
			Help:    "Time to open a TCP connection to a backend address, successful dials only.",
			Buckets: latencyBuckets,
		}, []string{"server", "address"}),
		connectFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_backend_connect_failures_total",
			Help: "Failed dials to a backend address.",
		}, []string{"server", "address"}),
		healthTransitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_backend_health_transitions_total",
			Help: "Backend address state changes, labelled by the state entered.",
		}, []string{"server", "address", "state"}),
		statusLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "infrarust_backend_status_latency_seconds",
			Help:    "Round trip of a status (server list) request relayed to a backend address.",
			Buckets: latencyBuckets,
		}, []string{"server", "address"}),
		playersOnline: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "infrarust_players_online",
			Help: "Players with an open session, per server.",
		}, []string{"server"}),
		bytesForwarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_forwarded_bytes_total",
			Help: "Bytes forwarded between players and backends (upstream = towards the backend).",
		}, []string{"direction"}),
		statusCacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "infrarust_status_cache_hits_total",
			Help: "Status requests answered from the cache.",
		}),
		statusCacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "infrarust_status_cache_misses_total",
			Help: "Status requests that had to ask a backend.",
		}),
		serverState: &serverStateCollector{desc: prometheus.NewDesc("infrarust_server_state",
			"1 for the state a managed server is in now, 0 for each other state, per server; read from the server manager at each scrape.",
			[]string{"server", "state"}, nil)},
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_logins_total",
			Help: "Login attempts that reached a configured server, by outcome (success, banned, no_backend, backend_refused, server_starting, failed).",
		}, []string{"server", "outcome"}),
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "infrarust_build_info",
			Help: "Always 1; the labels say which build is running.",
		}, []string{"version", "commit", "go_version"}),
		backendState: &backendStateCollector{desc: prometheus.NewDesc("infrarust_backend_state",
			"1 for the state each backend address is in now, 0 for the other states; read from the balancer at every scrape.",
			[]string{"server", "address", "state"}, nil)},
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.connAccepted, m.connActive, m.connRejected,
		m.connectDuration, m.connectFailures, m.healthTransitions, m.statusLatency,
		m.playersOnline, m.bytesForwarded, m.statusCacheHits, m.statusCacheMisses,
		m.serverState, m.logins, m.buildInfo, m.backendState,
	)
	m.moves = newMoveMetrics(m.reg)
	m.ops = newOpsMetrics(m.reg)
	m.ConfigReloaded(true, time.Now())   // the start applied every file (or it would not run)
	m.SetBuildInfo("unknown", "unknown") // until the caller names the build
	// Both directions exist from the start so rate() works before the first session.
	m.upstream = m.bytesForwarded.WithLabelValues("upstream")
	m.downstream = m.bytesForwarded.WithLabelValues("downstream")
	return m
}

// server is server's series, made at its first use and kept until ForgetServer.
func (m *Metrics) server(id string) *serverSeries {
	if s, ok := m.servers.load(id); ok {
		return s
	}
	return m.servers.add(id, &serverSeries{
		players: m.playersOnline.WithLabelValues(id),
		success: m.logins.WithLabelValues(id, string(LoginSuccess)),
	})
}

// Registry exposes the registry so the caller can add its own collectors.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the Prometheus text format for the admin API's /metrics route.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ConnAccepted counts a connection the listener accepted.
func (m *Metrics) ConnAccepted() {
	if m == nil {
		return
	}
	m.connAccepted.Inc()
}

// ConnActive moves the open-connection gauge; +1 on accept, -1 on close.
func (m *Metrics) ConnActive(delta int) {
	if m == nil {
		return
	}
	m.connActive.Add(float64(delta))
}

// ConnRejected counts a refused connection; reason must come from a fixed set in code.
func (m *Metrics) ConnRejected(reason string) {
	if m == nil {
		return
	}
	m.connRejected.WithLabelValues(m.reasons.value(reason)).Inc()
}

// BackendConnect records one dial: its duration when it worked, a failure otherwise.
func (m *Metrics) BackendConnect(server, addr string, d time.Duration, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.connectFailures.WithLabelValues(server, addr).Inc()
		return
	}
	srv := m.server(server)
	o, ok := srv.connect.load(addr)
	if !ok {
		o = srv.connect.add(addr, m.connectDuration.WithLabelValues(server, addr))
	}
	o.Observe(d.Seconds())
}

// HealthTransition counts an address entering state (healthy, probing, unhealthy, draining;
// never unknown, which is where an address starts and never returns to).
func (m *Metrics) HealthTransition(server, addr, state string) {
	if m == nil {
		return
	}
	m.healthTransitions.WithLabelValues(server, addr, state).Inc()
}

// StatusLatency records a relayed status request's round trip.
func (m *Metrics) StatusLatency(server, addr string, d time.Duration) {
	if m == nil {
		return
	}
	m.statusLatency.WithLabelValues(server, addr).Observe(d.Seconds())
}

// PlayerJoined counts a session that reached the play state on server.
func (m *Metrics) PlayerJoined(server string) {
	if m == nil {
		return
	}
	m.server(server).players.Inc()
}

// PlayerLeft ends a session counted by PlayerJoined. A session of a server a
// reload removed (ForgetServer) ends uncounted: its series is gone, and making it
// again would export the server at -1.
func (m *Metrics) PlayerLeft(server string) {
	if m == nil {
		return
	}
	if s, ok := m.servers.load(server); ok {
		s.players.Dec()
	}
}

// BytesForwarded adds a session's byte counts (from io.Copy's return values).
func (m *Metrics) BytesForwarded(up, down int64) {
	if m == nil {
		return
	}
	if up > 0 {
		m.upstream.Add(float64(up))
	}
	if down > 0 {
		m.downstream.Add(float64(down))
	}
}

// StatusCache counts a status cache lookup.
func (m *Metrics) StatusCache(hit bool) {
	if m == nil {
		return
	}
	if hit {
		m.statusCacheHits.Inc()
	} else {
		m.statusCacheMisses.Inc()
	}
}

// LoginOutcome is how a login that reached a configured server ended; the fixed set
// keeps infrarust_logins_total's cardinality bounded.
type LoginOutcome string

// Login outcomes.
const (
	// LoginSuccess: the player was handed to a backend.
	LoginSuccess LoginOutcome = "success"
	// LoginBanned: refused by a ban on the name, UUID or IP.
	LoginBanned LoginOutcome = "banned"
	// LoginNoBackend: no address of the server could be reached in time.
	LoginNoBackend LoginOutcome = "no_backend"
	// LoginBackendRefused: a backend answered the login with a disconnect (full, whitelist, ...).
	LoginBackendRefused LoginOutcome = "backend_refused"
	// LoginServerStarting: the server is managed and was asleep or starting; the player was asked to retry.
	LoginServerStarting LoginOutcome = "server_starting"
	// LoginFailed: anything else (a malformed login, the client left mid-login).
	LoginFailed LoginOutcome = "failed"
)

// LoginOutcomes lists every outcome, so dashboards and tests know the full set.
func LoginOutcomes() []LoginOutcome {
	return []LoginOutcome{LoginSuccess, LoginBanned, LoginNoBackend, LoginBackendRefused, LoginServerStarting, LoginFailed}
}

// Login counts one login to server that ended with outcome; server is a configured id.
func (m *Metrics) Login(server string, outcome LoginOutcome) {
	if m == nil {
		return
	}
	if outcome == LoginSuccess {
		m.server(server).success.Inc()
		return
	}
	m.logins.WithLabelValues(server, string(outcome)).Inc()
}

// SetBuildInfo labels infrarust_build_info with the running build (the go_version
// label is this binary's toolchain), so a dashboard shows which release each
// proxy runs; calling it again replaces the labels.
func (m *Metrics) SetBuildInfo(version, commit string) {
	if m == nil {
		return
	}
	m.buildInfo.Reset()
	m.buildInfo.WithLabelValues(version, commit, runtime.Version()).Set(1)
}

// BackendSample is one address's state as the balancer reports it.
type BackendSample struct {
	Server, Address string
	State           balance.State
}

// WatchBackends makes infrarust_backend_state read states() at every scrape, so the
// gauge is exactly the balancer's view (an address ejected for an hour reads
// unhealthy for that hour, and addresses a reload removed simply vanish) with no
// event to miss. states must be safe to call from the scrape's goroutine.
func (m *Metrics) WatchBackends(states func() []BackendSample) {
	if m == nil {
		return
	}
	m.backendState.set(states)
}

// backendStateCollector emits infrarust_backend_state from a function read at scrape time.
type backendStateCollector struct {
	desc   *prometheus.Desc
	mu     sync.Mutex
	states func() []BackendSample
}

// backendStates is every state the gauge reports a series for, so a 0 exists for
// each state an alert may test (unknown included: an address nobody has checked).
func backendStates() []balance.State { return balance.States() }

func (c *backendStateCollector) set(states func() []BackendSample) {
	c.mu.Lock()
	c.states = states
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *backendStateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector: one series per known state, and one for
// a current state this build does not list.
func (c *backendStateCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	states := c.states
	c.mu.Unlock()
	if states == nil {
		return
	}
	known := backendStates()
	for _, b := range states() {
		for _, st := range known {
			ch <- c.sample(b, st)
		}
		if !slices.Contains(known, b.State) {
			ch <- c.sample(b, b.State)
		}
	}
}

func (c *backendStateCollector) sample(b BackendSample, st balance.State) prometheus.Metric {
	v := 0.0
	if b.State == st {
		v = 1
	}
	return prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, b.Server, b.Address, string(st))
}

// ForgetAddress drops an address's series after a reload removed it from a server.
func (m *Metrics) ForgetAddress(server, addr string) {
	if m == nil {
		return
	}
	l := prometheus.Labels{"server": server, "address": addr}
	m.connectDuration.DeletePartialMatch(l)
	if s, ok := m.servers.load(server); ok {
		s.connect.delete(addr)
	}
	m.connectFailures.DeletePartialMatch(l)
	m.healthTransitions.DeletePartialMatch(l)
	m.statusLatency.DeletePartialMatch(l)
}

// ForgetServer drops every series of a server a reload removed.
func (m *Metrics) ForgetServer(server string) {
	if m == nil {
		return
	}
	l := prometheus.Labels{"server": server}
	m.connectDuration.DeletePartialMatch(l)
	// After the series: a login meanwhile records into the cached children,
	// which no longer count, as it would have into the deleted series.
	defer m.servers.delete(server)
	m.connectFailures.DeletePartialMatch(l)
	m.healthTransitions.DeletePartialMatch(l)
	m.statusLatency.DeletePartialMatch(l)
	m.playersOnline.DeletePartialMatch(l)
	m.logins.DeletePartialMatch(l)
	m.moves.refused.DeletePartialMatch(l)
	m.moves.bounced.DeletePartialMatch(l)
	m.ops.wakeFailed.DeletePartialMatch(l)
	m.ops.wake.DeletePartialMatch(l)
}

// SubscribeHealth counts the bus's backend.health_change events into
// infrarust_backend_health_transitions_total, so the balancer needs no metrics
// dependency; use it instead of calling HealthTransition, not as well. The returned
// func stops the subscriber and waits for it.
func (m *Metrics) SubscribeHealth(bus *events.Bus) func() {
	if m == nil || bus == nil {
		return func() {}
	}
	sub := bus.Subscribe(256, events.BackendHealthChange, events.ServerStateChange)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			switch hc := ev.Data.(type) {
			case events.ServerState:
				m.ops.serverStateChanged(hc, time.Now())
			case *events.ServerState:
				if hc != nil {
					m.ops.serverStateChanged(*hc, time.Now())
				}
			case events.HealthChange:
				m.HealthTransition(hc.Server, hc.Address, hc.To)
			case *events.HealthChange:
				if hc != nil {
					m.HealthTransition(hc.Server, hc.Address, hc.To)
				}
			}
		}
	}()
	return func() {
		cancel()
		sub.Close()
		<-done
	}
}
