package config

import (
	"fmt"
	"strings"
)

// The vocabulary of the configuration lives here, so config imports nothing
// of ours: the packages that act on it (forward, forwarding, balance,
// health, ipfilter) name these types under their own names.

// ForwardingMode is how the proxy forwards a player's identity to a backend, as set by
// [forwarding] mode and per-server forwarding_mode.
type ForwardingMode uint8

const (
	// ForwardingNone forwards nothing; the backend sees the proxy's address and offline UUIDs.
	ForwardingNone ForwardingMode = iota
	// ForwardingVelocity answers the backend's velocity:player_info request (modern forwarding).
	ForwardingVelocity
	// ForwardingBungeeCord writes the identity into the handshake's server address (legacy forwarding).
	ForwardingBungeeCord
	// ForwardingBungeeGuard is ForwardingBungeeCord plus the shared secret as a bungeeguard-token property.
	ForwardingBungeeGuard
)

// forwardingModeNames lists each mode's spellings, canonical first: the Rust Infrarust's
// snake_case names and serde aliases ("modern", "legacy"), plus the one-word
// spellings its documentation uses ("bungeecord", "bungeeguard").
var forwardingModeNames = [...][]string{
	ForwardingNone:        {"none"},
	ForwardingVelocity:    {"velocity", "modern"},
	ForwardingBungeeCord:  {"bungee_cord", "bungeecord", "legacy"},
	ForwardingBungeeGuard: {"bungee_guard", "bungeeguard"},
}

// ParseForwardingMode reads a mode from configuration text; case and surrounding spaces
// are ignored. An unknown name is an error listing every accepted one.
func ParseForwardingMode(s string) (ForwardingMode, error) {
	key := strings.ToLower(strings.TrimSpace(s))
	for m, names := range forwardingModeNames {
		for _, n := range names {
			if key == n {
				return ForwardingMode(m), nil
			}
		}
	}
	return ForwardingNone, fmt.Errorf("forwarding: unknown mode %q; use one of %s", s, strings.Join(ForwardingModeNames(), ", "))
}

// ForwardingModeNames is every spelling ParseForwardingMode accepts, for help texts and config docs.
func ForwardingModeNames() []string {
	var out []string
	for _, names := range forwardingModeNames {
		out = append(out, names...)
	}
	return out
}

// String is the canonical configuration name ("none", "velocity", "bungee_cord", "bungee_guard").
func (m ForwardingMode) String() string {
	if int(m) < len(forwardingModeNames) {
		return forwardingModeNames[m][0]
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// NeedsSecret reports whether the mode signs with the secret file, so a
// missing or empty secret can fail the start instead of forwarding unsigned.
func (m ForwardingMode) NeedsSecret() bool {
	return m == ForwardingVelocity || m == ForwardingBungeeGuard
}

// RewritesHandshake reports whether the mode changes the handshake's server
// address (BungeeCord and BungeeGuard) rather than answering a plugin request.
func (m ForwardingMode) RewritesHandshake() bool {
	return m == ForwardingBungeeCord || m == ForwardingBungeeGuard
}

// MarshalText writes the canonical name, so config round trips keep it readable.
func (m ForwardingMode) MarshalText() ([]byte, error) {
	if int(m) >= len(forwardingModeNames) {
		return nil, fmt.Errorf("forwarding: invalid mode %d", m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText parses with ParseForwardingMode, so TOML and JSON decoding accept the same names.
func (m *ForwardingMode) UnmarshalText(b []byte) error {
	v, err := ParseForwardingMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
