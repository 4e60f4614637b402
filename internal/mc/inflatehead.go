package mc

import (
	"fmt"
	"sync"
)

// inflateHead decodes the first len(buf) bytes of a zlib stream (RFC 1950
// around RFC 1951) and stops there. A relay reads a compressed packet's id
// from its first one or two bytes; compress/flate decodes a whole 32 KiB
// window before it returns any, and resets tens of KiB of state per stream,
// which made reading the id of a large packet cost half of inflating it and
// that of a small one all of it. This decoder keeps its state on the stack
// and walks Huffman codes a bit at a time, which is slow per symbol and fast
// for the handful it decodes. n < len(buf) with a nil error means the stream
// (or the input) ended first. The checksum is not verified: only a prefix is
// read; Decode verifies the whole packet when it is needed.
func inflateHead(buf, stream []byte) (int, error) {
	if len(stream) < 2 {
		return 0, headMalformed("zlib header cut short")
	}
	cmf, flg := stream[0], stream[1]
	switch {
	case cmf&0x0f != 8 || cmf>>4 > 7:
		return 0, headMalformed("zlib header: not deflate with a window of at most 32 KiB")
	case (uint16(cmf)<<8|uint16(flg))%31 != 0:
		return 0, headMalformed("zlib header check bits")
	case flg&0x20 != 0:
		return 0, headMalformed("zlib header asks for a preset dictionary")
	}
	r := headBits{in: stream[2:]}
	n := 0
	for n < len(buf) {
		final, err := r.bits(1)
		if err != nil {
			return n, nil
		}
		kind, err := r.bits(2)
		if err != nil {
			return n, nil
		}
		switch kind {
		case 0:
			n, err = r.stored(buf, n)
		case 1:
			fixed := fixedHuffman()
			n, err = r.codes(buf, n, &fixed.lit, &fixed.dist)
		case 2:
			var lit, dist headHuffman
			if err = r.dynamicTables(&lit, &dist); err == nil {
				n, err = r.codes(buf, n, &lit, &dist)
			}
		default:
			return n, headMalformed("deflate block type 3")
		}
		switch {
		case err == errHeadShort:
			return n, nil
		case err != nil:
			return n, err
		case final == 1:
			return n, nil
		}
	}
	return n, nil
}

// errHeadShort is the input ending inside a block: a truncated stream, which
// yields what it decoded (as io.ErrUnexpectedEOF did from compress/flate).
var errHeadShort = fmt.Errorf("mc: zlib: input ends inside a block: %w", ErrMalformed)

func headMalformed(what string) error {
	return fmt.Errorf("mc: zlib: %w: %s", ErrMalformed, what)
}

// headBits reads a deflate stream's bits, least significant first.
type headBits struct {
	in   []byte
	pos  int
	bit  uint32
	nbit uint
}

// bits returns the next n (≤ 16) bits.
func (r *headBits) bits(n uint) (uint32, error) {
	for r.nbit < n {
		if r.pos >= len(r.in) {
			return 0, errHeadShort
		}
		r.bit |= uint32(r.in[r.pos]) << r.nbit
		r.pos++
		r.nbit += 8
	}
	v := r.bit & (1<<n - 1)
	r.bit >>= n
	r.nbit -= n
	return v, nil
}

// stored copies a stored block's first bytes into buf[n:].
func (r *headBits) stored(buf []byte, n int) (int, error) {
	r.bit, r.nbit = 0, 0 // the rest of the current byte is padding
	if len(r.in)-r.pos < 4 {
		return n, errHeadShort
	}
	size := int(r.in[r.pos]) | int(r.in[r.pos+1])<<8
	if nsize := int(r.in[r.pos+2]) | int(r.in[r.pos+3])<<8; size != ^nsize&0xffff {
		return n, headMalformed("stored block length and its complement disagree")
	}
	r.pos += 4
	take := min(size, len(buf)-n)
	if len(r.in)-r.pos < take {
		n += copy(buf[n:], r.in[r.pos:])
		return n, errHeadShort
	}
	copy(buf[n:], r.in[r.pos:r.pos+take])
	r.pos += take // take < size only when buf is full: nothing more is read
	return n + take, nil
}

// headHuffman is a canonical Huffman code: how many codes of each length, and
// the symbols in code order.
type headHuffman struct {
	count  [16]uint16
	symbol [288]uint16
}

// build makes the code of lengths (0: symbol unused). An over-subscribed set
// of lengths is malformed; an incomplete one is allowed (RFC 1951 permits a
// single distance code) and fails only if an unused code is met.
func (h *headHuffman) build(lengths []uint8) error {
	h.count = [16]uint16{}
	for _, l := range lengths {
		h.count[l]++
	}
	h.count[0] = 0
	left := 1
	for l := 1; l < 16; l++ {
		left = left<<1 - int(h.count[l])
		if left < 0 {
			return headMalformed("over-subscribed Huffman code")
		}
	}
	var offs [16]uint16
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	for sym, l := range lengths {
		if l != 0 {
			h.symbol[offs[l]] = uint16(sym)
			offs[l]++
		}
	}
	return nil
}

