package events

// Bot verification ([verify], docs/offline-networks.md).
const (
	// PlayerVerify is published when a player's bot verification ends.
	PlayerVerify Type = "player.verify"
	// VerifyAttackMode is published when attack mode turns on or off.
	VerifyAttackMode Type = "verify.attack_mode"
)

// Verify is the Data of a player.verify event.
type Verify struct {
	Username string `json:"username"`
	Server   string `json:"server"`
	Passed   bool   `json:"passed"`
	// Reason is why a check failed: timeout, not_falling, landing,
	// no_teleport_confirm, no_settings, no_brand, flood or protocol ("" when passed).
	Reason string `json:"reason,omitempty"`
}

// AttackMode is the Data of a verify.attack_mode event.
type AttackMode struct {
	On bool `json:"on"`
}
