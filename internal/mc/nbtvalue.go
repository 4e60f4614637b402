package mc

import (
	"encoding/binary"
	"fmt"
	"math"
)

// NBT is one network-NBT tag kept as bytes: its type and its payload, without
// the root name. Join game carries the registry codec and dimension types this
// way (1.16–1.20.1), registry data carries registries (1.20.2+); the proxy
// relays or replays them verbatim and only looks up the few fields it needs.
// The zero value is "no tag".
type NBT struct {
	// Type is the tag type (10 for a compound); 0 means no tag.
	Type byte
	// Payload is the tag's payload as on the wire.
	Payload []byte
}

// NBT tag types callers name when they build or inspect tags.
const (
	NBTEnd      = tagEnd
	NBTString   = tagString
	NBTList     = tagList
	NBTCompound = tagCompound
	NBTInt      = tagInt
)

// IsZero reports whether n holds no tag.
func (n NBT) IsZero() bool { return n.Type == tagEnd }

// ParseNBT reads one tag from the start of b: with named, the tag carries a
// root name (network NBT before 1.20.2), which is read and dropped. It returns
// the tag (its payload aliases b) and the bytes it took. Depth, lengths and
// counts are bounded by what b holds, so hostile input fails cleanly.
func ParseNBT(b []byte, named bool) (NBT, int, error) {
	c := cursor{b: b}
	n, err := readNBT(&c, named)
	if err != nil {
		return NBT{}, 0, err
	}
	return n, c.off, nil
}

// readNBT reads a root tag: TAG_End alone is an empty tag (1.20.2+ writes it
// for "nothing"); any other type is followed by the root name when named.
func readNBT(c *cursor, named bool) (NBT, error) {
	t, err := c.u8()
	if err != nil {
		return NBT{}, fmt.Errorf("mc: nbt tag type: %w", err)
	}
	if t == tagEnd {
		return NBT{}, nil
	}
	if t > tagLongArray {
		return NBT{}, fmt.Errorf("%w: unknown tag type %d", errNBT, t)
	}
	if named {
		n, err := c.u16()
		if err != nil {
			return NBT{}, err
		}
		if _, err := c.take(int(n)); err != nil {
			return NBT{}, err
		}
	}
	start := c.off
	if err := skipNBTPayload(c, t, 0); err != nil {
		return NBT{}, err
	}
	return NBT{Type: t, Payload: c.b[start:c.off:c.off]}, nil
}

// skipNBTPayload moves past one payload of type t; every count is checked
// against the bytes left before anything is looped over.
func skipNBTPayload(c *cursor, t byte, depth int) error {
	if depth > maxNBTDepth {
		return fmt.Errorf("%w: nested deeper than %d", errNBT, maxNBTDepth)
	}
	var err error
	switch t {
	case tagByte:
		_, err = c.take(1)
	case tagShort:
		_, err = c.take(2)
	case tagInt, tagFloat:
		_, err = c.take(4)
	case tagLong, tagDouble:
		_, err = c.take(8)
	case tagString:
		var n uint16
		if n, err = c.u16(); err == nil {
			_, err = c.take(int(n))
		}
	case tagByteArray, tagIntArray, tagLongArray:
		size := map[byte]int{tagByteArray: 1, tagIntArray: 4, tagLongArray: 8}[t]
		var n int32
		if n, err = c.i32(); err == nil {
			if n < 0 || int(n) > c.rest()/size {
				return fmt.Errorf("%w: array of %d elements in %d bytes", errNBT, n, c.rest())
			}
			_, err = c.take(int(n) * size)
		}
	case tagList:
		var et byte
		if et, err = c.u8(); err != nil {
			return err
		}
		var n int32
		if n, err = c.i32(); err != nil {
			return err
		}
		if n < 0 || int(n) > c.rest() || (et == tagEnd && n > 0) || et > tagLongArray {
			return fmt.Errorf("%w: list of %d elements of type %d in %d bytes", errNBT, n, et, c.rest())
		}
		for range int(n) {
			if err = skipNBTPayload(c, et, depth+1); err != nil {
				return err
			}
		}
	case tagCompound:
		for {
			ft, err := c.u8()
			if err != nil {
				return err
			}
			if ft == tagEnd {
				return nil
			}
			if ft > tagLongArray {
				return fmt.Errorf("%w: unknown tag type %d", errNBT, ft)
			}
			n, err := c.u16()
			if err != nil {
				return err
			}
			if _, err := c.take(int(n)); err != nil {
				return err
			}
			if err := skipNBTPayload(c, ft, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%w: unknown tag type %d", errNBT, t)
	}
	return err
}

// Field returns the named field of a compound; ok is false when n is not a
// compound or has no such field.
func (n NBT) Field(name string) (NBT, bool) {
	if n.Type != tagCompound {
		return NBT{}, false
	}
	c := cursor{b: n.Payload}
	for {
		t, err := c.u8()
		if err != nil || t == tagEnd {
			return NBT{}, false
		}
		l, err := c.u16()
		if err != nil {
			return NBT{}, false
		}
		key, err := c.take(int(l))
		if err != nil {
			return NBT{}, false
		}
		start := c.off
		if skipNBTPayload(&c, t, 1) != nil {
			return NBT{}, false
		}
		if string(key) == name {
			return NBT{Type: t, Payload: n.Payload[start:c.off:c.off]}, true
		}
	}
}

// Elements returns a list's elements; it fails when n is not a list.
func (n NBT) Elements() ([]NBT, error) {
	if n.Type != tagList {
		return nil, fmt.Errorf("%w: tag type %d is not a list", errNBT, n.Type)
	}
	c := cursor{b: n.Payload}
	et, err := c.u8()
	if err != nil {
		return nil, err
	}
	count, err := c.i32()
	if err != nil {
		return nil, err
	}
	if count < 0 || int(count) > c.rest() {
		return nil, fmt.Errorf("%w: list of %d elements in %d bytes", errNBT, count, c.rest())
	}
	out := make([]NBT, 0, count)
	for range int(count) {
		start := c.off
		if err := skipNBTPayload(&c, et, 1); err != nil {
			return nil, err
		}
		out = append(out, NBT{Type: et, Payload: n.Payload[start:c.off:c.off]})
	}
	return out, nil
}

// StringValue returns a string tag's text; ok is false for other types.
func (n NBT) StringValue() (string, bool) {
	if n.Type != tagString {
		return "", false
	}
	c := cursor{b: n.Payload}
	s, err := c.mutf8()
	return s, err == nil
}

// IntValue returns an int tag's value (bytes and shorts widen); ok is false
// for other types.
func (n NBT) IntValue() (int32, bool) {
	switch {
	case n.Type == tagInt && len(n.Payload) == 4:
		return int32(binary.BigEndian.Uint32(n.Payload)), true
	case n.Type == tagShort && len(n.Payload) == 2:
		return int32(int16(binary.BigEndian.Uint16(n.Payload))), true
	case n.Type == tagByte && len(n.Payload) == 1:
		return int32(int8(n.Payload[0])), true
	}
	return 0, false
}

// DoubleValue returns a double or float tag's value; ok is false for others.
func (n NBT) DoubleValue() (float64, bool) {
	switch {
	case n.Type == tagDouble && len(n.Payload) == 8:
		return math.Float64frombits(binary.BigEndian.Uint64(n.Payload)), true
	case n.Type == tagFloat && len(n.Payload) == 4:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(n.Payload))), true
	}
	return 0, false
}

