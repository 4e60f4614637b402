package config

import (
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Fleet is [fleet]: several proxies behind one address share drains, bans,
// players and server wakes through one Redis. With redis unset (the default)
// the proxy is on its own and nothing about it changes.
type Fleet struct {
	// Redis is where the fleet meets: "redis://[user:password@]host:port[/db]",
	// "rediss://..." for TLS, or "env:VAR" / "file:PATH" to keep the URL (and its
	// password) out of this file. A relative PATH is relative to infrarust.toml.
	Redis string `toml:"redis"`
	// ID names this proxy in the fleet; "" means the host name. Two proxies with
	// one id would overwrite each other's players.
	ID string `toml:"id"`
	// KeyPrefix starts every Redis key and channel of the fleet, so several fleets
	// (or other programs) can share one Redis.
	KeyPrefix string `toml:"key_prefix"`
	// HeartbeatInterval is how often this proxy publishes its players and reads
	// the fleet's.
	HeartbeatInterval Duration `toml:"heartbeat_interval"`
	// HeartbeatTimeout is how long after its last heartbeat a proxy counts as
	// gone and its players disappear from the fleet.
	HeartbeatTimeout Duration `toml:"heartbeat_timeout"`
	// WakeLockTTL bounds how long a proxy that died while starting a sleeping
	// server can hold up the next start; the holder renews it while it starts.
	WakeLockTTL Duration `toml:"wake_lock_ttl"`
	// Timeout bounds one Redis call. The login path waits on Redis only for a
	// duplicate_login = "refuse" claim (fleet-wide, at most this long; the local
	// rule when Redis does not answer); operator changes and background work do.
	Timeout Duration `toml:"timeout"`
	// SecretFile holds the fleet's secret, shared by every proxy of the fleet:
	// every message and shared entry is signed with it, and one without a valid
	// signature is dropped. A relative path is relative to infrarust.toml.
	SecretFile string `toml:"secret_file"`
	// Secret is the secret itself, from INFRARUST_FLEET_SECRET[_FILE] (never
	// read from the file); it replaces SecretFile.
	Secret string `toml:"-"`
}

// FleetSecretEnv is the fleet's secret (or, as _FILE, a file holding it).
const FleetSecretEnv = "INFRARUST_FLEET_SECRET"

// MinFleetSecretLen is the shortest fleet secret accepted: it signs
// everything a proxy trusts from Redis.
const MinFleetSecretLen = 16

// Enabled reports whether the proxy is part of a fleet.
func (f Fleet) Enabled() bool { return strings.TrimSpace(f.Redis) != "" }

// defaultFleet is [fleet] when the file leaves a key out.
func defaultFleet() Fleet {
	return Fleet{
		KeyPrefix:         "infrarust:",
		HeartbeatInterval: Duration(time.Second),
		HeartbeatTimeout:  Duration(10 * time.Second),
		WakeLockTTL:       Duration(15 * time.Second),
		Timeout:           Duration(2 * time.Second),
	}
}

// validateFleet checks [fleet] and makes a relative "file:" path absolute, so
// serve reads the same file whatever folder it was started from.
func (c *Config) validateFleet(r *report) {
	f := &c.Fleet
	if !f.Enabled() {
		return
	}
	switch v := strings.TrimSpace(f.Redis); {
	case strings.HasPrefix(v, "env:"):
		if strings.TrimSpace(strings.TrimPrefix(v, "env:")) == "" {
			r.check("fleet.redis", `"env:" needs the name of the environment variable that holds the URL, e.g. "env:INFRARUST_REDIS_URL"`)
		}
	case strings.HasPrefix(v, "file:"):
		path := strings.TrimSpace(strings.TrimPrefix(v, "file:"))
		if path == "" {
			r.check("fleet.redis", `"file:" needs the path of a file that holds the URL, e.g. "file:/run/secrets/redis-url"`)
			break
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(configDir(c.Source), path)
		}
		f.Redis = "file:" + path
	default:
		if err := CheckRedisURL(v); err != nil {
			r.check("fleet.redis", "%v", err)
		}
	}
	if strings.ContainsAny(f.ID, " \t\r\n") || len(f.ID) > 64 {
		r.check("fleet.id", "%q: use at most 64 characters without spaces (the default is the host name)", f.ID)
	}
	if f.KeyPrefix == "" {
		r.check("fleet.key_prefix", `must not be empty (the default is "infrarust:")`)
	}
	if f.HeartbeatInterval <= 0 {
		r.check("fleet.heartbeat_interval", "must be more than 0")
	}
	if f.HeartbeatTimeout < 2*f.HeartbeatInterval {
		r.check("fleet.heartbeat_timeout", "%s is less than two heartbeats (heartbeat_interval = %s): one late heartbeat would make a live proxy's players vanish; use at least %s",
			f.HeartbeatTimeout, f.HeartbeatInterval, 2*f.HeartbeatInterval)
	}
	if f.WakeLockTTL < Duration(time.Second) {
		r.check("fleet.wake_lock_ttl", "must be at least 1s (it is renewed every third of it while a server starts)")
	}
	if f.Timeout <= 0 {
		r.check("fleet.timeout", "must be more than 0")
	}
	if f.SecretFile != "" && !filepath.IsAbs(f.SecretFile) {
		f.SecretFile = filepath.Join(configDir(c.Source), f.SecretFile)
	}
}

// CheckRedisURL reports whether v is a Redis URL the fleet can dial, in words an
// operator can act on; serve checks a URL read from "env:" or "file:" with it too.
func CheckRedisURL(v string) error {
	u, err := url.Parse(v)
	if err != nil {
		return errRedisURL(v, err.Error())
	}
	switch u.Scheme {
	case "redis", "rediss":
	default:
		return errRedisURL(v, "the scheme must be redis:// or rediss:// (TLS)")
	}
	if u.Host == "" {
		return errRedisURL(v, "it has no host")
	}
	return nil
}

func errRedisURL(v, why string) error {
	return &redisURLError{url: RedactURL(v), why: why}
}

type redisURLError struct{ url, why string }

func (e *redisURLError) Error() string {
	return "Redis URL " + e.url + ": " + e.why + ` (write e.g. "redis://:password@10.0.0.5:6379/0", or "env:VAR" / "file:PATH")`
}

// RedactURL hides a URL's password, so logs, errors and the admin API never show it.
func RedactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		if err != nil && strings.Contains(v, "@") {
			return "<unparsable URL>"
		}
		return v
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
