package bungeechannel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// The BungeeCord channel is written with java.io.DataOutput on both ends:
// writeUTF is a 2-byte big-endian length then "modified UTF-8" (U+0000 as
// C0 80, characters past U+FFFF as two 3-byte surrogates), ints and shorts are
// big-endian. This file holds that format and nothing else.

// ErrMalformed is wrapped by every error about bytes that do not follow the
// format; the request or reply is dropped.
var ErrMalformed = errors.New("malformed BungeeCord message")

// ErrTooLong is wrapped when a string does not fit writeUTF's 65535 bytes
// (a player list of several thousand names, say); nothing is sent.
var ErrTooLong = errors.New("string too long for the BungeeCord channel (65535 bytes of modified UTF-8)")

// maxUTF is the most bytes writeUTF can carry behind its unsigned 16-bit length.
const maxUTF = 0xFFFF

// reader reads Java DataInput values from a byte slice; every read is bounded
// by what is left, so a short or hostile payload is an error, never a panic.
type reader struct {
	b   []byte
	off int
}

func (r *reader) need(n int, what string) ([]byte, error) {
	if n < 0 || len(r.b)-r.off < n {
		return nil, fmt.Errorf("%s needs %d bytes, %d left: %w", what, n, len(r.b)-r.off, ErrMalformed)
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

// utf reads what DataOutput.writeUTF wrote.
func (r *reader) utf(what string) (string, error) {
	h, err := r.need(2, what+" length")
	if err != nil {
		return "", err
	}
	p, err := r.need(int(binary.BigEndian.Uint16(h)), what)
	if err != nil {
		return "", err
	}
	s, err := decodeModifiedUTF8(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return s, nil
}

func (r *reader) int32(what string) (int32, error) {
	p, err := r.need(4, what)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(p)), nil
}

func (r *reader) uint16(what string) (uint16, error) {
	p, err := r.need(2, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(p), nil
}

// shortBytes reads a signed 16-bit length then that many bytes, as Forward
// carries its data; a negative length is what makes BungeeCord throw.
func (r *reader) shortBytes(what string) ([]byte, error) {
	n, err := r.uint16(what + " length")
	if err != nil {
		return nil, err
	}
	if int16(n) < 0 {
		return nil, fmt.Errorf("%s length %d is negative: %w", what, int16(n), ErrMalformed)
	}
	return r.need(int(n), what)
}

// decodeModifiedUTF8 decodes as DataInputStream.readUTF does (it accepts a raw
// 0 byte and overlong 2- and 3-byte forms), then joins surrogate pairs; a lone
// surrogate, which a Go string cannot hold, becomes U+FFFD.
func decodeModifiedUTF8(p []byte) (string, error) {
	ascii := true
	for _, c := range p {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(p), nil
	}
	units := make([]uint16, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch c >> 4 {
		case 0, 1, 2, 3, 4, 5, 6, 7:
			units = append(units, uint16(c))
			i++
		case 12, 13:
			if i+2 > len(p) || p[i+1]&0xC0 != 0x80 {
				return "", fmt.Errorf("bad 2-byte sequence at byte %d: %w", i, ErrMalformed)
			}
			units = append(units, uint16(c&0x1F)<<6|uint16(p[i+1]&0x3F))
			i += 2
		case 14:
			if i+3 > len(p) || p[i+1]&0xC0 != 0x80 || p[i+2]&0xC0 != 0x80 {
				return "", fmt.Errorf("bad 3-byte sequence at byte %d: %w", i, ErrMalformed)
			}
			units = append(units, uint16(c&0x0F)<<12|uint16(p[i+1]&0x3F)<<6|uint16(p[i+2]&0x3F))
			i += 3
		default:
			return "", fmt.Errorf("byte 0x%02x at %d starts no modified UTF-8 sequence: %w", c, i, ErrMalformed)
		}
	}
	return string(utf16.Decode(units)), nil
}

// appendUTF appends s as DataOutput.writeUTF writes it. Invalid UTF-8 in s is
// written as U+FFFD.
func appendUTF(dst []byte, s string) ([]byte, error) {
	n := modifiedUTF8Len(s)
	if n > maxUTF {
		return dst, fmt.Errorf("%d bytes: %w", n, ErrTooLong)
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	if n == len(s) {
		return append(dst, s...), nil // plain ASCII without NUL: the bytes are the same
	}
	for _, r := range s {
		switch {
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			dst = append3(append3(dst, uint16(hi)), uint16(lo))
		case r >= 0x800:
			dst = append3(dst, uint16(r))
		case r >= 0x80 || r == 0:
			dst = append(dst, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
		default:
			dst = append(dst, byte(r))
		}
	}
	return dst, nil
}

func append3(dst []byte, u uint16) []byte {
	return append(dst, 0xE0|byte(u>>12), 0x80|byte(u>>6&0x3F), 0x80|byte(u&0x3F))
}

// modifiedUTF8Len is the byte length writeUTF gives s.
func modifiedUTF8Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0 {
				n += 2
			} else {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r > 0xFFFF:
			n += 6
		case r >= 0x800:
			n += 3 // U+FFFD for invalid bytes too
		default:
			n += 2
		}
	}
	return n
}

func appendInt32(dst []byte, v int32) []byte { return binary.BigEndian.AppendUint32(dst, uint32(v)) }

func appendUint16(dst []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(dst, v) }
