package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"math/big"

	"filippo.io/bigmod"
)

// loginKey is the proxy's login key: RSA of KeyBits with three primes (RFC
// 8017's multi-prime RSA), decrypted by the Chinese remainder theorem over the
// three. A client sees only the modulus and the exponent, as with any RSA key.
//
// Why three: a decryption is then three exponentiations modulo 342-bit primes
// instead of two modulo 512-bit ones, about 27 % less CPU per client_only login
// (docs/benchmarks.md), and a 1024-bit modulus is no easier to factor for it:
// the best attack on it is still the number field sieve on the modulus, as
// primes of 341 bits are far beyond the elliptic-curve method's reach (three
// primes is the most recommended for 1024 bits). crypto/rsa decrypts such a
// key without the CRT (slower than a two-prime key), so the arithmetic is
// filippo.io/bigmod: crypto/rsa's own constant-time code, published as a
// module, so no step's time depends on the secret.
type loginKey struct {
	pub rsa.PublicKey
	n   *bigmod.Modulus
	p   [3]*bigmod.Modulus
	f   [3]*montField // the exponentiations modulo each prime
	d   [3][]byte     // d mod (p_i - 1), each as long as its prime
	// Garner's recombination: p0·p1 as a modulus, p1 modulo it, p1⁻¹ mod p0,
	// p0·p1 modulo n, and (p0·p1)⁻¹ mod p2.
	p01    *bigmod.Modulus
	p1In01 *bigmod.Nat
	p1Inv  *bigmod.Nat
	p01InN *bigmod.Nat
	p01Inv *bigmod.Nat
}

// loginKeyExponent is the public exponent every RSA key uses.
const loginKeyExponent = 65537

// primeBits split KeyBits among the three primes.
var primeBits = [3]int{342, 341, 341}

// newLoginKey makes a KeyBits key with three distinct primes from random.
// It runs once per start, so math/big (not constant-time) is fine here: the
// secret arithmetic of every login is bigmod's.
func newLoginKey(random io.Reader) (*loginKey, error) {
	e := big.NewInt(loginKeyExponent)
	one := big.NewInt(1)
	for {
		var ps [3]*big.Int
		for i, bits := range primeBits {
			p, err := rand.Prime(random, bits)
			if err != nil {
				return nil, err
			}
			ps[i] = p
		}
		if ps[0].Cmp(ps[1]) == 0 || ps[0].Cmp(ps[2]) == 0 || ps[1].Cmp(ps[2]) == 0 {
			continue
		}
		if n := new(big.Int).Mul(ps[0], ps[1]); n.Mul(n, ps[2]).BitLen() != KeyBits {
			continue // each prime has its top two bits set; the product may still be a bit short
		}
		var ds [3]*big.Int
		for i, p := range ps {
			if ds[i] = new(big.Int).ModInverse(e, new(big.Int).Sub(p, one)); ds[i] == nil {
				break // e divides p-1: no exponent for it
			}
		}
		if ds[0] == nil || ds[1] == nil || ds[2] == nil {
			continue
		}
		return assembleLoginKey(ps, ds)
	}
}

// assembleLoginKey precomputes what each decryption needs from the primes and
// their exponents.
func assembleLoginKey(ps, ds [3]*big.Int) (*loginKey, error) {
	p01 := new(big.Int).Mul(ps[0], ps[1])
	n := new(big.Int).Mul(p01, ps[2])
	k := &loginKey{pub: rsa.PublicKey{N: n, E: loginKeyExponent}}
	var err error
	if k.n, err = bigmod.NewModulus(n.Bytes()); err != nil {
		return nil, err
	}
	for i, p := range ps {
		if k.p[i], err = bigmod.NewModulus(p.Bytes()); err != nil {
			return nil, err
		}
		if k.f[i], err = newMontField(p); err != nil {
			return nil, err
		}
		k.d[i] = ds[i].FillBytes(make([]byte, k.p[i].Size()))
	}
	if k.p01, err = bigmod.NewModulus(p01.Bytes()); err != nil {
		return nil, err
	}
	nat := func(x *big.Int, m *bigmod.Modulus) *bigmod.Nat {
		if err != nil {
			return nil
		}
		var v *bigmod.Nat
		v, err = bigmod.NewNat().SetBytes(x.Bytes(), m)
		return v
	}
	k.p1In01 = nat(ps[1], k.p01)
	k.p1Inv = nat(new(big.Int).ModInverse(ps[1], ps[0]), k.p[0])
	k.p01InN = nat(p01, k.n)
	k.p01Inv = nat(new(big.Int).ModInverse(p01, ps[2]), k.p[2])
	if err != nil {
		return nil, fmt.Errorf("auth: login key: %w", err)
	}
	return k, nil
}

