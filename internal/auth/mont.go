package auth

import (
	"errors"
	"math/big"
	"math/bits"
)

// montLimbs is the size of a montField's numbers: six 64-bit limbs, 384 bits,
// room for each of the login key's three 341-bit primes.
const montLimbs = 6

// montNat is a number of a montField, least significant limb first.
type montNat [montLimbs]uint64

// montField is arithmetic modulo one odd prime of at most 383 bits, in
// Montgomery form (x stands for x·R mod p, R = 2^384), written for the login
// key's exponentiations. filippo.io/bigmod (crypto/rsa's code) spends most of
// a decryption in its length-generic multiplication; this one has the length
// fixed, so its loops have no bounds to check and its numbers live in arrays
// (docs/benchmarks.md has the measurement that asked for it).
//
// Every operation on secret values takes the same steps whatever the values:
// no branch and no memory address depends on them (bits.Mul64, Add64 and
// Sub64 are single instructions where Go has assembly for them, and a choice
// between two values is a mask).
type montField struct {
	p     montNat
	pInv  uint64     // -p⁻¹ mod 2^64
	one   montNat    // R mod p: 1 in Montgomery form
	rPows [3]montNat // R², R³ and R⁴ mod p: they bring each 384-bit piece of a 1024-bit number in
}

var errMontModulus = errors.New("auth: a login key's prime must be odd and under 2^383")

// newMontField prepares arithmetic modulo p. It runs once per key, so
// math/big (not constant-time) is fine here.
func newMontField(p *big.Int) (*montField, error) {
	if p.Bit(0) == 0 || p.BitLen() > montLimbs*64-1 {
		return nil, errMontModulus
	}
	f := &montField{p: montNatOf(p)}
	// Newton's iteration for p⁻¹ mod 2^64: each step doubles the bits that are
	// right, and p itself is right in the low three (p·p ≡ 1 mod 8 for odd p).
	inv := f.p[0]
	for i := 0; i < 5; i++ {
		inv *= 2 - f.p[0]*inv
	}
	f.pInv = -inv
	r := new(big.Int).Lsh(big.NewInt(1), montLimbs*64)
	rPow := new(big.Int).Mod(r, p)
	f.one = montNatOf(rPow)
	for i := range f.rPows {
		rPow.Mul(rPow, r).Mod(rPow, p)
		f.rPows[i] = montNatOf(rPow)
	}
	return f, nil
}

// montNatOf is x (below 2^384) as limbs.
func montNatOf(x *big.Int) montNat {
	var z montNat
	b := x.FillBytes(make([]byte, montLimbs*8))
	z.setBytes(b)
	return z
}

// setBytes sets z from a big-endian number of up to 48 bytes.
func (z *montNat) setBytes(b []byte) {
	*z = montNat{}
	for i := range b {
		pos := len(b) - 1 - i // byte's place from the least significant
		z[pos/8] |= uint64(b[i]) << (8 * (pos % 8))
	}
}

// fillBytes writes z into b big-endian, b's length being the prime's size
// (z is below the prime, so the bytes left out are zero).
func (z *montNat) fillBytes(b []byte) {
	for i := range b {
		pos := len(b) - 1 - i
		b[i] = byte(z[pos/8] >> (8 * (pos % 8)))
	}
}

// mul sets z = x·y·R⁻¹ mod p (coarsely integrated operand scanning). x may be
// any number under R and y must be under p: the sum then stays under 2p, and
// one subtraction of p, kept or not by a mask, leaves z under p. z may be x
// or y. The limbs are written out so the running sum stays in registers (the
// loop over them made a decryption 1.2× as long).
func (f *montField) mul(z, x, y *montNat) {
	var t0, t1, t2, t3, t4, t5, t6 uint64 // t6: the sum's seventh limb within a step
	p := &f.p
	for i := 0; i < montLimbs; i++ {
		// t += x·y[i]
		yi := y[i]
		var c, t7 uint64
		c, t0 = madd(x[0], yi, t0, 0)
		c, t1 = madd(x[1], yi, t1, c)
		c, t2 = madd(x[2], yi, t2, c)
		c, t3 = madd(x[3], yi, t3, c)
		c, t4 = madd(x[4], yi, t4, c)
		c, t5 = madd(x[5], yi, t5, c)
		t6, t7 = bits.Add64(t6, c, 0)
		// t = (t + u·p) / 2^64, u chosen to clear the lowest limb.
		u := t0 * f.pInv
		c, _ = madd(u, p[0], t0, 0)
		c, t0 = madd(u, p[1], t1, c)
		c, t1 = madd(u, p[2], t2, c)
		c, t2 = madd(u, p[3], t3, c)
		c, t3 = madd(u, p[4], t4, c)
		c, t4 = madd(u, p[5], t5, c)
		var cc uint64
		t5, cc = bits.Add64(t6, c, 0)
		t6 = t7 + cc
	}
	f.reduceOnce(z, &montNat{t0, t1, t2, t3, t4, t5}, t6)
}

