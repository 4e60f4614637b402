package config

import (
	"testing"
	"time"
)

// The starter file (`config init`, and the embedded default when no file exists)
// probes healthy and unknown addresses, so a new operator's `backends list` shows
// what is really there; the built-in defaults stay as documented.
func TestStarterConfigProbesAddresses(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	starter, err := Parse([]byte(DefaultTOML), "default.toml")
	if err != nil {
		t.Fatal(err)
	}
	ah := starter.ActiveHealth
	if !ah.Enabled || !ah.ProbeHealthy || ah.Interval.D() <= 0 || ah.Interval.D() > 30*time.Second {
		t.Errorf("starter [active_health] = %+v, want probing of healthy addresses at most every 30s", ah)
	}
	def := Default().ActiveHealth
	if def.ProbeHealthy || def.Interval.D() != 30*time.Second {
		t.Errorf("built-in default [active_health] = %+v, want probe_healthy off at 30s", def)
	}
}
