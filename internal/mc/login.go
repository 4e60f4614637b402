package mc

import (
	"bufio"
	"encoding/binary"
	"fmt"
)

// maxLoginStartBody bounds a login start frame: name, UUID and the 1.19
// signature data (timestamp, key <= 512 bytes, signature <= 4096 bytes).
const maxLoginStartBody = 16 << 10

// LoginStart is the client's first login-state packet; the proxy reads it for
// ban checks and player events, then relays it raw.
type LoginStart struct {
	// Name is the player name the client claims (unauthenticated).
	Name string
	// UUID is the player's UUID when the client sent one.
	UUID [16]byte
	// HasUUID reports whether UUID was present on the wire.
	HasUUID bool
	// Key is the chat signing key a 1.19–1.19.2 client may send; the proxy
	// needs it to check a signed encryption response. Nil otherwise.
	Key *PlayerKey
}

// PlayerKey is a 1.19–1.19.2 player's chat signing key, as certified by Mojang.
type PlayerKey struct {
	// ExpiresAt is the key's expiry in Unix milliseconds.
	ExpiresAt int64
	// PublicKey is the player's RSA public key in DER (X.509) form.
	PublicKey []byte
	// Signature is Mojang's signature over the key.
	Signature []byte
}

// Vanilla's bounds on the 1.19 key fields.
const (
	maxPlayerKeyLen = 512
	maxPlayerKeySig = 4096
)

// ReadLoginStart reads the login start frame for the given protocol and
// returns the raw frame bytes for relaying. The name is checked strictly
// (1..16 characters, valid UTF-8). From 1.20.2 (764) the UUID is required and
// trailing bytes are an error. Below 764 everything after the name is parsed
// on a best-effort basis only: an optional UUID (760..763) is picked up when
// the layout is unambiguous and anything else is ignored, never rejected.
func ReadLoginStart(r *bufio.Reader, protocol int32) (LoginStart, []byte, error) {
	f, err := ReadFrame(r, maxLoginStartBody)
	if err != nil {
		return LoginStart{}, nil, fmt.Errorf("mc: login start: %w", err)
	}
	l, err := parseLoginStart(f, protocol)
	if err != nil {
		return LoginStart{}, nil, fmt.Errorf("mc: login start: %w", err)
	}
	return l, f.Raw, nil
}

func parseLoginStart(f Frame, protocol int32) (LoginStart, error) {
	if f.ID != 0x00 {
		return LoginStart{}, fmt.Errorf("packet id 0x%02x, want 0x00: %w", f.ID, ErrMalformed)
	}
	p := Protocol(protocol)
	c := cursor{b: f.Payload}
	name, err := c.string(MaxPlayerNameLen)
	if err != nil {
		return LoginStart{}, fmt.Errorf("player name: %w", err)
	}
	if name == "" {
		return LoginStart{}, fmt.Errorf("empty player name: %w", ErrMalformed)
	}
	l := LoginStart{Name: name}
	switch {
	case p.AtLeast(V1_20_2):
		if l.UUID, err = c.uuid(); err != nil {
			return LoginStart{}, fmt.Errorf("player uuid: %w", err)
		}
		l.HasUUID = true
		if err := c.end(); err != nil {
			return LoginStart{}, err
		}
	case p.AtLeast(V1_19):
		lenientTail(c, p, &l)
	}
	return l, nil
}

// lenientTail parses the optional tail of a 1.19–1.20.1 login start (the
// 1.19–1.19.2 signing key, the 1.19.1+ UUID) and keeps it only when the tail
// matches the expected layout exactly; anything else leaves l as it is, so a
// passthrough relay never refuses a client over fields it does not need.
func lenientTail(c cursor, p Protocol, l *LoginStart) {
	var key *PlayerKey
	if p.Before(V1_19_3) {
		hasKey, err := c.u8()
		if err != nil || hasKey > 1 {
			return
		}
		if hasKey == 1 {
			key = &PlayerKey{}
			if key.ExpiresAt, err = c.i64(); err != nil {
				return
			}
			if key.PublicKey, err = c.byteArray(maxPlayerKeyLen); err != nil {
				return
			}
			if key.Signature, err = c.byteArray(maxPlayerKeySig); err != nil {
				return
			}
		}
	}
	if p == V1_19 {
		if c.rest() == 0 {
			l.Key = key
		}
		return
	}
	has, err := c.u8()
	if err != nil || has > 1 {
		return
	}
	var uuid [16]byte
	if has == 1 {
		if uuid, err = c.uuid(); err != nil {
			return
		}
	}
	if c.rest() != 0 {
		return
	}
	l.Key, l.UUID, l.HasUUID = key, uuid, has == 1
}

// Encode returns the login start as a complete frame in the layout of the
// given protocol, for tests, the prober and offline clients. Fields the
// protocol does not carry are dropped.
func (l LoginStart) Encode(protocol int32) []byte {
	return AppendFrame(nil, 0x00, l.AppendPayload(nil, Protocol(protocol)))
}

// AppendPayload appends the login start payload in p's layout, for a Conn
// logging in to a backend.
func (l LoginStart) AppendPayload(dst []byte, p Protocol) []byte {
	dst = AppendString(dst, l.Name)
	if p.Before(V1_19) {
		return dst
	}
	if p.AtLeast(V1_20_2) {
		return append(dst, l.UUID[:]...)
	}
	if p.Before(V1_19_3) {
		dst = appendBool(dst, l.Key != nil)
		if l.Key != nil {
			dst = binary.BigEndian.AppendUint64(dst, uint64(l.Key.ExpiresAt))
			dst = appendBytesString(appendBytesString(dst, l.Key.PublicKey), l.Key.Signature)
		}
		if p == V1_19 {
			return dst
		}
	}
	dst = appendBool(dst, l.HasUUID)
	if l.HasUUID {
		dst = append(dst, l.UUID[:]...)
	}
	return dst
}