// size is the key's length in bytes, the length of every ciphertext.
func (k *loginKey) size() int { return k.n.Size() }

var (
	errCiphertextRange = errors.New("auth: ciphertext out of the key's range")
	errRSAFault        = errors.New("auth: RSA decryption failed its check")
)

// decrypt is the raw RSA decryption c^d mod n, of a ciphertext of size() bytes.
func (k *loginKey) decrypt(ciphertext []byte) ([]byte, error) {
	c, err := bigmod.NewNat().SetBytes(ciphertext, k.n)
	if err != nil {
		return nil, errCiphertextRange
	}
	var m [3]*bigmod.Nat
	var buf [montLimbs * 8]byte
	for i, f := range k.f {
		x := f.fromBytes(ciphertext)
		var r montNat
		f.exp(&r, &x, k.d[i])
		b := buf[:k.p[i].Size()]
		r.fillBytes(b)
		if m[i], err = bigmod.NewNat().SetBytes(b, k.p[i]); err != nil {
			return nil, errRSAFault // exp's result is below its prime
		}
	}
	// Garner: x = m1 + p1·((m0 - m1)·p1⁻¹ mod p0) is c^d mod p0·p1 (it is
	// below p0·p1, so no step wraps); then the same with p2 gives c^d mod n.
	h := m[0].Sub(bigmod.NewNat().Mod(m[1], k.p[0]), k.p[0])
	h.Mul(k.p1Inv, k.p[0])
	x := h.ExpandFor(k.p01).Mul(k.p1In01, k.p01).Add(m[1].ExpandFor(k.p01), k.p01)
	h = m[2].Sub(bigmod.NewNat().Mod(x, k.p[2]), k.p[2])
	h.Mul(k.p01Inv, k.p[2])
	y := h.ExpandFor(k.n).Mul(k.p01InN, k.n).Add(x.ExpandFor(k.n), k.n)
	// An arithmetic fault must not pass unseen (as crypto/rsa checks too):
	// y^e is c again. The exponent is public, so its time may vary.
	if bigmod.NewNat().ExpShortVarTime(y, loginKeyExponent, k.n).Equal(c) != 1 {
		return nil, errRSAFault
	}
	return y.Bytes(k.n), nil
}

// decryptSessionKey is PKCS#1 v1.5 decryption into key, with crypto/rsa's
// DecryptPKCS1v15SessionKey's rules: key is overwritten only when the padding
// is valid and the message is exactly len(key) bytes, and whether it was
// takes the same time either way (no padding oracle). An error says only that
// the ciphertext cannot be one for this key (out of range), or a fault.
func (k *loginKey) decryptSessionKey(ciphertext, key []byte) error {
	em, err := k.decrypt(ciphertext)
	if err != nil {
		return err
	}
	// em = 0x00 0x02 PS 0x00 M, PS at least 8 non-zero bytes.
	valid := subtle.ConstantTimeByteEq(em[0], 0) & subtle.ConstantTimeByteEq(em[1], 2)
	looking, zero := 1, 0
	for i := 2; i < len(em); i++ {
		isZero := subtle.ConstantTimeByteEq(em[i], 0)
		zero = subtle.ConstantTimeSelect(looking&isZero, i, zero)
		looking = subtle.ConstantTimeSelect(isZero, 0, looking)
	}
	// After 8 bytes of padding at least (no separator leaves zero at 0).
	valid &= subtle.ConstantTimeLessOrEq(2+8, zero)
	valid &= subtle.ConstantTimeEq(int32(len(em)-zero-1), int32(len(key)))
	subtle.ConstantTimeCopy(valid, key, em[len(em)-len(key):])
	return nil
}
