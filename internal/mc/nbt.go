package mc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Since 1.20.3 play and configuration carry chat components as network NBT
// (a root tag with no name) instead of JSON text. The proxy keeps components
// as JSON everywhere else, so this file converts between the two: just
// enough NBT to carry any text component, nothing more.

const (
	tagEnd byte = iota
	tagByte
	tagShort
	tagInt
	tagLong
	tagFloat
	tagDouble
	tagByteArray
	tagString
	tagList
	tagCompound
	tagIntArray
	tagLongArray
)

// maxNBTDepth is vanilla's nesting limit for NBT.
const maxNBTDepth = 512

// errNBT marks NBT the converter cannot read or write.
var errNBT = fmt.Errorf("nbt: %w", ErrMalformed)

// componentNBTToJSON reads one network-NBT tag from c and returns it as JSON.
// Booleans in text components travel as bytes, so a byte of 0 or 1 becomes
// false or true; a compound whose only key is "" (vanilla's wrapper for mixed
// lists) becomes its value.
func componentNBTToJSON(c *cursor) ([]byte, error) {
	t, err := c.u8()
	if err != nil {
		return nil, err
	}
	if t == tagEnd {
		return nil, fmt.Errorf("%w: root tag is TAG_End", errNBT)
	}
	return nbtValueJSON(nil, c, t, 0)
}

func nbtValueJSON(dst []byte, c *cursor, t byte, depth int) ([]byte, error) {
	if depth > maxNBTDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", errNBT, maxNBTDepth)
	}
	switch t {
	case tagByte:
		b, err := c.u8()
		if err != nil {
			return nil, err
		}
		switch int8(b) {
		case 0:
			return append(dst, "false"...), nil
		case 1:
			return append(dst, "true"...), nil
		}
		return strconv.AppendInt(dst, int64(int8(b)), 10), nil
	case tagShort:
		v, err := c.u16()
		return strconv.AppendInt(dst, int64(int16(v)), 10), err
	case tagInt:
		v, err := c.i32()
		return strconv.AppendInt(dst, int64(v), 10), err
	case tagLong:
		v, err := c.i64()
		return strconv.AppendInt(dst, v, 10), err
	case tagFloat:
		v, err := c.i32()
		return appendJSONFloat(dst, float64(math.Float32frombits(uint32(v))), 32), err
	case tagDouble:
		v, err := c.i64()
		return appendJSONFloat(dst, math.Float64frombits(uint64(v)), 64), err
	case tagString:
		s, err := c.mutf8()
		if err != nil {
			return nil, err
		}
		return appendJSONString(dst, s), nil
	case tagByteArray, tagIntArray, tagLongArray:
		return nbtArrayJSON(dst, c, t)
	case tagList:
		return nbtListJSON(dst, c, depth)
	case tagCompound:
		return nbtCompoundJSON(dst, c, depth)
	}
	return nil, fmt.Errorf("%w: unknown tag type %d", errNBT, t)
}

func nbtArrayJSON(dst []byte, c *cursor, t byte) ([]byte, error) {
	n, err := c.i32()
	if err != nil {
		return nil, err
	}
	size := map[byte]int{tagByteArray: 1, tagIntArray: 4, tagLongArray: 8}[t]
	if n < 0 || int(n) > c.rest()/size {
		return nil, fmt.Errorf("%w: array of %d elements in %d bytes", errNBT, n, c.rest())
	}
	dst = append(dst, '[')
	for i := range int(n) {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch t {
		case tagByteArray:
			b, _ := c.u8()
			dst = strconv.AppendInt(dst, int64(int8(b)), 10)
		case tagIntArray:
			v, _ := c.i32()
			dst = strconv.AppendInt(dst, int64(v), 10)
		default:
			v, _ := c.i64()
			dst = strconv.AppendInt(dst, v, 10)
		}
	}
	return append(dst, ']'), nil
}

func nbtListJSON(dst []byte, c *cursor, depth int) ([]byte, error) {
	et, err := c.u8()
	if err != nil {
		return nil, err
	}
	n, err := c.i32()
	if err != nil {
		return nil, err
	}
	// Every element but TAG_End takes at least one byte, which bounds n by
	// the bytes left before anything is built.
	if n < 0 || int(n) > c.rest() || (et == tagEnd && n > 0) {
		return nil, fmt.Errorf("%w: list of %d elements of type %d in %d bytes", errNBT, n, et, c.rest())
	}
	dst = append(dst, '[')
	for i := range int(n) {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = nbtValueJSON(dst, c, et, depth+1); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

func nbtCompoundJSON(dst []byte, c *cursor, depth int) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '{')
	fields := 0
	onlyEmptyKey := true
	valueStart := 0
	for {
		t, err := c.u8()
		if err != nil {
			return nil, err
		}
		if t == tagEnd {
			break
		}
		name, err := c.mutf8()
		if err != nil {
			return nil, err
		}
		if fields > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(dst, name), ':')
		valueStart = len(dst)
		if dst, err = nbtValueJSON(dst, c, t, depth+1); err != nil {
			return nil, err
		}
		fields++
		onlyEmptyKey = onlyEmptyKey && name == ""
	}
	if fields == 1 && onlyEmptyKey {
		// {"": value} is vanilla's wrapper for an element of a mixed list.
		v := append([]byte(nil), dst[valueStart:]...)
		return append(dst[:start], v...), nil
	}
	return append(dst, '}'), nil
}

func appendJSONFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, '0')
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

// appendJSONString appends s as a JSON string without HTML escaping, so
// components keep their text byte for byte.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

