package config

import (
	"time"
)

// AuthLimbo is [auth_limbo]: the password login offline servers with the
// "auth" limbo handler ask of every player (docs/offline-networks.md).
type AuthLimbo struct {
	// Timeout is how long a player has to /login or /register before the kick.
	Timeout Duration `toml:"timeout"`
	// MaxAttempts is how many wrong passwords end the connection.
	MaxAttempts int `toml:"max_attempts"`
	// MinPasswordLength and MaxPasswordLength bound a new password, in characters.
	MinPasswordLength int `toml:"min_password_length"`
	MaxPasswordLength int `toml:"max_password_length"`
	// Remember lets a reconnect from the same address within it skip /login;
	// 0 asks for the password at every login.
	Remember Duration `toml:"remember"`
	// Argon2 is the hashing cost of new passwords.
	Argon2 Argon2 `toml:"argon2"`
}

// Argon2 is [auth_limbo.argon2]: argon2id's cost parameters.
type Argon2 struct {
	MemoryKiB   int `toml:"memory_kib"`
	Iterations  int `toml:"iterations"`
	Parallelism int `toml:"parallelism"`
	// MaxConcurrent bounds the hashes running at once (each fills memory_kib);
	// 0 means one per CPU.
	MaxConcurrent int `toml:"max_concurrent"`
}

// defaultAuthLimbo follows AuthMe and LimboAuth for the timings and OWASP's
// Password Storage Cheat Sheet for argon2id (m=19 MiB, t=2, p=1) and the
// minimum length (8, as NIST SP 800-63B).
func defaultAuthLimbo() AuthLimbo {
	return AuthLimbo{
		Timeout:           Duration(60 * time.Second),
		MaxAttempts:       5,
		MinPasswordLength: 8,
		MaxPasswordLength: 64,
		Remember:          Duration(12 * time.Hour),
		Argon2:            Argon2{MemoryKiB: 19 * 1024, Iterations: 2, Parallelism: 1},
	}
}

// UsesAuthLimbo reports whether any server asks for the password login.
func (c *Config) UsesAuthLimbo() bool {
	for _, s := range c.Servers {
		if s.HasLimbo(LimboAuth) {
			return true
		}
	}
	return false
}

func (c *Config) validateAuthLimbo(r *report) {
	a := c.AuthLimbo
	if a.Timeout < Duration(5*time.Second) {
		r.check("auth_limbo.timeout", "must be at least 5s: players need time to type a password")
	}
	if a.MaxAttempts < 1 {
		r.check("auth_limbo.max_attempts", "must be at least 1")
	}
	if a.MinPasswordLength < 1 {
		r.check("auth_limbo.min_password_length", "must be at least 1")
	}
	// A chat line is at most 256 characters: "/register " and the password twice.
	if a.MaxPasswordLength < a.MinPasswordLength || a.MaxPasswordLength > 120 {
		r.check("auth_limbo.max_password_length", "must be between min_password_length and 120 (a chat line holds /register and the password twice)")
	}
	if a.Remember < 0 {
		r.check("auth_limbo.remember", "must not be negative (0 asks for the password at every login)")
	}
	g := a.Argon2
	switch {
	case g.Parallelism < 1 || g.Parallelism > 255:
		r.check("auth_limbo.argon2.parallelism", "must be between 1 and 255")
	case g.Iterations < 1:
		r.check("auth_limbo.argon2.iterations", "must be at least 1")
	case g.MemoryKiB < 8*g.Parallelism || g.MemoryKiB > 4<<20:
		r.check("auth_limbo.argon2.memory_kib", "must be between 8 × parallelism and 4194304 (4 GiB)")
	}
	if g.MaxConcurrent < 0 {
		r.check("auth_limbo.argon2.max_concurrent", "must not be negative (0 means one per CPU)")
	}
}
