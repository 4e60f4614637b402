package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// helmBin is the real helm; the test fails (never skips) without it, saying
// how to get it (.ci/run builds it).
func helmBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("helm")
	if err != nil {
		t.Fatal("helm is needed for the chart's tests: go install helm.sh/helm/v3/cmd/helm@v3.21.4 (or put helm on PATH)")
	}
	return bin
}

// The chart refuses, with real helm, the values that would render a proxy
// that cannot work: a fleet without a Redis, and velocity or BungeeGuard
// forwarding across several pods without a shared secret. The working
// variants of the same values render.
func TestHelmRefusesBrokenValues(t *testing.T) {
	bin := helmBin(t)
	velocity := filepath.Join(t.TempDir(), "velocity.yaml")
	if err := os.WriteFile(velocity, []byte("replicaCount: 3\nconfig: |\n  [forwarding]\n  mode = \"velocity\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	guard := filepath.Join(t.TempDir(), "guard.yaml")
	if err := os.WriteFile(guard, []byte("replicaCount: 2\nservers:\n  lobby: |\n    domains = [\"lobby.example.com\"]\n    addresses = [\"lobby:25565\"]\n    proxy_mode = \"offline\"\n    forwarding_mode = \"bungeeguard\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // "" renders
	}{
		{"fleet without redis", []string{"--set", "fleet.enabled=true"}, "fleet.enabled=true needs a Redis"},
		{"fleet with the bundled redis", []string{"--set", "fleet.enabled=true", "--set", "fleet.bundledRedis.enabled=true"}, ""},
		{"fleet with a redis secret", []string{"--set", "fleet.enabled=true", "--set", "fleet.existingSecret=redis-url"}, ""},
		{"velocity on 3 pods, no secret", []string{"-f", velocity}, "replicaCount=3 needs forwarding.existingSecret"},
		{"velocity on 3 pods, a secret", []string{"-f", velocity, "--set", "forwarding.existingSecret=fw"}, ""},
		{"velocity on 1 pod", []string{"-f", velocity, "--set", "replicaCount=1"}, ""},
		{"bungeeguard server on 2 pods", []string{"-f", guard}, "replicaCount=2 needs forwarding.existingSecret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"template", "mc", chartDir, "-n", "minecraft", "--set", "admin.apiKey=golden-placeholder-not-a-real-key"}, tc.args...)
			out, err := exec.Command(bin, args...).CombinedOutput()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("helm template refused: %v\n%s", err, out)
			case tc.want != "" && err == nil:
				t.Fatalf("helm template rendered what it must refuse (%s)", tc.want)
			case tc.want != "" && !strings.Contains(string(out), tc.want):
				t.Fatalf("helm's error does not say %q:\n%s", tc.want, out)
			}
		})
	}
}
