package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/events"
)

// The series an operator alerts on: reloads, moves, the limbo, maintenance and
// queues, wakes, and the hooks and webhooks (whose URLs lose what may be secret).
func TestOpsSeries(t *testing.T) {
	m := New()
	if out := scrape(t, m); !strings.Contains(out, "infrarust_config_last_reload_successful 1") ||
		!strings.Contains(out, "infrarust_config_last_reload_success_timestamp_seconds ") {
		t.Fatalf("a started proxy reports no successful load:\n%s", out)
	}
	m.ConfigReloaded(false, time.Now())
	m.Move("fallback", "moved")
	m.Move("command", "refused")
	m.Limbo("queue", true, 0)
	m.Limbo("queue", true, 0)
	m.Limbo("queue", false, 90*time.Second)
	m.HandlerFailed("anti-vpn", "pre_login", "timeout")
	m.WebhookFailed("https://user:pw@hooks.example.com/in?token=s3cret", "post_login")
	m.WebhookDropped("https://hooks.example.com/in?token=s3cret")
	m.WatchServerFlags(func() ServerFlags {
		return ServerFlags{Servers: []string{"lobby", "survival"}, Maintenance: []string{"survival"}, Queues: map[string]int{"survival": 3}}
	})
	m.WatchWebhooks(func() map[string]WebhookCounts {
		return map[string]WebhookCounts{
			"https://hooks.example.com/events?token=s3cret": {Delivered: 40, Failed: 1, Retried: 3, Queued: 2},
			"https://hooks.example.com/events?token=other":  {Delivered: 1}, // the same label: summed, not a duplicate series
		}
	})
	t0 := time.Unix(1_700_000_000, 0)
	m.ops.serverStateChanged(events.ServerState{Server: "survival", From: "sleeping", To: "starting"}, t0)
	m.ops.serverStateChanged(events.ServerState{Server: "survival", From: "starting", To: "online"}, t0.Add(40*time.Second))
	m.ops.serverStateChanged(events.ServerState{Server: "creative", From: "sleeping", To: "starting"}, t0)
	m.ops.serverStateChanged(events.ServerState{Server: "creative", From: "starting", To: "crashed"}, t0.Add(5*time.Second))

	out := scrape(t, m)
	for _, want := range []string{
		"infrarust_config_last_reload_successful 0",
		`infrarust_moves_total{outcome="moved",reason="fallback"} 1`,
		`infrarust_moves_total{outcome="refused",reason="command"} 1`,
		`infrarust_limbo_players{handler="queue"} 1`,
		`infrarust_limbo_players{handler="wake"} 0`,
		`infrarust_limbo_wait_seconds_bucket{handler="queue",le="128"} 1`,
		`infrarust_hook_failures_total{event="pre_login",handler="anti-vpn",reason="timeout"} 1`,
		`infrarust_webhook_failures_total{event="post_login",webhook="https://hooks.example.com/in"} 1`,
		`infrarust_webhook_dropped_total{webhook="https://hooks.example.com/in"} 1`,
		`infrarust_server_maintenance{server="lobby"} 0`,
		`infrarust_server_maintenance{server="survival"} 1`,
		`infrarust_queue_length{server="survival"} 3`,
		`infrarust_server_wake_duration_seconds_bucket{server="survival",le="64"} 1`,
		`infrarust_server_wake_duration_seconds_bucket{server="survival",le="32"} 0`,
		`infrarust_server_wake_failures_total{server="creative"} 1`,
		`infrarust_webhook_notifications_total{result="delivered",webhook="https://hooks.example.com/events"} 41`,
		`infrarust_webhook_notifications_total{result="failed",webhook="https://hooks.example.com/events"} 1`,
		`infrarust_webhook_queue_length{webhook="https://hooks.example.com/events"} 2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "user:pw") {
		t.Error("a webhook's secret reached the metrics")
	}
}