// decode reads one symbol of h. Deflate sends a code's bits most significant
// first, so the code grows a bit at a time until it falls among the codes of
// its length.
func (r *headBits) decode(h *headHuffman) (int, error) {
	code, first, index := 0, 0, 0
	for l := 1; l < 16; l++ {
		b, err := r.bits(1)
		if err != nil {
			return 0, err
		}
		code |= int(b)
		count := int(h.count[l])
		if code-first < count {
			return int(h.symbol[index+code-first]), nil
		}
		index += count
		first = (first + count) << 1
		code <<= 1
	}
	return 0, headMalformed("a code no symbol has")
}

var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	// codeLengthOrder is the order a dynamic block sends its code length code in.
	codeLengthOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// codes decodes a Huffman block's symbols into buf[n:] until buf is full or
// the block ends. Nothing precedes the stream, so a match may only reach back
// into what this stream has produced.
func (r *headBits) codes(buf []byte, n int, lit, dist *headHuffman) (int, error) {
	for n < len(buf) {
		sym, err := r.decode(lit)
		if err != nil {
			return n, err
		}
		switch {
		case sym < 256:
			buf[n] = byte(sym)
			n++
			continue
		case sym == 256:
			return n, nil
		case sym-257 >= len(lengthBase):
			return n, headMalformed("length symbol out of range")
		}
		sym -= 257
		extra, err := r.bits(uint(lengthExtra[sym]))
		if err != nil {
			return n, err
		}
		length := int(lengthBase[sym]) + int(extra)
		dsym, err := r.decode(dist)
		if err != nil {
			return n, err
		}
		if dsym >= len(distBase) {
			return n, headMalformed("distance symbol out of range")
		}
		if extra, err = r.bits(uint(distExtra[dsym])); err != nil {
			return n, err
		}
		d := int(distBase[dsym]) + int(extra)
		if d > n {
			return n, headMalformed("a match reaches back before the stream")
		}
		for ; length > 0 && n < len(buf); length-- {
			buf[n] = buf[n-d]
			n++
		}
	}
	return n, nil
}

// dynamicTables reads a dynamic block's header into its two codes.
func (r *headBits) dynamicTables(lit, dist *headHuffman) error {
	v, err := r.bits(14)
	if err != nil {
		return err
	}
	nlit, ndist, nclen := int(v&0x1f)+257, int(v>>5&0x1f)+1, int(v>>10)+4
	if nlit > 286 || ndist > 30 {
		return headMalformed("too many length or distance codes")
	}
	var lengths [286 + 30]uint8
	for i := range nclen {
		l, err := r.bits(3)
		if err != nil {
			return err
		}
		lengths[codeLengthOrder[i]] = uint8(l)
	}
	var clen headHuffman
	if err := clen.build(lengths[:19]); err != nil {
		return err
	}
	lengths = [286 + 30]uint8{}
	for i := 0; i < nlit+ndist; {
		sym, err := r.decode(&clen)
		if err != nil {
			return err
		}
		if sym < 16 {
			lengths[i] = uint8(sym)
			i++
			continue
		}
		var repeat uint32
		var value uint8
		switch sym {
		case 16:
			if i == 0 {
				return headMalformed("a repeat with nothing before it")
			}
			value = lengths[i-1]
			repeat, err = r.bits(2)
			repeat += 3
		case 17:
			repeat, err = r.bits(3)
			repeat += 3
		default:
			repeat, err = r.bits(7)
			repeat += 11
		}
		if err != nil {
			return err
		}
		if i+int(repeat) > nlit+ndist {
			return headMalformed("code lengths run past their count")
		}
		for range repeat {
			lengths[i] = value
			i++
		}
	}
	if err := lit.build(lengths[:nlit]); err != nil {
		return err
	}
	return dist.build(lengths[nlit : nlit+ndist])
}

type fixedCodes struct{ lit, dist headHuffman }

// fixedHuffman is block type 1's codes, built once.
var fixedHuffman = sync.OnceValue(func() *fixedCodes {
	var lengths [288]uint8
	for i := range lengths {
		switch {
		case i < 144:
			lengths[i] = 8
		case i < 256:
			lengths[i] = 9
		case i < 280:
			lengths[i] = 7
		default:
			lengths[i] = 8
		}
	}
	f := &fixedCodes{}
	_ = f.lit.build(lengths[:])
	var d [30]uint8
	for i := range d {
		d[i] = 5
	}
	_ = f.dist.build(d[:])
	return f
})
