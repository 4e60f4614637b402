package config

import (
	"net/url"
	"slices"
	"strings"
	"time"
)

// Webhook is one [[webhooks]] entry: an HTTP endpoint told about player events, and
// for decide = true asked what to do.
type Webhook struct {
	// URL receives a POST with the event as JSON.
	URL string `toml:"url"`
	// Events are the event names it receives ("pre_login", "login", ...).
	Events []string `toml:"events"`
	// Secret signs each body with HMAC-SHA256 (X-Infrarust-Signature-256); "" sends none.
	Secret string `toml:"secret"`
	// Timeout bounds one request; a deciding webhook holds the login at most this long.
	Timeout Duration `toml:"timeout"`
	// Decide makes the login wait for the answer, which may deny or redirect.
	Decide bool `toml:"decide"`
	// OnError is what a deciding webhook's failure means: "allow" or "deny".
	OnError string `toml:"on_error"`
	// Attempts bounds the deliveries of one event to a notifying webhook (first try included).
	Attempts int `toml:"attempts"`
	// QueueSize bounds the events waiting for a notifying webhook; past it new ones are dropped.
	QueueSize int `toml:"queue_size"`
}

// Webhook defaults, applied to the keys an entry leaves out (or sets to 0 / "").
const (
	DefaultWebhookTimeout   = 2 * time.Second
	DefaultWebhookAttempts  = 3
	DefaultWebhookQueueSize = 1024
	// MaxWebhookQueueSize keeps a typo from reserving gigabytes.
	MaxWebhookQueueSize = 1 << 20
)

// WebhookEvents are the event names [[webhooks]] events may list, in firing order.
var WebhookEvents = []string{
	"pre_login", "game_profile_request", "login", "post_login", "choose_initial_server",
	"server_pre_connect", "kicked_from_server", "server_connected", "disconnect",
}

// DecidableEvents are the events whose answer can change what happens to a player;
// only these go to a decide = true webhook.
var DecidableEvents = []string{"pre_login", "login", "choose_initial_server", "server_pre_connect", "kicked_from_server"}

// WithDefaults fills the keys an entry left out, so the dispatcher never sees a zero
// timeout or an unbounded queue.
func (w Webhook) WithDefaults() Webhook {
	if w.Timeout <= 0 {
		w.Timeout = Duration(DefaultWebhookTimeout)
	}
	if w.OnError == "" {
		w.OnError = "allow"
	}
	if w.Attempts <= 0 {
		w.Attempts = DefaultWebhookAttempts
	}
	if w.QueueSize <= 0 {
		w.QueueSize = DefaultWebhookQueueSize
	}
	return w
}

// Telemetry is [telemetry]: OpenTelemetry traces of player sessions, exported over
// OTLP/HTTP. Off by default.
type Telemetry struct {
	Enabled bool `toml:"enabled"`
	// Endpoint is the collector's OTLP/HTTP URL; "/v1/traces" is added when it has no path.
	Endpoint string `toml:"endpoint"`
	// ServiceName is the service.name resource attribute.
	ServiceName string `toml:"service_name"`
	// SampleRatio is the share of sessions traced, 0 to 1.
	SampleRatio float64 `toml:"sample_ratio"`
	// Headers are sent with every export (a vendor's API key, for example).
	Headers map[string]string `toml:"headers"`
	// Timeout bounds one export request.
	Timeout Duration `toml:"timeout"`
}

// defaultTelemetry is [telemetry] when the file says nothing: off, pointed at a
// collector on this machine so `enabled = true` alone works with a local agent.
func defaultTelemetry() Telemetry {
	return Telemetry{
		Endpoint:    "http://localhost:4318",
		ServiceName: "infrarust",
		SampleRatio: 1,
		Timeout:     Duration(10 * time.Second),
	}
}

// validateEvents checks [[webhooks]] and [telemetry], and fills each webhook's defaults.
func (c *Config) validateEvents(r *report) {
	for i := range c.Webhooks {
		p := indexPath("webhooks", i)
		w := c.Webhooks[i]
		if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			r.check(joinPath(p, "url"), "%q is not an http(s) URL (for example url = \"https://hooks.example.com/infrarust\")", w.URL)
		}
		if len(w.Events) == 0 {
			r.check(joinPath(p, "events"), "list at least one event (one of %s)", strings.Join(WebhookEvents, ", "))
		}
		for j, e := range w.Events {
			switch {
			case !slices.Contains(WebhookEvents, e):
				r.check(indexPath(joinPath(p, "events"), j), "%q is not an event; use one of %s", e, strings.Join(WebhookEvents, ", "))
			case w.Decide && !slices.Contains(DecidableEvents, e):
				r.check(indexPath(joinPath(p, "events"), j), "%q cannot be decided (decide = true takes %s); list it in a second [[webhooks]] entry without decide", e, strings.Join(DecidableEvents, ", "))
			}
		}
		switch w.OnError {
		case "", "allow", "deny":
		default:
			r.check(joinPath(p, "on_error"), "%q is not one of allow, deny", w.OnError)
		}
		if w.Timeout < 0 {
			r.check(joinPath(p, "timeout"), "must not be negative")
		}
		if w.Attempts < 0 {
			r.check(joinPath(p, "attempts"), "must be 1 or more (0 means the default, %d)", DefaultWebhookAttempts)
		}
		if w.QueueSize < 0 || w.QueueSize > MaxWebhookQueueSize {
			r.check(joinPath(p, "queue_size"), "must be between 1 and %d (0 means the default, %d)", MaxWebhookQueueSize, DefaultWebhookQueueSize)
		}
		c.Webhooks[i] = w.WithDefaults()
	}
	t := c.Telemetry
	if !t.Enabled {
		return
	}
	if u, err := url.Parse(t.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		r.check("telemetry.endpoint", "%q is not an http(s) URL (an OTLP/HTTP collector, for example \"http://localhost:4318\")", t.Endpoint)
	}
	if t.SampleRatio < 0 || t.SampleRatio > 1 {
		r.check("telemetry.sample_ratio", "must be between 0 and 1")
	}
	if t.Timeout <= 0 {
		r.check("telemetry.timeout", "must be more than 0")
	}
	if strings.TrimSpace(t.ServiceName) == "" {
		r.check("telemetry.service_name", "must not be empty")
	}
}

// Events is [events]: limits of the plugins compiled into the proxy.
type Events struct {
	// TransportFilterTimeout bounds one transport filter's decision on a new
	// connection; past it the connection is rejected.
	TransportFilterTimeout Duration `toml:"transport_filter_timeout"`
}
