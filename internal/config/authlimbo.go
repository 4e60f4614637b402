package config

import (
	"fmt"
	"net/url"
	"time"
)

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL (the default is https://api.mojang.com)", s)
	}
	return nil
}

// AuthLimbo is [auth_limbo]: the password login offline servers with the
// "auth" limbo handler ask of every player (docs/offline-networks.md).
type AuthLimbo struct {
	// Timeout is how long a player has to /login or /register before the kick.
	Timeout Duration `toml:"timeout"`
	// MaxAttempts is how many wrong passwords end the connection.
	MaxAttempts int `toml:"max_attempts"`
	// MaxAttemptsPerAccount is how many wrong passwords an account takes
	// within AttemptWindow, from any connection, address or proxy, before it
	// cools down: then each address that has not failed on it may try once
	// until the window ends.
	MaxAttemptsPerAccount int      `toml:"max_attempts_per_account"`
	AttemptWindow         Duration `toml:"attempt_window"`
	// MaxRegistrationsPerIP is how many accounts one address may register
	// within RegistrationWindow; 0 sets no limit.
	MaxRegistrationsPerIP int      `toml:"max_registrations_per_ip"`
	RegistrationWindow    Duration `toml:"registration_window"`
	// MinPasswordLength and MaxPasswordLength bound a new password, in characters.
	MinPasswordLength int `toml:"min_password_length"`
	MaxPasswordLength int `toml:"max_password_length"`
	// Remember lets a reconnect from the same address within it skip /login;
	// 0 asks for the password at every login.
	Remember Duration `toml:"remember"`
	// Argon2 is the hashing cost of new passwords.
	Argon2 Argon2 `toml:"argon2"`
	// Premium lets owners of paid accounts skip the password.
	Premium Premium `toml:"premium"`
}

// Premium is [auth_limbo.premium]: a name that belongs to a paid account must
// prove it (the encryption handshake and hasJoined, as client_only does) and
// then skips the limbo with its real UUID and skin.
type Premium struct {
	Enabled bool `toml:"enabled"`
	// API is the profile API asked whether a name is premium.
	API string `toml:"api"`
	// Cache is how long an answer of the API is kept.
	Cache Duration `toml:"cache"`
	// AllowCrackedRetry lets a client that failed the proof for a premium name
	// in as a cracked player (the password login) when it comes back from the
	// same address within cracked_retry_window.
	AllowCrackedRetry  bool     `toml:"allow_cracked_retry"`
	CrackedRetryWindow Duration `toml:"cracked_retry_window"`
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
		Timeout:               Duration(60 * time.Second),
		MaxAttempts:           5,
		MaxAttemptsPerAccount: 10,
		AttemptWindow:         Duration(15 * time.Minute),
		MaxRegistrationsPerIP: 3,
		RegistrationWindow:    Duration(time.Hour),
		MinPasswordLength:     8,
		MaxPasswordLength:     64,
		Remember:              Duration(12 * time.Hour),
		Argon2:                Argon2{MemoryKiB: 19 * 1024, Iterations: 2, Parallelism: 1},
		Premium:               Premium{API: "https://api.mojang.com", Cache: Duration(6 * time.Hour), CrackedRetryWindow: Duration(5 * time.Minute)},
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
	if a.MaxAttemptsPerAccount < 1 {
		r.check("auth_limbo.max_attempts_per_account", "must be at least 1")
	}
	if a.AttemptWindow < Duration(time.Second) {
		r.check("auth_limbo.attempt_window", "must be at least 1s")
	}
	if a.MaxRegistrationsPerIP < 0 {
		r.check("auth_limbo.max_registrations_per_ip", "must not be negative (0 sets no limit)")
	}
	if a.MaxRegistrationsPerIP > 0 && a.RegistrationWindow < Duration(time.Second) {
		r.check("auth_limbo.registration_window", "must be at least 1s")
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
	if pr := a.Premium; pr.Enabled {
		if err := checkHTTPURL(pr.API); err != nil {
			r.check("auth_limbo.premium.api", "%v", err)
		}
		if pr.Cache < 0 {
			r.check("auth_limbo.premium.cache", "must not be negative")
		}
		if pr.AllowCrackedRetry && pr.CrackedRetryWindow <= 0 {
			r.check("auth_limbo.premium.cracked_retry_window", "must be more than 0 with allow_cracked_retry")
		}
	}
	if g.MaxConcurrent < 0 {
		r.check("auth_limbo.argon2.max_concurrent", "must not be negative (0 means one per CPU)")
	}
}
