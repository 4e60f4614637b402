package mc

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
)

// cfb8Window is how many stream bytes the portable path's shift register
// holds before it is rewound; larger amortises the rewind, smaller keeps idle
// sessions small.
const cfb8Window = 64

// CFB8 is AES in 8-bit cipher feedback mode, the stream cipher of Minecraft's
// encrypted connections (the shared secret is both key and IV). Each byte
// costs one AES block encryption. Encryption is serial (each block's input
// holds the previous output byte), so it runs at the AES-NI block's latency;
// decryption's inputs are all known ciphertext, so its blocks are computed
// eight at a time, at the AES-NI unit's throughput. On amd64 with AES-NI both
// loops are assembly (cfb8_amd64.s); elsewhere the portable path calls
// crypto/aes per byte. It implements cipher.Stream.
type CFB8 struct {
	decrypt bool
	// iv is the assembly path's shift register.
	iv [aes.BlockSize]byte
	// rk is the expanded AES-128 key the assembly loops read, one for both
	// streams of a connection (they share the secret); nil on the portable path.
	rk *[176]byte
	p  *cfb8Portable // the portable path's state; nil when the assembly runs
}

// cfb8Portable is the state of the path without assembly: its IV is
// reg[pos:pos+16] and each ciphertext byte is appended at reg[pos+16] until
// the window rewinds.
type cfb8Portable struct {
	block cipher.Block
	reg   [aes.BlockSize + cfb8Window]byte
	pos   int
	ks    [aes.BlockSize]byte // the keystream block
}

// NewCFB8 returns the encrypting (decrypt false) or decrypting stream for a
// 16-byte shared secret, as vanilla sets it up after the encryption response.
func NewCFB8(secret []byte, decrypt bool) (*CFB8, error) {
	enc, dec, err := newCFB8Pair(secret, cfb8Asm)
	if decrypt {
		return dec, err
	}
	return enc, err
}

// NewCFB8Pair returns a connection's two streams for a shared secret: what it
// writes (encrypt) and what it reads (decrypt), in one allocation with one key
// schedule (a held client_only player keeps both).
func NewCFB8Pair(secret []byte) (enc, dec *CFB8, err error) {
	return newCFB8Pair(secret, cfb8Asm)
}

func newCFB8Pair(secret []byte, useAsm bool) (enc, dec *CFB8, err error) {
	if len(secret) != 16 {
		return nil, nil, fmt.Errorf("mc: shared secret is %d bytes, want 16: %w", len(secret), ErrMalformed)
	}
	pair := &struct {
		rk       [176]byte
		enc, dec CFB8
	}{}
	enc, dec = &pair.enc, &pair.dec
	dec.decrypt = true
	if useAsm {
		expandKey128(&pair.rk, secret)
		for _, c := range []*CFB8{enc, dec} {
			c.rk = &pair.rk
			copy(c.iv[:], secret)
		}
		return enc, dec, nil
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, nil, fmt.Errorf("mc: aes: %w", err)
	}
	for _, c := range []*CFB8{enc, dec} {
		c.p = &cfb8Portable{block: block}
		copy(c.p.reg[:], secret)
	}
	return enc, dec, nil
}

// XORKeyStream encrypts or decrypts src into dst; dst and src may be the same
// slice (in-place), which is how the framed connection uses it.
func (c *CFB8) XORKeyStream(dst, src []byte) {
	if len(dst) < len(src) {
		panic("mc: CFB8 output smaller than input")
	}
	if len(src) == 0 {
		return
	}
	if c.p == nil {
		if c.decrypt {
			cfb8Decrypt(c.rk, &c.iv, &dst[0], &src[0], len(src))
		} else {
			cfb8Encrypt(c.rk, &c.iv, &dst[0], &src[0], len(src))
		}
		return
	}
	c.xorPortable(dst[:len(src)], src)
}

// xorPortable is the path without assembly: one crypto/aes call per byte.
func (c *CFB8) xorPortable(dst, src []byte) {
	p := c.p
	block, reg, ks, pos := p.block, &p.reg, &p.ks, p.pos
	for i, in := range src {
		block.Encrypt(ks[:], reg[pos:pos+aes.BlockSize])
		out := in ^ ks[0]
		if c.decrypt {
			reg[pos+aes.BlockSize] = in // feedback is the ciphertext we were given
		} else {
			reg[pos+aes.BlockSize] = out // feedback is the ciphertext we produce
		}
		dst[i] = out
		if pos++; pos == cfb8Window {
			copy(reg[:aes.BlockSize], reg[cfb8Window:])
			pos = 0
		}
	}
	p.pos = pos
}

// expandKey128 writes AES-128's eleven round keys in the byte order AES-NI
// reads them (FIPS-197 §5.2). crypto/aes does not export its schedule.
func expandKey128(rk *[176]byte, key []byte) {
	copy(rk[:16], key)
	rcon := byte(1)
	for i := 16; i < 176; i += 4 {
		t := [4]byte(rk[i-4 : i])
		if i%16 == 0 {
			t = [4]byte{aesSbox[t[1]] ^ rcon, aesSbox[t[2]], aesSbox[t[3]], aesSbox[t[0]]}
			rcon = gfDouble(rcon)
		}
		for k := range 4 {
			rk[i+k] = rk[i-16+k] ^ t[k]
		}
	}
}

// gfDouble multiplies by x in AES's field GF(2⁸) mod x⁸+x⁴+x³+x+1.
func gfDouble(b byte) byte {
	if b&0x80 != 0 {
		return b<<1 ^ 0x1b
	}
	return b << 1
}

// aesSbox is AES's S-box, computed rather than transcribed: the affine map of
// each byte's multiplicative inverse, walking the field with generator 3.
var aesSbox = func() (s [256]byte) {
	rotl := func(b byte, n uint) byte { return b<<n | b>>(8-n) }
	p, q := byte(1), byte(1)
	for {
		p ^= gfDouble(p) // p *= 3
		q ^= q << 1      // q /= 3
		q ^= q << 2
		q ^= q << 4
		if q&0x80 != 0 {
			q ^= 0x09
		}
		s[p] = q ^ rotl(q, 1) ^ rotl(q, 2) ^ rotl(q, 3) ^ rotl(q, 4) ^ 0x63
		if p == 1 {
			break
		}
	}
	s[0] = 0x63
	return s
}()
