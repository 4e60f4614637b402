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
	n, _, _, err := inflateHeadRead(buf, stream)
	return n, err
}

// inflateHeadRead is inflateHead that also says how many bytes of stream the
// decoder looked at (used: none after them can change what it gives) and
// whether a dynamic block's header was among them (the costly part).
func inflateHeadRead(buf, stream []byte) (n, used int, dynamic bool, err error) {
	if len(stream) < 2 {
		return 0, len(stream), false, headMalformed("zlib header cut short")
	}
	cmf, flg := stream[0], stream[1]
	switch {
	case cmf&0x0f != 8 || cmf>>4 > 7:
		return 0, 2, false, headMalformed("zlib header: not deflate with a window of at most 32 KiB")
	case (uint16(cmf)<<8|uint16(flg))%31 != 0:
		return 0, 2, false, headMalformed("zlib header check bits")
	}
	body := stream[2:]
	if flg&0x20 != 0 {
		// A preset dictionary: only the empty one (Adler-32 of nothing is 1) can
		// be honoured, as compress/zlib does with no dictionary given.
		if len(body) < 4 || body[0]|body[1]|body[2] != 0 || body[3] != 1 {
			return 0, len(stream), false, headMalformed("zlib header asks for a preset dictionary")
		}
		body = body[4:]
	}
	r := headBits{in: body}
	n, dynamic, err = r.blocks(buf)
	return n, len(stream) - len(body) + r.pos, dynamic, err
}

// blocks decodes blocks into buf until it is full or the stream ends.
func (r *headBits) blocks(buf []byte) (n int, dynamic bool, err error) {
	for n < len(buf) {
		final, err := r.bits(1)
		if err != nil {
			return n, dynamic, nil
		}
		kind, err := r.bits(2)
		if err != nil {
			return n, dynamic, nil
		}
		switch kind {
		case 0:
			n, err = r.stored(buf, n)
		case 1:
			fixed := fixedHuffman()
			n, err = r.codes(buf, n, &fixed.lit, &fixed.dist)
		case 2:
			dynamic = true
			var lengths [286 + 30]uint8
			var nlit int
			var litCount, distCount [16]uint16
			if nlit, litCount, distCount, err = r.dynamicHeader(&lengths); err != nil {
				break
			}
			lit := headCode{lengths: lengths[:nlit], count: litCount}
			dist := headCode{lengths: lengths[nlit:], count: distCount}
			if err = lit.check(); err == nil {
				if err = dist.check(); err == nil {
					n, err = r.codes(buf, n, &lit, &dist)
				}
			}
		default:
			return n, dynamic, headMalformed("deflate block type 3")
		}
		switch {
		case err == errHeadShort:
			return n, dynamic, nil
		case err != nil:
			return n, dynamic, err
		case final == 1:
			return n, dynamic, nil
		}
	}
	return n, dynamic, nil
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

// fill loads whole bytes until n bits are buffered or the input ends.
func (r *headBits) fill(n uint) {
	for r.nbit < n && r.pos < len(r.in) {
		r.bit |= uint32(r.in[r.pos]) << r.nbit
		r.pos++
		r.nbit += 8
	}
}

// bits returns the next n (≤ 16) bits.
func (r *headBits) bits(n uint) (uint32, error) {
	if r.fill(n); r.nbit < n {
		return 0, errHeadShort
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

// headCode is a canonical Huffman code as its lengths (0: symbol unused) and
// how many codes each length has. The symbol of a decoded code is found by a
// scan of the lengths: a few symbols are decoded per code, so sorting every
// symbol up front would cost more than it saves.
type headCode struct {
	lengths []uint8
	count   [16]uint16
}

// countedCode is the code of lengths, counted here (the fixed codes).
func countedCode(lengths []uint8) headCode {
	h := headCode{lengths: lengths}
	for _, l := range lengths {
		h.count[l&15]++
	}
	h.count[0] = 0
	return h
}

// check refuses an over-subscribed set of lengths; an incomplete one is allowed
// (RFC 1951 permits a single distance code) and fails only if an unused code
// is met.
func (h *headCode) check() error {
	left := 1
	for l := 1; l < 16; l++ {
		left = left<<1 - int(h.count[l])
		if left < 0 {
			return headMalformed("over-subscribed Huffman code")
		}
	}
	return nil
}

// symbol is the k-th symbol (in symbol order) whose code has length l.
func (h *headCode) symbol(l, k int) int {
	for sym, sl := range h.lengths {
		if int(sl) == l {
			if k == 0 {
				return sym
			}
			k--
		}
	}
	return -1 // not reached: count says there are more than k
}

// decode reads one symbol of h. Deflate sends a code's bits most significant
// first, so the code grows a bit at a time until it falls among the codes of
// its length (canonical codes of one length are consecutive, in symbol order).
func (r *headBits) decode(h *headCode) (int, error) {
	code, first := 0, 0
	for l := 1; l < 16; l++ {
		b, err := r.bits(1)
		if err != nil {
			return 0, err
		}
		code |= int(b)
		count := int(h.count[l])
		if code-first < count {
			return h.symbol(l, code-first), nil
		}
		first = (first + count) << 1
		code <<= 1
	}
	return 0, headMalformed("a code no symbol has")
}

// clTable is a dynamic block's code length code, looked up seven bits (its
// longest code) at a time: it decodes a hundred or more symbols per block.
// An entry is symbol<<3 | length; 0 means no code.
type clTable [1 << 7]uint8

func (t *clTable) init(lengths *[19]uint8) error {
	var count [8]int
	for _, l := range lengths {
		count[l]++
	}
	count[0] = 0
	left := 1
	for l := 1; l < 8; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return headMalformed("over-subscribed code length code")
		}
	}
	// RFC 1951 3.2.2: the first code of each length, then codes in symbol order.
	var next [8]int
	for l, code := 1, 0; l < 8; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		code := next[l]
		next[l]++
		rev := 0 // the code as it arrives: its first bit lowest
		for i := range int(l) {
			rev |= (code >> i & 1) << (int(l) - 1 - i)
		}
		for idx := rev; idx < len(t); idx += 1 << l {
			t[idx] = uint8(sym<<3) | l
		}
	}
	return nil
}

