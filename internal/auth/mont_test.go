package auth

import (
	"bytes"
	"crypto/rand"
	"math/big"
	mrand "math/rand/v2"
	"testing"
)

// montCase is a prime and its field.
type montCase struct {
	p *big.Int
	f *montField
}

// montFields are fields modulo primes of the login key's sizes, and modulo the
// largest a montField takes (383 bits), where its sums come closest to
// overflowing.
func montFields(t testing.TB) []montCase {
	t.Helper()
	var ps []*big.Int
	for _, bits := range []int{341, 342, 383} {
		p, err := rand.Prime(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	// 2^383 - 31, the largest prime a montField takes: every limb all ones
	// but the top's top bit and a few of the lowest, the most carries a step
	// can have.
	p := new(big.Int).Lsh(big.NewInt(1), 383)
	p.Sub(p, big.NewInt(31))
	if !p.ProbablyPrime(32) {
		t.Fatal("2^383 - 31 is not prime")
	}
	var cases []montCase
	for _, p := range append(ps, p) {
		f, err := newMontField(p)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, montCase{p, f})
	}
	return cases
}

var montR = new(big.Int).Lsh(big.NewInt(1), montLimbs*64)

func bigOfMont(z *montNat) *big.Int {
	var b [montLimbs * 8]byte
	z.fillBytes(b[:])
	return new(big.Int).SetBytes(b[:])
}

// montEdges are numbers under p that carry the most: 0, 1, p-1, p-2, and a few
// with every limb's bits set below p's top.
func montEdges(p *big.Int) []*big.Int {
	one := big.NewInt(1)
	top := new(big.Int).Sub(new(big.Int).Lsh(one, uint(p.BitLen()-1)), one)
	return []*big.Int{
		big.NewInt(0), big.NewInt(1), big.NewInt(2),
		new(big.Int).Sub(p, one), new(big.Int).Sub(p, big.NewInt(2)),
		top, new(big.Int).Rsh(p, 1),
	}
}

func TestMontFieldMulAgreesWithMathBig(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	for _, c := range montFields(t) {
		p, f := c.p, c.f
		rInv := new(big.Int).ModInverse(montR, p)
		xs := montEdges(p)
		// x may be anything under R (fromBytes hands it raw 384-bit pieces).
		xs = append(xs, new(big.Int).Sub(montR, big.NewInt(1)), new(big.Int).Add(p, big.NewInt(5)))
		ys := montEdges(p)
		for i := 0; i < 200; i++ {
			xs = append(xs, randBelow(rng, montR))
			ys = append(ys, randBelow(rng, p))
		}
		for _, x := range xs {
			for _, y := range ys {
				mx, my := montNatOf(x), montNatOf(y)
				var z montNat
				f.mul(&z, &mx, &my)
				want := new(big.Int).Mul(x, y)
				want.Mul(want, rInv).Mod(want, p)
				if got := bigOfMont(&z); got.Cmp(want) != 0 {
					t.Fatalf("p=%x: %x·%x·R⁻¹ = %x, want %x", p, x, y, got, want)
				}
				// in place, as exp squares
				f.mul(&mx, &mx, &my)
				if mx != z {
					t.Fatalf("p=%x: mul in place differs", p)
				}
			}
		}
	}
}

func randBelow(rng *mrand.Rand, max *big.Int) *big.Int {
	b := make([]byte, (max.BitLen()+7)/8)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return new(big.Int).Mod(new(big.Int).SetBytes(b), max)
}

func TestMontFieldExpAgreesWithMathBig(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	for _, c := range montFields(t) {
		p, f := c.p, c.f
		size := (p.BitLen() + 7) / 8
		ciphers := [][]byte{
			make([]byte, KeyBits/8),
			bytes.Repeat([]byte{0xff}, KeyBits/8),
			{},
			{7},
			p.Bytes(), // reduces to zero
		}
		for i := 0; i < 40; i++ {
			c := make([]byte, rng.IntN(KeyBits/8+1))
			for j := range c {
				c[j] = byte(rng.Uint32())
			}
			ciphers = append(ciphers, c)
		}
		exps := [][]byte{make([]byte, size), bytes.Repeat([]byte{0xff}, size), {1}, {0x10, 0x01}}
		for i := 0; i < 10; i++ {
			exps = append(exps, randBelow(rng, p).FillBytes(make([]byte, size)))
		}
		for _, c := range ciphers {
			x := f.fromBytes(c)
			cm := new(big.Int).Mod(new(big.Int).SetBytes(c), p)
			inMont := new(big.Int).Mul(cm, montR)
			if got := bigOfMont(&x); got.Cmp(inMont.Mod(inMont, p)) != 0 {
				t.Fatalf("p=%x: fromBytes(%x) = %x, want %x", p, c, got, inMont)
			}
			for _, e := range exps {
				var z montNat
				f.exp(&z, &x, e)
				want := new(big.Int).Exp(cm, new(big.Int).SetBytes(e), p)
				if got := bigOfMont(&z); got.Cmp(want) != 0 {
					t.Fatalf("p=%x: %x^%x = %x, want %x", p, cm, e, got, want)
				}
			}
		}
	}
}

func TestMontFieldRefusesWhatItCannotHold(t *testing.T) {
	for _, p := range []*big.Int{
		big.NewInt(1 << 20),                           // even
		new(big.Int).Add(montR, big.NewInt(1)),        // past R
		new(big.Int).Sub(montR, big.NewInt(1)),        // 384 bits: sums could pass R
		new(big.Int).Lsh(big.NewInt(3), montLimbs*64), // past R, and even
	} {
		if _, err := newMontField(p); err == nil {
			t.Errorf("newMontField(%x) took it", p)
		}
	}
}

// FuzzMontFieldExp checks a decryption's step, c^e mod p, against math/big for
// any ciphertext bytes and exponent, modulo a login-key-sized prime and the
// largest a montField takes.
func FuzzMontFieldExp(f *testing.F) {
	cases := montFields(f)
	f.Add([]byte{0xff, 0xfe}, []byte{0x80, 0x01}, uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, KeyBits/8), bytes.Repeat([]byte{0xff}, 43), uint8(3))
	f.Fuzz(func(t *testing.T, c, e []byte, which uint8) {
		if len(c) > KeyBits/8 || len(e) > 48 {
			return
		}
		m := cases[int(which)%len(cases)]
		x := m.f.fromBytes(c)
		var z montNat
		m.f.exp(&z, &x, e)
		want := new(big.Int).Exp(new(big.Int).SetBytes(c), new(big.Int).SetBytes(e), m.p)
		if got := bigOfMont(&z); got.Cmp(want) != 0 {
			t.Fatalf("c=%x e=%x p=%x: got %x, want %x", c, e, m.p, got, want)
		}
	})
}
