package forwarding

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/infrarust-go/infrarust/internal/auth"
)

// ErrMalformed marks forwarded data that does not decode; decoders wrap it
// with the field that failed.
var ErrMalformed = errors.New("forwarding: malformed forwarded data")

// cursor reads Minecraft wire types from a byte slice, never past its end.
type cursor struct {
	b   []byte
	off int
}

func (c *cursor) remaining() int { return len(c.b) - c.off }

func (c *cursor) varInt(field string) (int32, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if c.off >= len(c.b) {
			return 0, fmt.Errorf("%w: %s: truncated varint", ErrMalformed, field)
		}
		b := c.b[c.off]
		c.off++
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return int32(v), nil
		}
	}
	return 0, fmt.Errorf("%w: %s: varint longer than 5 bytes", ErrMalformed, field)
}

func (c *cursor) bytes(n int, field string) ([]byte, error) {
	if n < 0 || n > c.remaining() {
		return nil, fmt.Errorf("%w: %s: %d bytes declared, %d left", ErrMalformed, field, n, c.remaining())
	}
	out := c.b[c.off : c.off+n]
	c.off += n
	return out, nil
}

// string reads a VarInt-prefixed UTF-8 string of at most maxChars UTF-16
// units, Java's limit, checking the byte length first as Java does.
func (c *cursor) string(maxChars int, field string) (string, error) {
	n, err := c.varInt(field)
	if err != nil {
		return "", err
	}
	if n < 0 || int(n) > maxChars*3 {
		return "", fmt.Errorf("%w: %s: %d bytes is over the %d-character limit", ErrMalformed, field, n, maxChars)
	}
	b, err := c.bytes(int(n), field)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%w: %s: not UTF-8", ErrMalformed, field)
	}
	s := string(b)
	units := 0
	for _, r := range s {
		units += utf16.RuneLen(r)
	}
	if units > maxChars {
		return "", fmt.Errorf("%w: %s: %d characters, limit %d", ErrMalformed, field, units, maxChars)
	}
	return s, nil
}

func (c *cursor) byteArray(max int, field string) ([]byte, error) {
	n, err := c.varInt(field)
	if err != nil {
		return nil, err
	}
	if n < 0 || int(n) > max {
		return nil, fmt.Errorf("%w: %s: %d bytes, limit %d", ErrMalformed, field, n, max)
	}
	b, err := c.bytes(int(n), field)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), b...), nil
}

func (c *cursor) bool(field string) (bool, error) {
	b, err := c.bytes(1, field)
	if err != nil {
		return false, err
	}
	switch b[0] {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, fmt.Errorf("%w: %s: boolean byte %d", ErrMalformed, field, b[0])
}

func (c *cursor) int64(field string) (int64, error) {
	b, err := c.bytes(8, field)
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

func (c *cursor) uuid(field string) (auth.UUID, error) {
	b, err := c.bytes(16, field)
	if err != nil {
		return auth.UUID{}, err
	}
	return auth.UUID(b), nil
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}