// mutf8 reads an NBT string: an unsigned 16-bit byte length and Java's
// modified UTF-8 (NUL as C0 80, supplementary characters as surrogate
// pairs). Unpaired surrogates and malformed sequences become U+FFFD.
func (c *cursor) mutf8() (string, error) {
	n, err := c.u16()
	if err != nil {
		return "", err
	}
	p, err := c.take(int(n))
	if err != nil {
		return "", err
	}
	ascii := true
	for _, b := range p {
		if b == 0 || b >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(p), nil
	}
	units := make([]uint16, 0, len(p))
	for i := 0; i < len(p); {
		b := p[i]
		switch {
		case b < 0x80:
			units = append(units, uint16(b))
			i++
		case b&0xE0 == 0xC0 && i+1 < len(p) && p[i+1]&0xC0 == 0x80:
			units = append(units, uint16(b&0x1F)<<6|uint16(p[i+1]&0x3F))
			i += 2
		case b&0xF0 == 0xE0 && i+2 < len(p) && p[i+1]&0xC0 == 0x80 && p[i+2]&0xC0 == 0x80:
			units = append(units, uint16(b&0x0F)<<12|uint16(p[i+1]&0x3F)<<6|uint16(p[i+2]&0x3F))
			i += 3
		default:
			units = append(units, utf8.RuneError)
			i++
		}
	}
	return string(utf16.Decode(units)), nil
}

// appendMUTF8 appends s as an NBT string; it fails past 65535 encoded bytes.
func appendMUTF8(dst []byte, s string) ([]byte, error) {
	lenAt := len(dst)
	dst = append(dst, 0, 0)
	for _, r := range s {
		switch {
		case r != 0 && r < 0x80:
			dst = append(dst, byte(r))
		case r < 0x800:
			dst = append(dst, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
		case r < 0x10000:
			dst = append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
		default:
			hi, lo := utf16.EncodeRune(r)
			for _, u := range [2]rune{hi, lo} {
				dst = append(dst, 0xE0|byte(u>>12), 0x80|byte(u>>6&0x3F), 0x80|byte(u&0x3F))
			}
		}
	}
	n := len(dst) - lenAt - 2
	if n > math.MaxUint16 {
		return nil, fmt.Errorf("%w: string of %d bytes exceeds 65535", errNBT, n)
	}
	binary.BigEndian.PutUint16(dst[lenAt:], uint16(n))
	return dst, nil
}

// componentJSONToNBT appends a JSON chat component as network NBT. Objects
// become compounds (key order kept), strings strings, booleans bytes, whole
// numbers ints or longs, other numbers doubles. NBT lists must be of one type,
// so a list mixing strings and objects has its strings written as {"text": s};
// a top-level array becomes {"text":"","extra":[...]}, which renders the same.
func componentJSONToNBT(dst, js []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	v, err := readJSONValue(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("mc: chat component: %w: %w", ErrMalformed, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("mc: chat component: trailing data: %w", ErrMalformed)
	}
	if arr, ok := v.([]any); ok {
		v = jsonObject{{"text", ""}, {"extra", arr}}
	}
	dst = append(dst, nbtTagOf(v))
	return appendNBTValue(dst, v)
}

// jsonObject keeps an object's keys in their JSON order.
type jsonObject []struct {
	k string
	v any
}

func readJSONValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxNBTDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxNBTDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var obj jsonObject
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := readJSONValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if v != nil { // a null field is as good as absent
					obj = append(obj, struct {
						k string
						v any
					}{kt.(string), v})
				}
			}
			_, err := dec.Token() // '}'
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := readJSONValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if v != nil {
					arr = append(arr, v)
				}
			}
			_, err := dec.Token() // ']'
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case nil:
		return nil, nil
	default:
		return t, nil // string, bool, json.Number
	}
}

func nbtTagOf(v any) byte {
	switch x := v.(type) {
	case string:
		return tagString
	case bool:
		return tagByte
	case json.Number:
		if i, err := x.Int64(); err == nil {
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				return tagInt
			}
			return tagLong
		}
		return tagDouble
	case []any:
		return tagList
	}
	return tagCompound
}

func appendNBTValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendMUTF8(dst, x)
	case bool:
		if x {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case json.Number:
		switch nbtTagOf(x) {
		case tagInt:
			i, _ := x.Int64()
			return binary.BigEndian.AppendUint32(dst, uint32(int32(i))), nil
		case tagLong:
			i, _ := x.Int64()
			return binary.BigEndian.AppendUint64(dst, uint64(i)), nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%w: number %s", errNBT, x)
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case []any:
		et := tagEnd
		for i, e := range x {
			if i == 0 {
				et = nbtTagOf(e)
			} else if nbtTagOf(e) != et {
				et = tagCompound // mixed: every element becomes a compound
				break
			}
		}
		dst = append(dst, et)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(x)))
		for _, e := range x {
			if et == tagCompound {
				switch y := e.(type) {
				case jsonObject:
				case []any:
					e = jsonObject{{"text", ""}, {"extra", y}}
				default:
					e = jsonObject{{"text", scalarText(y)}}
				}
			}
			var err error
			if dst, err = appendNBTValue(dst, e); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case jsonObject:
		for _, f := range x {
			dst = append(dst, nbtTagOf(f.v))
			var err error
			if dst, err = appendMUTF8(dst, f.k); err != nil {
				return nil, err
			}
			if dst, err = appendNBTValue(dst, f.v); err != nil {
				return nil, err
			}
		}
		return append(dst, tagEnd), nil
	}
	return nil, fmt.Errorf("%w: cannot encode %T", errNBT, v)
}

// scalarText renders a scalar list element as component text.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	}
	return ""
}
