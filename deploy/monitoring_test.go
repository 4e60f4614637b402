package deploy

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/infrarust-go/infrarust/internal/metrics"
)

// promtool runs Prometheus's own checker; the test fails (never skips) where it
// is missing, saying how to install it.
func promtool(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is needed for the alert rules' tests: apt-get install --no-install-recommends prometheus (Debian), or put Prometheus's promtool on PATH")
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The alert rules load, and each alert fires on the fixtures that should fire
// it and not on the others (deploy/prometheus/alerts_test.yml).
func TestAlertRules(t *testing.T) {
	out := promtool(t, "check", "rules", "prometheus/alerts.yml")
	if !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool check rules:\n%s", out)
	}
	out = promtool(t, "test", "rules", "prometheus/alerts_test.yml")
	if !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool test rules:\n%s", out)
	}
	// Every alert has a test.
	rules, _ := os.ReadFile("prometheus/alerts.yml")
	tests, _ := os.ReadFile("prometheus/alerts_test.yml")
	for _, m := range regexp.MustCompile(`(?m)^\s+- alert: (\w+)`).FindAllStringSubmatch(string(rules), -1) {
		if !strings.Contains(string(tests), "alertname: "+m[1]) {
			t.Errorf("alert %s has no test in alerts_test.yml", m[1])
		}
	}
}

// Every infrarust_* series the dashboard, the alert rules and the chart's
// PrometheusRule name is one the proxy exports (a renamed metric would leave
// an empty panel or an alert that can never fire).
func TestMonitoringNamesExportedSeries(t *testing.T) {
	m := metrics.New()
	m.WatchFleet(func() metrics.FleetSample { return metrics.FleetSample{} }) // only with [fleet]
	exported := m.Names()
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	raw, err := os.ReadFile("grafana/infrarust.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &dash); err != nil || len(dash.Panels) == 0 {
		t.Fatalf("grafana/infrarust.json: %v (%d panels)", err, len(dash.Panels))
	}
	sources := map[string]string{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			sources["dashboard panel "+p.Title] += q.Expr + "\n"
		}
	}
	for _, f := range []string{"prometheus/alerts.yml", filepath.Join(chartDir, "templates", "prometheusrule.yaml")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[f] = string(b)
	}
	name := regexp.MustCompile(`\binfrarust_[a-z0-9_]+`)
	for where, text := range sources {
		for _, n := range name.FindAllString(text, -1) {
			base := n
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if s, ok := strings.CutSuffix(n, suffix); ok && slices.Contains(exported, s) {
					base = s
				}
			}
			if !slices.Contains(exported, base) {
				t.Errorf("%s names %s, which the proxy does not export", where, n)
			}
		}
	}
}

// A fresh proxy exports the failure series its alerts read at 0, so each
// alert fires on the first failure. The promtool test below is built from a
// fresh proxy's scrape: each input series starts with its value there ("_"
// when the scrape lacks it, as a counter born at its first increment), then
// the failures come; the alert's own expression must then select it.
func TestAlertsFireOnTheFirstFailure(t *testing.T) {
	m := metrics.New()
	// What serve does at start (proxy.Apply, app.hooksConfigured) for a
	// configuration with a managed server, a compiled handler and webhooks.
	m.ServersConfigured(map[string][]string{"survival": {"10.0.0.1:25565"}}, []string{"survival"})
	m.HooksConfigured(metrics.HookSeries{
		Handlers: [][2]string{{"anti-vpn", "pre_login"}},
		Webhooks: []metrics.WebhookSeries{{URL: "https://hooks.example.com/feed", Events: []string{"post_login"}, Notifying: true}},
	})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	scrape := rec.Body.String()
	rules, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(rules, &doc); err != nil {
		t.Fatal(err)
	}
	exprOf := map[string]string{}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			exprOf[r.Alert] = r.Expr
		}
	}
	cases := []struct {
		alert, series string
		failures      int
	}{
		{"InfrarustWakeFailing", `infrarust_server_wake_failures_total{server="survival"}`, 1},
		{"InfrarustFallbackExhausted", `infrarust_fallback_exhausted_total{server="survival"}`, 1},
		{"InfrarustHookFailing", `infrarust_hook_failures_total{event="pre_login",handler="anti-vpn",reason="timeout"}`, 1},
		{"InfrarustWebhookFailing", `infrarust_webhook_failures_total{event="post_login",webhook="https://hooks.example.com/feed"}`, 1},
		{"InfrarustWebhookDropping", `infrarust_webhook_dropped_total{webhook="https://hooks.example.com/feed"}`, 1},
		{"InfrarustBackendFlapping", `infrarust_backend_health_transitions_total{address="10.0.0.1:25565",server="survival",state="unhealthy"}`, 3},
	}
	var b strings.Builder
	b.WriteString("rule_files: []\nevaluation_interval: 1m\ntests:\n")
	for _, c := range cases {
		expr, ok := exprOf[c.alert]
		if !ok {
			t.Fatalf("alerts.yml has no %s", c.alert)
		}
		start := "_"
		for _, line := range strings.Split(scrape, "\n") {
			if v, ok := strings.CutPrefix(line, c.series+" "); ok {
				start = v
			}
		}
		if start == "_" {
			t.Errorf("a fresh proxy's scrape lacks %s: %s cannot see the first failure", c.series, c.alert)
		}
		fmt.Fprintf(&b, "  - interval: 1m\n    input_series:\n      - series: '%s'\n        values: '%s %s %d %d %d'\n", c.series, start, start, c.failures, c.failures, c.failures)
		fmt.Fprintf(&b, "    promql_expr_test:\n      - expr: 'count(%s)'\n        eval_time: 3m\n        exp_samples:\n          - labels: '{}'\n            value: 1\n", strings.ReplaceAll(expr, "'", "''"))
	}
	file := filepath.Join(t.TempDir(), "first_failure_test.yml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := promtool(t, "test", "rules", file); !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool:\n%s", out)
	}
}
