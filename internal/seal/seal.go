// Package seal signs what the proxies of a fleet leave for each other in
// Redis (messages, shared entries, accounts, sessions), so that whoever can
// write to Redis but does not hold the fleet's secret cannot forge them.
//
// A seal is an HMAC-SHA256 over the value and the place it is meant for (its
// key and field), so a valid value copied to another key does not open there.
// A JSON object keeps its shape (the seal is a last "seal" field), so the Lua
// scripts that read fields of an entry still can; any other value gets the
// seal as a suffix.
package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
)

// Errors of Open.
var (
	// ErrUnsealed: the value carries no seal.
	ErrUnsealed = errors.New("the value is not signed with the fleet's secret")
	// ErrBadSeal: the seal does not match the value, or was made for another place.
	ErrBadSeal = errors.New("the value's signature does not match (forged, changed, or moved from another key)")
)

// Sealer seals and opens values with one secret. A nil Sealer (a fleet with
// no secret) seals nothing and opens every value as it is.
type Sealer struct{ key []byte }

// New makes the Sealer of secret; nil when secret is empty.
func New(secret []byte) *Sealer {
	if len(secret) == 0 {
		return nil
	}
	// Derived, so the secret itself is never the MAC key of anything else.
	m := hmac.New(sha256.New, []byte("infrarust fleet seal v1"))
	m.Write(secret)
	return &Sealer{key: m.Sum(nil)}
}

// On reports whether values are sealed.
func (s *Sealer) On() bool { return s != nil }

const (
	jsonField = `,"seal":"`
	suffix    = "~seal:"
)

var b64 = base64.RawURLEncoding

func (s *Sealer) mac(place, value string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(place))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return b64.EncodeToString(m.Sum(nil))
}

// Seal signs value for place (the Redis key and field it goes to).
func (s *Sealer) Seal(place, value string) string {
	if s == nil {
		return value
	}
	sig := s.mac(place, value)
	if isObject(value) && value != "{}" {
		return value[:len(value)-1] + jsonField + sig + `"}`
	}
	return value + suffix + sig
}

// Open checks value's seal for place and returns the value without it. A
// nil Sealer returns value as it is.
func (s *Sealer) Open(place, sealed string) (string, error) {
	if s == nil {
		return sealed, nil
	}
	var value, sig string
	if isObject(sealed) {
		i := strings.LastIndex(sealed, jsonField)
		if i < 0 || !strings.HasSuffix(sealed, `"}`) || i+len(jsonField) > len(sealed)-2 {
			return "", ErrUnsealed
		}
		value, sig = sealed[:i]+"}", sealed[i+len(jsonField):len(sealed)-2]
	} else {
		i := strings.LastIndex(sealed, suffix)
		if i < 0 {
			return "", ErrUnsealed
		}
		value, sig = sealed[:i], sealed[i+len(suffix):]
	}
	if !hmac.Equal([]byte(sig), []byte(s.mac(place, value))) {
		return "", ErrBadSeal
	}
	return value, nil
}

func isObject(v string) bool { return len(v) >= 2 && v[0] == '{' && v[len(v)-1] == '}' }
