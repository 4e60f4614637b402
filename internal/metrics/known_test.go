package metrics

import (
	"fmt"
	"strings"
	"testing"
)

// The failure series the alerts read exist at 0 for every configured label
// set before the first failure, so increase() sees that failure.
func TestFailureSeriesStartAtZero(t *testing.T) {
	m := New()
	m.ServersConfigured(map[string][]string{"lobby": {"10.0.0.1:25565"}, "survival": nil}, []string{"survival"})
	m.HooksConfigured(HookSeries{
		Handlers: [][2]string{{"anti-vpn", "pre_login"}},
		Webhooks: []WebhookSeries{
			{URL: "https://hooks.example.com/deny?token=s3cret", Events: []string{"pre_login"}},
			{URL: "https://hooks.example.com/feed", Events: []string{"post_login", "disconnect"}, Notifying: true},
		},
	})
	out := scrape(t, m)
	for _, want := range []string{
		`infrarust_fallback_exhausted_total{server="lobby"} 0`,
		`infrarust_fallback_exhausted_total{server="survival"} 0`,
		`infrarust_server_wake_failures_total{server="survival"} 0`,
		`infrarust_backend_health_transitions_total{address="10.0.0.1:25565",server="lobby",state="unhealthy"} 0`,
		`infrarust_hook_failures_total{event="pre_login",handler="anti-vpn",reason="panic"} 0`,
		`infrarust_hook_failures_total{event="pre_login",handler="anti-vpn",reason="timeout"} 0`,
		`infrarust_webhook_failures_total{event="pre_login",webhook="https://hooks.example.com/deny"} 0`,
		`infrarust_webhook_failures_total{event="disconnect",webhook="https://hooks.example.com/feed"} 0`,
		`infrarust_webhook_dropped_total{webhook="https://hooks.example.com/feed"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(out, `infrarust_server_wake_failures_total{server="lobby"}`) {
		t.Error("a server without a manager has a wake failure series")
	}
	if strings.Contains(out, `webhook_dropped_total{webhook="https://hooks.example.com/deny"}`) {
		t.Error("a deciding webhook has a dropped series")
	}
	m.ForgetServer("survival")
	if out := scrape(t, m); strings.Contains(out, `server="survival"`) {
		t.Error("a removed server's series stay")
	}
}

// No label takes free text: reasons, results and outcomes that are not code
// constants become "other", and the distinct values are bounded.
func TestReasonLabelsBounded(t *testing.T) {
	m := New()
	free := []string{"dial tcp 10.0.0.1:25565: connection refused", "Steve's \"reason\"", "UPPER_CASE", strings.Repeat("x", 200), "ümlaut"}
	for _, r := range free {
		m.ConnRejected(r)
		m.Move(r, r)
		m.Auth(r)
		m.Verify("failed", r)
		m.MoveRefused("lobby", r)
		m.HandlerFailed("h", r, r)
		m.WebhookFailed("https://x.example/", r)
	}
	for i := range 2000 {
		m.ConnRejected(fmt.Sprintf("reason_%d", i))
	}
	out := scrape(t, m)
	for _, r := range free {
		if strings.Contains(out, r) {
			t.Errorf("free text %q became a label value", r)
		}
	}
	if !strings.Contains(out, `infrarust_connections_rejected_total{reason="other"}`) {
		t.Error("no other series")
	}
	n := strings.Count(out, "infrarust_connections_rejected_total{")
	if n > 257 {
		t.Errorf("%d connections_rejected series from 2000 distinct reasons; the guard allows 256 and other", n)
	}
	m.ConnRejected("rate_limit")
	if out := scrape(t, m); !strings.Contains(out, `infrarust_connections_rejected_total{reason="reason_0"} 1`) {
		t.Error("a code constant seen first lost its series")
	}
}
