package metrics

import (
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/infrarust-go/infrarust/internal/events"
)

// waitBuckets span a second to about an hour: a limbo wait, a server's start.
var waitBuckets = prometheus.ExponentialBuckets(1, 2, 13)

// opsMetrics are what an operator alerts on beyond the traffic: reloads, moves,
// the limbo and its queues, maintenance, wakes, and the hooks and webhooks.
type opsMetrics struct {
	reloadOK, reloadAt *prometheus.GaugeVec
	moves              *prometheus.CounterVec
	limboPlayers       *prometheus.GaugeVec
	limboWait          *prometheus.HistogramVec
	wake               *prometheus.HistogramVec
	wakeFailed         *prometheus.CounterVec
	hookFailures       *prometheus.CounterVec
	webhookFailures    *prometheus.CounterVec
	webhookDropped     *prometheus.CounterVec
	auth               *prometheus.CounterVec
	verify             *prometheus.CounterVec
	verifyAttack       *prometheus.GaugeVec
	servers            *serverFlagsCollector
	webhooks           *webhookCollector

	mu       sync.Mutex
	starting map[string]time.Time // server -> when its start began
}

func newOpsMetrics(reg *prometheus.Registry) *opsMetrics {
	o := &opsMetrics{
		reloadOK: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "infrarust_config_last_reload_successful",
			Help: "1 when the last reload of servers_dir (or the start) applied every file, 0 when a file was rejected or the reload was.",
		}, nil),
		reloadAt: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "infrarust_config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last reload (or start) that applied every file.",
		}, nil),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_moves_total",
			Help: "Moves of a player between servers, by reason (command, send, admin, plugin, fallback, drain, fleet, limbo) and outcome (moved, held, refused, failed).",
		}, []string{"reason", "outcome"}),
		limboPlayers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "infrarust_limbo_players",
			Help: "Players held in the limbo now, by handler (wake, queue, maintenance, down).",
		}, []string{"handler"}),
		limboWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "infrarust_limbo_wait_seconds",
			Help:    "How long a player stayed in the limbo, by handler (for queue: the wait in the queue).",
			Buckets: waitBuckets,
		}, []string{"handler"}),
		wake: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "infrarust_server_wake_duration_seconds",
			Help:    "Time from a managed server's start to its being online, per server.",
			Buckets: waitBuckets,
		}, []string{"server"}),
		wakeFailed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_server_wake_failures_total",
			Help: "Starts of a managed server that ended other than online (crashed, offline), per server.",
		}, []string{"server"}),
		hookFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_hook_failures_total",
			Help: "Compiled-in event handlers that panicked, overran their deadline or were skipped as stuck, by handler, event and reason.",
		}, []string{"handler", "event", "reason"}),
		webhookFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_webhook_failures_total",
			Help: "Webhook failures, by webhook (scheme, host and path) and event: a deciding webhook that did not answer usably (on_error applied), a notification given up after its attempts.",
		}, []string{"webhook", "event"}),
		webhookDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrarust_webhook_dropped_total",
			Help: "Events a notifying webhook's full queue dropped, by webhook (scheme, host and path).",
		}, []string{"webhook"}),
		servers: &serverFlagsCollector{
			maintenance: prometheus.NewDesc("infrarust_server_maintenance",
				"1 while a server is in maintenance, 0 otherwise, per configured server; read at each scrape.", []string{"server"}, nil),
			queue: prometheus.NewDesc("infrarust_queue_length",
				"Players waiting in a full server's queue now, per server with a queue handler; read at each scrape.", []string{"server"}, nil),
		},
		webhooks: &webhookCollector{
			notified: prometheus.NewDesc("infrarust_webhook_notifications_total",
				"Events a notifying webhook delivered (2xx), gave up on (failed), and retries it sent, by webhook (scheme, host and path).", []string{"webhook", "result"}, nil),
			queued: prometheus.NewDesc("infrarust_webhook_queue_length",
				"Events waiting in a notifying webhook's queue now, by webhook.", []string{"webhook"}, nil),
		},
		starting: map[string]time.Time{},
	}
	o.auth = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "infrarust_auth_total",
		Help: "Password logins in the auth limbo, by result (registered, logged_in, remembered, premium, premium_refused, wrong_password, timeout, too_many_attempts, unavailable, refused).",
	}, []string{"result"})
	o.verify = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "infrarust_verify_total",
		Help: "Bot verifications, by result (passed, failed, refused) and reason (timeout, not_falling, landing, no_teleport_confirm, no_settings, no_brand, flood, protocol; version, busy for refused).",
	}, []string{"result", "reason"})
	o.verifyAttack = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "infrarust_verify_attack_mode",
		Help: "1 while bot verification's attack mode is on (logins faster than [verify] attack_threshold).",
	}, nil)
	o.verifyAttack.WithLabelValues().Set(0)
	reg.MustRegister(o.auth, o.verify, o.verifyAttack)
	reg.MustRegister(o.reloadOK, o.reloadAt, o.moves, o.limboPlayers, o.limboWait, o.wake, o.wakeFailed,
		o.hookFailures, o.webhookFailures, o.webhookDropped, o.servers, o.webhooks)
	for _, h := range []string{"wake", "queue", "maintenance", "down", "auth", "verify"} {
		o.limboPlayers.WithLabelValues(h) // 0 before the first player, for alerts and graphs
	}
	return o
}

