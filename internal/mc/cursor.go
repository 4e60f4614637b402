package mc

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// cursor decodes fields from a frame payload already in memory. It is a value
// type with no interfaces so decoding allocates nothing but the strings it returns.
type cursor struct {
	b   []byte
	off int
}

func (c *cursor) rest() int { return len(c.b) - c.off }

func (c *cursor) varInt() (int32, error) {
	var v uint32
	for i := range maxVarIntLen {
		if c.off >= len(c.b) {
			return 0, fmt.Errorf("mc: truncated varint: %w", ErrMalformed)
		}
		b := c.b[c.off]
		c.off++
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return int32(v), nil
		}
	}
	return 0, ErrVarIntTooLong
}

func (c *cursor) take(n int) ([]byte, error) {
	if n < 0 || n > c.rest() {
		return nil, fmt.Errorf("mc: field needs %d bytes, %d left: %w", n, c.rest(), ErrMalformed)
	}
	p := c.b[c.off : c.off+n : c.off+n]
	c.off += n
	return p, nil
}

func (c *cursor) u8() (byte, error) {
	p, err := c.take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (c *cursor) u16() (uint16, error) {
	p, err := c.take(2)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(p), nil
}

func (c *cursor) i64() (int64, error) {
	p, err := c.take(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(p)), nil
}

// stringBytes reads a length-prefixed string body bounded by maxBytes.
func (c *cursor) stringBytes(maxBytes int) ([]byte, error) {
	n, err := c.varInt()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("mc: negative string length %d: %w", n, ErrMalformed)
	}
	if int(n) > maxBytes {
		return nil, fmt.Errorf("mc: string of %d bytes exceeds %d: %w", n, maxBytes, ErrStringTooLong)
	}
	return c.take(int(n))
}

// string reads a UTF-8 string of at most maxChars runes. The byte bound is
// 4 bytes per rune, so the rune count is the limit that actually bites.
func (c *cursor) string(maxChars int) (string, error) {
	p, err := c.stringBytes(maxChars * utf8.UTFMax)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(p) {
		return "", fmt.Errorf("mc: string is not valid UTF-8: %w", ErrMalformed)
	}
	if n := utf8.RuneCount(p); n > maxChars {
		return "", fmt.Errorf("mc: string of %d characters exceeds %d: %w", n, maxChars, ErrStringTooLong)
	}
	return string(p), nil
}

func (c *cursor) i32() (int32, error) {
	p, err := c.take(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(p)), nil
}

// boolean reads a bool as vanilla does: any non-zero byte is true.
func (c *cursor) boolean() (bool, error) {
	b, err := c.u8()
	return b != 0, err
}

func (c *cursor) uuid() ([16]byte, error) {
	var u [16]byte
	p, err := c.take(16)
	if err == nil {
		copy(u[:], p)
	}
	return u, err
}

// byteArray reads a VarInt-prefixed byte array of at most maxLen bytes and
// returns a copy, so decoded packets never alias the frame buffer.
func (c *cursor) byteArray(maxLen int) ([]byte, error) {
	n, err := c.varInt()
	if err != nil {
		return nil, err
	}
	return c.sizedBytes(int(n), maxLen)
}

// shortByteArray is byteArray with 1.7's 16-bit length prefix.
func (c *cursor) shortByteArray(maxLen int) ([]byte, error) {
	n, err := c.u16()
	if err != nil {
		return nil, err
	}
	return c.sizedBytes(int(int16(n)), maxLen)
}

func (c *cursor) sizedBytes(n, maxLen int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("mc: negative array length %d: %w", n, ErrMalformed)
	}
	if n > maxLen {
		return nil, fmt.Errorf("mc: array of %d bytes exceeds %d: %w", n, maxLen, ErrMalformed)
	}
	p, err := c.take(n)
	if err != nil {
		return nil, err
	}
	return append([]byte{}, p...), nil
}

// end fails when bytes remain, for packets whose layout is fully known.
func (c *cursor) end() error {
	if c.rest() != 0 {
		return fmt.Errorf("mc: %d trailing bytes: %w", c.rest(), ErrMalformed)
	}
	return nil
}
