package forwarding

import "github.com/infrarust-go/infrarust/internal/config"

// Mode is how the proxy forwards a player's identity to a backend ([forwarding]
// mode, per-server forwarding_mode); the configuration owns the vocabulary.
type Mode = config.ForwardingMode

// The modes.
const (
	ModeNone        = config.ForwardingNone
	ModeVelocity    = config.ForwardingVelocity
	ModeBungeeCord  = config.ForwardingBungeeCord
	ModeBungeeGuard = config.ForwardingBungeeGuard
)

// ParseMode reads a mode from configuration text (config.ParseForwardingMode).
func ParseMode(s string) (Mode, error) { return config.ParseForwardingMode(s) }

// ModeNames is every spelling ParseMode accepts.
func ModeNames() []string { return config.ForwardingModeNames() }