// ConfigReloaded records a reload (or the start, ok true): ok says every file
// applied.
func (m *Metrics) ConfigReloaded(ok bool, at time.Time) {
	if m == nil {
		return
	}
	if ok {
		m.ops.reloadOK.WithLabelValues().Set(1)
		m.ops.reloadAt.WithLabelValues().Set(float64(at.UnixNano()) / 1e9)
		return
	}
	m.ops.reloadOK.WithLabelValues().Set(0)
}

// Move counts a move of a player; reason and outcome come from fixed sets in code.
func (m *Metrics) Move(reason, outcome string) {
	if m == nil {
		return
	}
	m.ops.moves.WithLabelValues(m.reasons.value(reason), m.reasons.value(outcome)).Inc()
}

// Limbo records a player entering (entered) or leaving a handler's limbo,
// with how long they waited when leaving.
func (m *Metrics) Limbo(handler string, entered bool, waited time.Duration) {
	if m == nil || handler == "" {
		return
	}
	if entered {
		m.ops.limboPlayers.WithLabelValues(m.reasons.value(handler)).Inc()
		return
	}
	m.ops.limboPlayers.WithLabelValues(m.reasons.value(handler)).Dec()
	m.ops.limboWait.WithLabelValues(m.reasons.value(handler)).Observe(waited.Seconds())
}

// HandlerFailed implements hooks.Metrics.
func (m *Metrics) HandlerFailed(handler, event, why string) {
	if m == nil {
		return
	}
	m.ops.hookFailures.WithLabelValues(handler, m.reasons.value(event), m.reasons.value(why)).Inc()
}

// WebhookFailed implements hooks.Metrics.
func (m *Metrics) WebhookFailed(target, event string) {
	if m == nil {
		return
	}
	m.ops.webhookFailures.WithLabelValues(webhookLabel(target), m.reasons.value(event)).Inc()
}

// WebhookDropped implements hooks.Metrics.
func (m *Metrics) WebhookDropped(target string) {
	if m == nil {
		return
	}
	m.ops.webhookDropped.WithLabelValues(webhookLabel(target)).Inc()
}