// clSymbol reads one symbol of the code length code.
func (r *headBits) clSymbol(t *clTable) (int, error) {
	r.fill(7)
	e := t[r.bit&127]
	l := uint(e & 7)
	switch {
	case l == 0 && r.nbit < 7, l > r.nbit:
		return 0, errHeadShort
	case l == 0:
		return 0, headMalformed("a code no symbol has")
	}
	r.bit >>= l
	r.nbit -= l
	return int(e >> 3), nil
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
func (r *headBits) codes(buf []byte, n int, lit, dist *headCode) (int, error) {
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

// dynamicHeader reads a dynamic block's header: its code lengths into lengths
// (literal/length codes first, then distance codes) and how many codes of each
// length each code has, counted as the lengths arrive (a run of repeats counts
// at once) rather than in a second pass.
func (r *headBits) dynamicHeader(lengths *[286 + 30]uint8) (nlit int, litCount, distCount [16]uint16, err error) {
	v, err := r.bits(14)
	if err != nil {
		return 0, litCount, distCount, err
	}
	nlit, ndist, nclen := int(v&0x1f)+257, int(v>>5&0x1f)+1, int(v>>10)+4
	if nlit > 286 || ndist > 30 {
		return 0, litCount, distCount, headMalformed("too many length or distance codes")
	}
	var clLengths [19]uint8
	for i := range nclen {
		l, err := r.bits(3)
		if err != nil {
			return 0, litCount, distCount, err
		}
		clLengths[codeLengthOrder[i]] = uint8(l)
	}
	var cl clTable
	if err := cl.init(&clLengths); err != nil {
		return 0, litCount, distCount, err
	}
	total := nlit + ndist
	for i := 0; i < total; {
		sym, err := r.clSymbol(&cl)
		if err != nil {
			return 0, litCount, distCount, err
		}
		if sym < 16 {
			lengths[i] = uint8(sym)
			if i < nlit {
				litCount[sym]++
			} else {
				distCount[sym]++
			}
			i++
			continue
		}
		var repeat uint32
		value := uint8(0)
		switch sym {
		case 16:
			if i == 0 {
				return 0, litCount, distCount, headMalformed("a repeat with nothing before it")
			}
			value = lengths[i-1] & 15
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
			return 0, litCount, distCount, err
		}
		end := i + int(repeat)
		if end > total {
			return 0, litCount, distCount, headMalformed("code lengths run past their count")
		}
		if value != 0 { // zeros are already there, and no code counts them
			litPart := max(0, min(end, nlit)-i)
			litCount[value] += uint16(litPart)
			distCount[value] += uint16(int(repeat) - litPart)
			for ; i < end; i++ {
				lengths[i] = value
			}
		}
		i = end
	}
	litCount[0], distCount[0] = 0, 0
	return nlit, litCount, distCount, nil
}

type fixedCodes struct {
	litLengths  [288]uint8
	distLengths [30]uint8
	lit, dist   headCode
}

// fixedHuffman is block type 1's codes, built once.
var fixedHuffman = sync.OnceValue(func() *fixedCodes {
	f := &fixedCodes{}
	for i := range f.litLengths {
		switch {
		case i < 144:
			f.litLengths[i] = 8
		case i < 256:
			f.litLengths[i] = 9
		case i < 280:
			f.litLengths[i] = 7
		default:
			f.litLengths[i] = 8
		}
	}
	for i := range f.distLengths {
		f.distLengths[i] = 5
	}
	f.lit = countedCode(f.litLengths[:])
	f.dist = countedCode(f.distLengths[:])
	return f
})