// madd is a·b + t + c as two limbs; it cannot overflow them.
func madd(a, b, t, c uint64) (hi, lo uint64) {
	hi, lo = bits.Mul64(a, b)
	var cc uint64
	lo, cc = bits.Add64(lo, t, 0)
	hi += cc
	lo, cc = bits.Add64(lo, c, 0)
	hi += cc
	return hi, lo
}

// reduceOnce sets z to t (with its seventh limb hi) less p if that does not go
// below zero, else to t; t must be under 2p.
func (f *montField) reduceOnce(z, t *montNat, hi uint64) {
	var d montNat
	var b uint64
	for j := 0; j < montLimbs; j++ {
		d[j], b = bits.Sub64(t[j], f.p[j], b)
	}
	_, b = bits.Sub64(hi, 0, b)
	keep := -b // all ones when t < p: keep t
	for j := 0; j < montLimbs; j++ {
		z[j] = t[j]&keep | d[j]&^keep
	}
}

// add sets z = x + y mod p, both under p.
func (f *montField) add(z, x, y *montNat) {
	var t montNat
	var c uint64
	for j := 0; j < montLimbs; j++ {
		t[j], c = bits.Add64(x[j], y[j], c)
	}
	f.reduceOnce(z, &t, c)
}

// fromBytes is a big-endian number of up to 144 bytes (the 128-byte
// ciphertext) reduced modulo p, in Montgomery form: each 384-bit piece c_j
// of it, times R^(j+2) in a Montgomery multiplication, is c_j·2^(384j)·R.
func (f *montField) fromBytes(b []byte) montNat {
	var z montNat
	for j := 0; len(b) > 0; j++ {
		n := min(len(b), montLimbs*8)
		var piece, term montNat
		piece.setBytes(b[len(b)-n:])
		b = b[:len(b)-n]
		f.mul(&term, &piece, &f.rPows[j])
		f.add(&z, &z, &term)
	}
	return z
}

// montWindow is the exponent's window: 4 bits, a table of 16 powers.
const montWindow = 4

// exp sets z = x^e (x in Montgomery form, z in plain form, below p), e a
// big-endian exponent. Every window of e costs the same: four squarings, a
// scan of the whole table and a multiplication, whatever its bits.
func (f *montField) exp(z, x *montNat, e []byte) {
	var table [1 << montWindow]montNat
	table[0] = f.one
	table[1] = *x
	for i := 2; i < len(table); i++ {
		f.mul(&table[i], &table[i-1], x)
	}
	acc := f.one
	for _, b := range e {
		for _, w := range [2]uint64{uint64(b >> 4), uint64(b & 15)} {
			for k := 0; k < montWindow; k++ {
				f.mul(&acc, &acc, &acc)
			}
			var p0, p1, p2, p3, p4, p5 uint64
			for i := range table {
				// all ones when i == w, with no branch on w
				mask := -((uint64(i) ^ w - 1) >> 63)
				e := &table[i]
				p0 |= e[0] & mask
				p1 |= e[1] & mask
				p2 |= e[2] & mask
				p3 |= e[3] & mask
				p4 |= e[4] & mask
				p5 |= e[5] & mask
			}
			pick := montNat{p0, p1, p2, p3, p4, p5}
			f.mul(&acc, &acc, &pick)
		}
	}
	// Out of Montgomery form: acc·1·R⁻¹.
	f.mul(z, &acc, &montNat{1})
}
