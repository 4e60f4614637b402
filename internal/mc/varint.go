package mc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// ReadVarInt decodes one VarInt because every Minecraft length and id uses it.
// It reads at most 5 bytes and returns ErrVarIntTooLong otherwise; an io.EOF
// before the first byte is returned wrapped as io.EOF, after it as io.ErrUnexpectedEOF.
func ReadVarInt(r io.ByteReader) (int32, error) {
	var v uint32
	for i := range maxVarIntLen {
		b, err := r.ReadByte()
		if err != nil {
			if i > 0 && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("mc: read varint: %w", err)
		}
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return int32(v), nil
		}
	}
	return 0, ErrVarIntTooLong
}

// readVarIntRaw is ReadVarInt that also keeps the bytes as received, so frames
// can be relayed byte for byte even when a peer used a non-canonical encoding.
func readVarIntRaw(r *bufio.Reader, buf *[maxVarIntLen]byte) (int32, int, error) {
	var v uint32
	for i := range maxVarIntLen {
		b, err := r.ReadByte()
		if err != nil {
			if i > 0 && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, i, err
		}
		buf[i] = b
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return int32(v), i + 1, nil
		}
	}
	return 0, maxVarIntLen, ErrVarIntTooLong
}

// AppendVarInt appends v in VarInt form so encoders can build packets without
// intermediate buffers. Negative values always take 5 bytes, as in vanilla.
func AppendVarInt(dst []byte, v int32) []byte {
	u := uint32(v)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// VarIntSize reports how many bytes AppendVarInt will write, for sizing buffers up front.
func VarIntSize(v int32) int {
	u := uint32(v)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// AppendString appends s as a Minecraft string (VarInt byte length + UTF-8).
func AppendString(dst []byte, s string) []byte {
	dst = AppendVarInt(dst, int32(len(s)))
	return append(dst, s...)
}

// appendBytesString is AppendString for a []byte body, avoiding a conversion copy.
func appendBytesString(dst, s []byte) []byte {
	dst = AppendVarInt(dst, int32(len(s)))
	return append(dst, s...)
}
