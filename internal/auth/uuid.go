package auth

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
)

// UUID is a player's 128-bit id in wire order; it converts to and from the
// [16]byte the mc package uses.
type UUID [16]byte

// ErrBadUUID marks text that is not a UUID in either the dashed or undashed form.
var ErrBadUUID = errors.New("auth: not a UUID")

// ParseUUID reads the dashed (8-4-4-4-12) or undashed (32 hex digits) form,
// because Mojang answers undashed while players and configs write dashes.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	var digits [32]byte
	switch len(s) {
	case 32:
		copy(digits[:], s)
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return UUID{}, fmt.Errorf("%w: %q has its dashes in the wrong places", ErrBadUUID, s)
		}
		n := 0
		for i := 0; i < len(s); i++ {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				continue
			}
			digits[n] = s[i]
			n++
		}
	default:
		return UUID{}, fmt.Errorf("%w: %q is %d characters, want 32 or 36", ErrBadUUID, s, len(s))
	}
	if _, err := hex.Decode(u[:], digits[:]); err != nil {
		return UUID{}, fmt.Errorf("%w: %q: %v", ErrBadUUID, s, err)
	}
	return u, nil
}

// String is the dashed lowercase form, the one logs, bans and the admin API show.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// Undashed is the 32-digit form Mojang and BungeeCord forwarding use.
func (u UUID) Undashed() string { return hex.EncodeToString(u[:]) }

// IsZero reports the nil UUID, which no real player has.
func (u UUID) IsZero() bool { return u == UUID{} }

// MarshalText writes the dashed form so UUIDs read naturally in JSON and TOML.
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText accepts either form, as ParseUUID does.
func (u *UUID) UnmarshalText(b []byte) error {
	v, err := ParseUUID(string(b))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// OfflineUUID is the UUID an offline-mode server gives a name: Java's
// UUID.nameUUIDFromBytes("OfflinePlayer:" + name), a version-3 UUID over the
// MD5 of those bytes with no namespace. Backends compute the same value, so
// player data stays where it was when the proxy takes over the login.
func OfflineUUID(name string) UUID {
	u := UUID(md5.Sum([]byte("OfflinePlayer:" + name)))
	u[6] = u[6]&0x0f | 0x30 // version 3
	u[8] = u[8]&0x3f | 0x80 // IETF variant
	return u
}
