package config

import (
	"slices"
	"time"
)

// VerifyMode is [verify] mode.
type VerifyMode string

// The verification modes.
const (
	// VerifyAlways verifies every first-time player.
	VerifyAlways VerifyMode = "always"
	// VerifyAttack verifies first-time players only while logins come faster
	// than attack_threshold (and for calm_period after).
	VerifyAttack VerifyMode = "attack"
	// VerifyOff verifies nobody.
	VerifyOff VerifyMode = "off"
)

// Verify is [verify]: the bot verification of servers with the "verify" limbo
// handler (docs/offline-networks.md).
type Verify struct {
	Mode VerifyMode `toml:"mode"`
	// TTL is how long a pass lets the same name from the same address in
	// without another check.
	TTL Duration `toml:"ttl"`
	// Timeout is how long a player has to fall onto the platform.
	Timeout Duration `toml:"timeout"`
	// AttackThreshold is the logins per second (to "verify" servers) above
	// which attack mode turns on.
	AttackThreshold int `toml:"attack_threshold"`
	// CalmPeriod is how long logins must stay under the threshold before
	// attack mode turns off.
	CalmPeriod Duration `toml:"calm_period"`
	// MaxConcurrent bounds the verifications running at once; logins past it
	// wait for one (10 s at most), then are refused with [messages]
	// verify_busy. A waiting check costs about 27 KiB (docs/benchmarks.md).
	MaxConcurrent int `toml:"max_concurrent"`
	// FailPenalty is how many login tokens of [rate_limit] a failed check
	// costs its address.
	FailPenalty int `toml:"fail_penalty"`
}

func defaultVerify() Verify {
	return Verify{
		Mode: VerifyAttack, TTL: Duration(24 * time.Hour), Timeout: Duration(15 * time.Second),
		AttackThreshold: 30, CalmPeriod: Duration(2 * time.Minute), MaxConcurrent: 10000, FailPenalty: 3,
	}
}

func (c *Config) validateVerify(r *report) {
	v := c.Verify
	if !slices.Contains([]VerifyMode{VerifyAlways, VerifyAttack, VerifyOff}, v.Mode) {
		r.check("verify.mode", "%s", notOneOf(string(v.Mode), []string{"always", "attack", "off"}))
	}
	if v.TTL < 0 {
		r.check("verify.ttl", "must not be negative (0 checks at every login)")
	}
	if v.Timeout < Duration(3*time.Second) {
		r.check("verify.timeout", "must be at least 3s: a real client needs a moment to load the world and fall")
	}
	if v.AttackThreshold < 1 {
		r.check("verify.attack_threshold", "must be at least 1 login per second")
	}
	if v.CalmPeriod < Duration(time.Second) {
		r.check("verify.calm_period", "must be at least 1s")
	}
	if v.MaxConcurrent < 1 {
		r.check("verify.max_concurrent", "must be at least 1")
	}
	if v.FailPenalty < 0 {
		r.check("verify.fail_penalty", "must not be negative")
	}
}
