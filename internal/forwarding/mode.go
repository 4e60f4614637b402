package forwarding

import (
	"fmt"
	"strings"
)

// Mode is how the proxy forwards a player's identity to a backend, as set by
// [forwarding] mode and per-server forwarding_mode.
type Mode uint8

const (
	// ModeNone forwards nothing; the backend sees the proxy's address and offline UUIDs.
	ModeNone Mode = iota
	// ModeVelocity answers the backend's velocity:player_info request (modern forwarding).
	ModeVelocity
	// ModeBungeeCord writes the identity into the handshake's server address (legacy forwarding).
	ModeBungeeCord
	// ModeBungeeGuard is ModeBungeeCord plus the shared secret as a bungeeguard-token property.
	ModeBungeeGuard
)

// modeNames lists each mode's spellings, canonical first: the Rust Infrarust's
// snake_case names and serde aliases ("modern", "legacy"), plus the one-word
// spellings its documentation uses ("bungeecord", "bungeeguard").
var modeNames = [...][]string{
	ModeNone:        {"none"},
	ModeVelocity:    {"velocity", "modern"},
	ModeBungeeCord:  {"bungee_cord", "bungeecord", "legacy"},
	ModeBungeeGuard: {"bungee_guard", "bungeeguard"},
}

// ParseMode reads a mode from configuration text; case and surrounding spaces
// are ignored. An unknown name is an error listing every accepted one.
func ParseMode(s string) (Mode, error) {
	key := strings.ToLower(strings.TrimSpace(s))
	for m, names := range modeNames {
		for _, n := range names {
			if key == n {
				return Mode(m), nil
			}
		}
	}
	return ModeNone, fmt.Errorf("forwarding: unknown mode %q; use one of %s", s, strings.Join(ModeNames(), ", "))
}

// ModeNames is every spelling ParseMode accepts, for help texts and config docs.
func ModeNames() []string {
	var out []string
	for _, names := range modeNames {
		out = append(out, names...)
	}
	return out
}

// String is the canonical configuration name ("none", "velocity", "bungee_cord", "bungee_guard").
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m][0]
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// NeedsSecret reports whether the mode signs with the secret file, so a
// missing or empty secret can fail the start instead of forwarding unsigned.
func (m Mode) NeedsSecret() bool { return m == ModeVelocity || m == ModeBungeeGuard }

// RewritesHandshake reports whether the mode changes the handshake's server
// address (BungeeCord and BungeeGuard) rather than answering a plugin request.
func (m Mode) RewritesHandshake() bool { return m == ModeBungeeCord || m == ModeBungeeGuard }

// MarshalText writes the canonical name, so config round trips keep it readable.
func (m Mode) MarshalText() ([]byte, error) {
	if int(m) >= len(modeNames) {
		return nil, fmt.Errorf("forwarding: invalid mode %d", m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText parses with ParseMode, so TOML and JSON decoding accept the same names.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