// AppendTo appends the tag as a root: type, an empty root name when named
// (before 1.20.2), then the payload. The zero NBT appends a lone TAG_End.
func (n NBT) AppendTo(dst []byte, named bool) []byte {
	if n.Type == tagEnd {
		return append(dst, tagEnd)
	}
	dst = append(dst, n.Type)
	if named {
		dst = append(dst, 0, 0)
	}
	return append(dst, n.Payload...)
}

// rootNamed says whether network NBT carries a root name in protocol p:
// 1.20.2 dropped it.
func rootNamed(p Protocol) bool { return p.Before(V1_20_2) }

// CompoundBuilder writes an NBT compound field by field, for the few tags the
// proxy makes itself (tests, and the limbo's registry data).
type CompoundBuilder struct{ b []byte }

// String adds a string field.
func (cb *CompoundBuilder) String(name, value string) *CompoundBuilder {
	cb.b = append(cb.b, tagString)
	cb.b, _ = appendMUTF8(cb.b, name)
	cb.b, _ = appendMUTF8(cb.b, value)
	return cb
}

// Int adds an int field.
func (cb *CompoundBuilder) Int(name string, v int32) *CompoundBuilder {
	cb.b = append(cb.b, tagInt)
	cb.b, _ = appendMUTF8(cb.b, name)
	cb.b = binary.BigEndian.AppendUint32(cb.b, uint32(v))
	return cb
}

// Byte adds a byte field.
func (cb *CompoundBuilder) Byte(name string, v int8) *CompoundBuilder {
	cb.b = append(cb.b, tagByte)
	cb.b, _ = appendMUTF8(cb.b, name)
	cb.b = append(cb.b, byte(v))
	return cb
}

// Tag adds a field holding an already built tag.
func (cb *CompoundBuilder) Tag(name string, v NBT) *CompoundBuilder {
	cb.b = append(cb.b, v.Type)
	cb.b, _ = appendMUTF8(cb.b, name)
	cb.b = append(cb.b, v.Payload...)
	return cb
}

// List adds a list field of elements of one type.
func (cb *CompoundBuilder) List(name string, elemType byte, elems ...NBT) *CompoundBuilder {
	return cb.Tag(name, NBTListOf(elemType, elems...))
}

// Build ends the compound.
func (cb *CompoundBuilder) Build() NBT {
	return NBT{Type: tagCompound, Payload: append(append([]byte(nil), cb.b...), tagEnd)}
}

// NBTListOf builds a list tag of elements of one type.
func NBTListOf(elemType byte, elems ...NBT) NBT {
	if len(elems) == 0 {
		elemType = tagEnd
	}
	p := append([]byte{elemType}, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(p[1:], uint32(len(elems)))
	for _, e := range elems {
		p = append(p, e.Payload...)
	}
	return NBT{Type: tagList, Payload: p}
}

// NBTStringOf builds a string tag.
func NBTStringOf(s string) NBT {
	p, _ := appendMUTF8(nil, s)
	return NBT{Type: tagString, Payload: p}
}