// webhookLabel is a webhook's URL without what may be a secret (user info, the
// query, where tokens travel) for a label.
func webhookLabel(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "invalid"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// ServerFlags is what infrarust_server_maintenance and infrarust_queue_length
// read at each scrape.
type ServerFlags struct {
	Servers     []string       // every configured server
	Maintenance []string       // those in maintenance
	Queues      map[string]int // players waiting, per server with a queue
}

// WatchServerFlags makes the maintenance and queue series read flags() at every scrape.
func (m *Metrics) WatchServerFlags(flags func() ServerFlags) {
	if m == nil {
		return
	}
	m.ops.servers.flags.set(flags)
}

// watched is a sample function a scrape reads, set once the caller has it:
// what the scrape-time collectors share.
type watched[T any] struct {
	mu sync.Mutex
	f  func() T
}

func (w *watched[T]) set(f func() T) {
	w.mu.Lock()
	w.f = f
	w.mu.Unlock()
}

// read samples now; ok is false until set.
func (w *watched[T]) read() (v T, ok bool) {
	w.mu.Lock()
	f := w.f
	w.mu.Unlock()
	if f == nil {
		return v, false
	}
	return f(), true
}

type serverFlagsCollector struct {
	maintenance, queue *prometheus.Desc
	flags              watched[ServerFlags]
}

func (c *serverFlagsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.maintenance
	ch <- c.queue
}

func (c *serverFlagsCollector) Collect(ch chan<- prometheus.Metric) {
	f, ok := c.flags.read()
	if !ok {
		return
	}
	for _, s := range f.Servers {
		v := 0.0
		if slices.Contains(f.Maintenance, s) {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.maintenance, prometheus.GaugeValue, v, s)
	}
	for s, n := range f.Queues {
		ch <- prometheus.MustNewConstMetric(c.queue, prometheus.GaugeValue, float64(n), s)
	}
}

// serverStateChanged times a managed server's starts from the state changes
// the manager publishes.
func (o *opsMetrics) serverStateChanged(st events.ServerState, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case st.To == "starting":
		if _, ok := o.starting[st.Server]; !ok {
			o.starting[st.Server] = at
		}
	case st.To == "stopping" || st.To == "sleeping":
		delete(o.starting, st.Server)
	default:
		began, ok := o.starting[st.Server]
		if !ok {
			return
		}
		delete(o.starting, st.Server)
		if st.To == "online" {
			o.wake.WithLabelValues(st.Server).Observe(at.Sub(began).Seconds())
		} else {
			o.wakeFailed.WithLabelValues(st.Server).Inc()
		}
	}
}

// Names lists the name of every series the registry can export (whether or not
// it has a sample yet), for the checks that dashboards and alert rules name
// only series that exist.
func (m *Metrics) Names() []string {
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		m.reg.Describe(ch)
		close(ch)
	}()
	var out []string
	for d := range ch {
		// A Desc shows its name only in String: Desc{fqName: "name", ...}.
		s := d.String()
		if i := strings.Index(s, `fqName: "`); i >= 0 {
			rest := s[i+len(`fqName: "`):]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				out = append(out, rest[:j])
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// WebhookCounts are one notifying webhook's counters since the start.
type WebhookCounts struct {
	Delivered, Failed, Retried uint64
	Queued                     int
}

// WatchWebhooks makes infrarust_webhook_notifications_total and
// infrarust_webhook_queue_length read stats() (by webhook URL) at every scrape.
func (m *Metrics) WatchWebhooks(stats func() map[string]WebhookCounts) {
	if m == nil {
		return
	}
	m.ops.webhooks.stats.set(stats)
}

type webhookCollector struct {
	notified, queued *prometheus.Desc
	stats            watched[map[string]WebhookCounts]
}

func (c *webhookCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.notified
	ch <- c.queued
}

func (c *webhookCollector) Collect(ch chan<- prometheus.Metric) {
	all, ok := c.stats.read()
	if !ok {
		return
	}
	// Two URLs that differ only in what the label leaves out (a token in the
	// query) are one series: summed, never emitted twice.
	byLabel := map[string]WebhookCounts{}
	for u, s := range all {
		w := webhookLabel(u)
		sum := byLabel[w]
		sum.Delivered += s.Delivered
		sum.Failed += s.Failed
		sum.Retried += s.Retried
		sum.Queued += s.Queued
		byLabel[w] = sum
	}
	for w, s := range byLabel {
		for _, r := range []struct {
			result string
			n      uint64
		}{{"delivered", s.Delivered}, {"failed", s.Failed}, {"retried", s.Retried}} {
			ch <- prometheus.MustNewConstMetric(c.notified, prometheus.CounterValue, float64(r.n), w, r.result)
		}
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(s.Queued), w)
	}
}

// Auth counts one result of the auth limbo; result comes from a fixed set in code.
func (m *Metrics) Auth(result string) {
	if m == nil {
		return
	}
	m.ops.auth.WithLabelValues(m.reasons.value(result)).Inc()
}

// Verify counts one verification outcome: result passed, failed or refused,
// reason from a fixed set in code ("" for a pass).
func (m *Metrics) Verify(result, reason string) {
	if m == nil {
		return
	}
	m.ops.verify.WithLabelValues(m.reasons.value(result), m.reasons.value(reason)).Inc()
}

// VerifyAttack sets whether bot verification's attack mode is on.
func (m *Metrics) VerifyAttack(on bool) {
	if m == nil {
		return
	}
	v := 0.0
	if on {
		v = 1
	}
	m.ops.verifyAttack.WithLabelValues().Set(v)
}
