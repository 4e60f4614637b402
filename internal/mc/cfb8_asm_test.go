package mc

import (
	"bytes"
	"crypto/aes"
	"math/rand/v2"
	"testing"
)

// A few S-box entries from FIPS-197 figure 7, and its one fixed property:
// every byte appears once.
func TestAESSbox(t *testing.T) {
	for in, want := range map[byte]byte{0x00: 0x63, 0x01: 0x7c, 0x53: 0xed, 0x9a: 0xb8, 0xff: 0x16} {
		if aesSbox[in] != want {
			t.Errorf("sbox[%#x] = %#x, want %#x", in, aesSbox[in], want)
		}
	}
	var seen [256]bool
	for _, v := range aesSbox {
		seen[v] = true
	}
	for v, ok := range seen {
		if !ok {
			t.Fatalf("sbox never yields %#x", v)
		}
	}
}

// FIPS-197 appendix A.1: the last round key of 2b7e1516...
func TestExpandKey128(t *testing.T) {
	var rk [176]byte
	expandKey128(&rk, mustHex(t, "2b7e151628aed2a6abf7158809cf4f3c"))
	if want := mustHex(t, "d014f9a8c9ee2589e13f0cc8b6630ca6"); !bytes.Equal(rk[160:], want) {
		t.Fatalf("round key 10 = %x, want %x", rk[160:], want)
	}
	if want := mustHex(t, "a0fafe1788542cb123a339392a6c7605"); !bytes.Equal(rk[16:32], want) {
		t.Fatalf("round key 1 = %x, want %x", rk[16:32], want)
	}
}

// cfb8Pair returns the stream under test (assembly where this machine has
// it) and the portable one (crypto/aes per byte), same key and direction.
func cfb8Pair(t testing.TB, secret []byte, decrypt bool) (got, ref *CFB8) {
	t.Helper()
	got, err := NewCFB8(secret, decrypt)
	if err != nil {
		t.Fatal(err)
	}
	ref, err = portableCFB8(secret, decrypt)
	if err != nil {
		t.Fatal(err)
	}
	return got, ref
}

// Every length 0..300 at every alignment 0..15, both directions, in place
// and into another buffer, must match the portable path byte for byte, and
// leave the register where the portable path leaves it (checked by the next
// call).
func TestCFB8AsmMatchesPortable(t *testing.T) {
	if !cfb8Asm {
		t.Log("no AES-NI here: both sides are the portable path")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	backing := make([]byte, 16+300+16)
	out := make([]byte, 16+300+16)
	for _, decrypt := range []bool{false, true} {
		secret := make([]byte, 16)
		for i := range secret {
			secret[i] = byte(rng.Uint32())
		}
		got, ref := cfb8Pair(t, secret, decrypt)
		for n := 0; n <= 300; n++ {
			for align := range 16 {
				for i := range backing {
					backing[i] = byte(rng.Uint32())
				}
				src := backing[align : align+n]
				want := make([]byte, n)
				ref.XORKeyStream(want, src)
				if (n+align)%2 == 0 {
					got.XORKeyStream(src, src) // in place
					if !bytes.Equal(src, want) {
						t.Fatalf("decrypt=%v len %d align %d in place: %x, want %x", decrypt, n, align, src, want)
					}
				} else {
					dst := out[(align+7)%16 : (align+7)%16+n]
					got.XORKeyStream(dst, src)
					if !bytes.Equal(dst, want) {
						t.Fatalf("decrypt=%v len %d align %d: %x, want %x", decrypt, n, align, dst, want)
					}
				}
			}
		}
	}
}

// The assembly must not write past dst[len(src)-1] nor read past src.
func TestCFB8AsmStaysInBounds(t *testing.T) {
	for _, decrypt := range []bool{false, true} {
		c, _ := NewCFB8(bytes.Repeat([]byte{9}, 16), decrypt)
		for n := range 40 {
			buf := bytes.Repeat([]byte{0xAA}, n+32)
			c.XORKeyStream(buf[16:16+n], buf[16:16+n])
			for i, b := range buf {
				if (i < 16 || i >= 16+n) && b != 0xAA {
					t.Fatalf("decrypt=%v len %d: byte %d outside the slice changed", decrypt, n, i)
				}
			}
		}
	}
}

func FuzzCFB8(f *testing.F) {
	f.Add(make([]byte, 16), []byte("hello, world, this is more than sixteen bytes"), uint8(5), false)
	f.Add(bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{0xff}, 100), uint8(17), true)
	f.Fuzz(func(t *testing.T, key, data []byte, split uint8, decrypt bool) {
		if len(key) != 16 {
			return
		}
		got, ref := cfb8Pair(t, key, decrypt)
		want := make([]byte, len(data))
		ref.XORKeyStream(want, data)
		buf := append([]byte(nil), data...)
		cut := min(int(split), len(buf))
		got.XORKeyStream(buf[:cut], buf[:cut])
		got.XORKeyStream(buf[cut:], buf[cut:])
		if !bytes.Equal(buf, want) {
			t.Fatalf("split at %d: %x, want %x", cut, buf, want)
		}
	})
}

// The portable path on its own against crypto/aes done by hand, so the
// reference of the tests above is itself checked.
func TestCFB8PortableByHand(t *testing.T) {
	key := bytes.Repeat([]byte{0x42}, 16)
	block, _ := aes.NewCipher(key)
	data := []byte("the portable path is the reference of the assembly")
	iv := append([]byte(nil), key...)
	want := make([]byte, len(data))
	var ks [16]byte
	for i, b := range data {
		block.Encrypt(ks[:], iv)
		want[i] = b ^ ks[0]
		iv = append(iv[1:], want[i])
	}
	c, _ := portableCFB8(key, false)
	got := make([]byte, len(data))
	c.XORKeyStream(got, data)
	if !bytes.Equal(got, want) {
		t.Fatalf("%x, want %x", got, want)
	}
}
