package forwarding

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mode
	}{
		{"none", ModeNone},
		{"velocity", ModeVelocity},
		{"modern", ModeVelocity},
		{"bungee_cord", ModeBungeeCord},
		{"bungeecord", ModeBungeeCord},
		{"legacy", ModeBungeeCord},
		{"bungee_guard", ModeBungeeGuard},
		{"bungeeguard", ModeBungeeGuard},
		{" Velocity ", ModeVelocity},
		{"BUNGEE_GUARD", ModeBungeeGuard},
	} {
		got, err := ParseMode(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "bungee-cord", "velocity2", "off", "bungee guard"} {
		_, err := ParseMode(bad)
		if err == nil {
			t.Errorf("ParseMode(%q) accepted", bad)
			continue
		}
		for _, name := range []string{"none", "velocity", "bungee_cord", "bungee_guard", "legacy", "modern"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("ParseMode(%q) error %q does not list %q", bad, err, name)
			}
		}
	}
}

func TestModeNamesAndFlags(t *testing.T) {
	for _, tc := range []struct {
		m                Mode
		name             string
		secret, rewrites bool
	}{
		{ModeNone, "none", false, false},
		{ModeVelocity, "velocity", true, false},
		{ModeBungeeCord, "bungee_cord", false, true},
		{ModeBungeeGuard, "bungee_guard", true, true},
	} {
		if tc.m.String() != tc.name || tc.m.NeedsSecret() != tc.secret || tc.m.RewritesHandshake() != tc.rewrites {
			t.Errorf("%v: String=%q NeedsSecret=%v RewritesHandshake=%v", tc.m, tc.m.String(), tc.m.NeedsSecret(), tc.m.RewritesHandshake())
		}
		b, err := tc.m.MarshalText()
		var back Mode
		if err != nil || back.UnmarshalText(b) != nil || back != tc.m {
			t.Errorf("%v: text round trip gave %v (%v)", tc.m, back, err)
		}
	}
	if _, err := Mode(9).MarshalText(); err == nil {
		t.Error("MarshalText of an invalid mode succeeded")
	}
	if got := Mode(9).String(); got != "Mode(9)" {
		t.Errorf("String of an invalid mode = %q", got)
	}
	if n := len(ModeNames()); n != 8 {
		t.Errorf("ModeNames has %d names, want 8", n)
	}
}

// The config decoder reaches ParseMode through UnmarshalText.
func TestModeFromTOML(t *testing.T) {
	var cfg struct {
		Forwarding struct {
			Mode Mode `toml:"mode"`
		} `toml:"forwarding"`
	}
	if err := toml.Unmarshal([]byte("[forwarding]\nmode = \"bungeeguard\"\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Forwarding.Mode != ModeBungeeGuard {
		t.Fatalf("mode = %v", cfg.Forwarding.Mode)
	}
	err := toml.Unmarshal([]byte("[forwarding]\nmode = \"bungee\"\n"), &cfg)
	if err == nil || !strings.Contains(err.Error(), "bungee_guard") {
		t.Fatalf("bad mode error = %v", err)
	}
}
