package mc

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"

	gomccfb8 "github.com/Tnze/go-mc/net/CFB8"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// NIST SP 800-38A, F.3.7/F.3.8 (CFB8-AES128). Vanilla uses key = IV, so the
// vector's distinct IV is injected through the register directly.
func TestCFB8NISTVector(t *testing.T) {
	key := mustHex(t, "2b7e151628aed2a6abf7158809cf4f3c")
	iv := mustHex(t, "000102030405060708090a0b0c0d0e0f")
	plain := mustHex(t, "6bc1bee22e409f96e93d7e117393172aae2d")
	want := mustHex(t, "3b79424c9c0dd436bace9e0ed4586a4f32b9")

	withIV := func(decrypt bool) *CFB8 {
		c, err := NewCFB8(key, decrypt)
		if err != nil {
			t.Fatal(err)
		}
		c.setIV(iv)
		return c
	}
	got := make([]byte, len(plain))
	withIV(false).XORKeyStream(got, plain)
	if !bytes.Equal(got, want) {
		t.Fatalf("encrypt = %x, want %x", got, want)
	}
	back := make([]byte, len(got))
	withIV(true).XORKeyStream(back, got)
	if !bytes.Equal(back, plain) {
		t.Fatalf("decrypt = %x, want %x", back, plain)
	}
}

// Our stream must match go-mc's independent implementation byte for byte,
// across odd chunk sizes that cross the shift-register rewind.
func TestCFB8MatchesGoMC(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	secret := make([]byte, 16)
	for i := range secret {
		secret[i] = byte(rng.Uint32())
	}
	data := make([]byte, 10_000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	block, _ := aes.NewCipher(secret)
	ref := gomccfb8.NewCFB8Encrypt(block, secret)
	want := make([]byte, len(data))
	ref.XORKeyStream(want, data)

	enc, _ := NewCFB8(secret, false)
	got := append([]byte(nil), data...)
	for off := 0; off < len(got); {
		n := min(1+int(rng.Uint32()%200), len(got)-off)
		enc.XORKeyStream(got[off:off+n], got[off:off+n]) // in place
		off += n
	}
	if !bytes.Equal(got, want) {
		t.Fatal("ciphertext differs from go-mc's CFB8")
	}

	dec, _ := NewCFB8(secret, true)
	for off := 0; off < len(got); {
		n := min(1+int(rng.Uint32()%300), len(got)-off)
		dec.XORKeyStream(got[off:off+n], got[off:off+n])
		off += n
	}
	if !bytes.Equal(got, data) {
		t.Fatal("decryption did not restore the plaintext")
	}
}

func TestNewCFB8RejectsBadSecret(t *testing.T) {
	for _, n := range []int{0, 15, 17, 32} {
		if _, err := NewCFB8(make([]byte, n), false); !errors.Is(err, ErrMalformed) {
			t.Errorf("secret of %d bytes: err = %v, want ErrMalformed", n, err)
		}
	}
}

func benchCFB8(b *testing.B, stream interface{ XORKeyStream(dst, src []byte) }, size int) {
	buf := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		stream.XORKeyStream(buf, buf)
	}
}

// BenchmarkCFB8 compares our CFB8 with go-mc's (the baseline) in one run.
func BenchmarkCFB8(b *testing.B) {
	secret := bytes.Repeat([]byte{7}, 16)
	for _, size := range []int{256, 64 << 10} {
		name := "256B"
		if size > 256 {
			name = "64KiB"
		}
		b.Run("ours/encrypt/"+name, func(b *testing.B) {
			c, _ := NewCFB8(secret, false)
			benchCFB8(b, c, size)
		})
		b.Run("ours/decrypt/"+name, func(b *testing.B) {
			c, _ := NewCFB8(secret, true)
			benchCFB8(b, c, size)
		})
		b.Run("gomc/encrypt/"+name, func(b *testing.B) {
			block, _ := aes.NewCipher(secret)
			benchCFB8(b, gomccfb8.NewCFB8Encrypt(block, secret), size)
		})
		b.Run("gomc/decrypt/"+name, func(b *testing.B) {
			block, _ := aes.NewCipher(secret)
			benchCFB8(b, gomccfb8.NewCFB8Decrypt(block, secret), size)
		})
	}
}

// BenchmarkCFB8Portable is the path without assembly, the baseline the
// assembly is measured against in the same run.
func BenchmarkCFB8Portable(b *testing.B) {
	secret := bytes.Repeat([]byte{7}, 16)
	for _, decrypt := range []bool{false, true} {
		name := "encrypt/64KiB"
		if decrypt {
			name = "decrypt/64KiB"
		}
		b.Run(name, func(b *testing.B) {
			c, _ := portableCFB8(secret, decrypt)
			benchCFB8(b, c, 64<<10)
		})
	}
}

// setIV replaces the stream's IV (the secret, in Minecraft) on either path.
func (c *CFB8) setIV(iv []byte) {
	copy(c.iv[:], iv)
	if c.p != nil {
		copy(c.p.reg[:], iv)
	}
}

// portableCFB8 is one stream of the path without assembly.
func portableCFB8(secret []byte, decrypt bool) (*CFB8, error) {
	enc, dec, err := newCFB8Pair(secret, false)
	if decrypt {
		return dec, err
	}
	return enc, err
}

// A connection's two streams share one key schedule yet keep their own
// registers: each side's writes, interleaved in uneven pieces with its reads,
// decrypt on the other side.
func TestCFB8PairStreamsAreIndependent(t *testing.T) {
	secret := []byte("0123456789abcdef")
	encA, decA, err := NewCFB8Pair(secret)
	if err != nil {
		t.Fatal(err)
	}
	encB, decB, err := NewCFB8Pair(secret)
	if err != nil {
		t.Fatal(err)
	}
	a2b := bytes.Repeat([]byte("from a to b, "), 97)
	b2a := bytes.Repeat([]byte("b answers a; "), 89)
	gotB, gotA := make([]byte, len(a2b)), make([]byte, len(b2a))
	for i, j, step := 0, 0, 1; i < len(a2b) || j < len(b2a); step = step*7%61 + 1 {
		if k := min(i+step, len(a2b)); i < k {
			encA.XORKeyStream(gotB[i:k], a2b[i:k])
			decB.XORKeyStream(gotB[i:k], gotB[i:k])
			i = k
		}
		if k := min(j+step+3, len(b2a)); j < k {
			encB.XORKeyStream(gotA[j:k], b2a[j:k])
			decA.XORKeyStream(gotA[j:k], gotA[j:k])
			j = k
		}
	}
	if !bytes.Equal(gotB, a2b) || !bytes.Equal(gotA, b2a) {
		t.Fatal("a pair's streams disturbed each other")
	}
	if cfb8Asm {
		if n := testing.AllocsPerRun(10, func() { _, _, _ = NewCFB8Pair(secret) }); n != 1 {
			t.Errorf("NewCFB8Pair made %v allocations, want 1 (both streams and the key schedule)", n)
		}
	}
}
