package mc

import (
	"bufio"
	"fmt"
)

// Protocol numbers where the login start layout changed.
const (
	protocol1_19   = 759 // name + optional signature data
	protocol1_19_1 = 760 // name + optional signature data + optional UUID
	protocol1_19_3 = 761 // name + optional UUID
	protocol1_20_2 = 764 // name + UUID (always present)
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
}

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
	case protocol >= protocol1_20_2:
		p, err := c.take(16)
		if err != nil {
			return LoginStart{}, fmt.Errorf("player uuid: %w", err)
		}
		copy(l.UUID[:], p)
		l.HasUUID = true
		if c.rest() != 0 {
			return LoginStart{}, fmt.Errorf("%d trailing bytes: %w", c.rest(), ErrMalformed)
		}
	case protocol >= protocol1_19_1:
		if uuid, ok := lenientUUID(c, protocol); ok {
			l.UUID, l.HasUUID = uuid, true
		}
	}
	return l, nil
}

// lenientUUID parses the optional tail of a 1.19.1–1.20.1 login start and
// reports a UUID only when the tail matches the expected layout exactly.
func lenientUUID(c cursor, protocol int32) ([16]byte, bool) {
	var uuid [16]byte
	if protocol == protocol1_19_1 {
		hasSig, err := c.u8()
		if err != nil || hasSig > 1 {
			return uuid, false
		}
		if hasSig == 1 {
			if _, err := c.i64(); err != nil {
				return uuid, false
			}
			for range 2 { // public key, then signature
				n, err := c.varInt()
				if err != nil {
					return uuid, false
				}
				if _, err := c.take(int(n)); err != nil {
					return uuid, false
				}
			}
		}
	}
	has, err := c.u8()
	if err != nil || has != 1 {
		return uuid, false
	}
	p, err := c.take(16)
	if err != nil || c.rest() != 0 {
		return uuid, false
	}
	copy(uuid[:], p)
	return uuid, true
}

// Encode returns the login start as a complete frame in the layout of the
// given protocol, for tests, the prober and offline clients. Fields the
// protocol does not carry are dropped; 1.19 signature data is sent as absent.
func (l LoginStart) Encode(protocol int32) []byte {
	p := make([]byte, 0, 1+len(l.Name)+2+16)
	p = AppendString(p, l.Name)
	optUUID := func(p []byte) []byte {
		if !l.HasUUID {
			return append(p, 0)
		}
		return append(append(p, 1), l.UUID[:]...)
	}
	switch {
	case protocol >= protocol1_20_2:
		p = append(p, l.UUID[:]...)
	case protocol >= protocol1_19_3:
		p = optUUID(p)
	case protocol == protocol1_19_1:
		p = optUUID(append(p, 0))
	case protocol == protocol1_19:
		p = append(p, 0)
	}
	return AppendFrame(nil, 0x00, p)
}
