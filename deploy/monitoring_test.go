package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

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
