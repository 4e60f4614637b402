package auth

import (
	"crypto/sha1"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Known answers published with Minecraft's protocol documentation (wiki.vg
// "Protocol Encryption"): the digest of SHA-1 over just the name.
func TestServerIDHashKnownVectors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Notch", "4ed1f46bbe04bc756bcb17c0c7ce3e4632f06a48"},
		{"jeb_", "-7c9d5b0044c130109a5d7b5fb5c317c02b4e28c1"},
		{"simon", "88e16a1019277b15d58faf0541e11910eb756f6"},
	} {
		if got := ServerIDHash(tc.in, nil, nil); got != tc.want {
			t.Errorf("ServerIDHash(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// The three parts are hashed as one stream, so where the bytes sit does not matter.
func TestServerIDHashConcatenates(t *testing.T) {
	if a, b := ServerIDHash("No", []byte("tc"), []byte("h")), ServerIDHash("Notch", nil, nil); a != b {
		t.Fatalf("split input hashed differently: %s vs %s", a, b)
	}
	if a, b := ServerIDHash("", []byte("secret1"), []byte("key")), ServerIDHash("", []byte("secret2"), []byte("key")); a == b {
		t.Fatalf("different secrets gave the same hash %s", a)
	}
}

// bigIntDigest is the textbook way (Java's BigInteger) used as an oracle.
func bigIntDigest(sum []byte) string {
	n := new(big.Int).SetBytes(sum)
	if len(sum) > 0 && sum[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(sum))))
	}
	return n.Text(16)
}

func TestMinecraftHexDigestEdges(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{nil, "0"},
		{make([]byte, 20), "0"},
		{[]byte{0xff, 0xff}, "-1"},
		{[]byte{0x80, 0x00}, "-8000"},
		{[]byte{0x00, 0x0f}, "f"},
		{[]byte{0x7f, 0xff}, "7fff"},
		{[]byte{0xff, 0x00}, "-100"},
	} {
		if got := MinecraftHexDigest(tc.in); got != tc.want {
			t.Errorf("MinecraftHexDigest(%x) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestMinecraftHexDigestMatchesBigInteger(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		sum := make([]byte, 20)
		for j := range sum {
			sum[j] = byte(r.Uint32())
		}
		if i%7 == 0 { // force leading zero bytes now and then
			sum[0], sum[1] = 0, 0
		}
		if got, want := MinecraftHexDigest(sum), bigIntDigest(sum); got != want {
			t.Fatalf("MinecraftHexDigest(%x) = %s, want %s", sum, got, want)
		}
	}
}

func FuzzMinecraftHexDigest(f *testing.F) {
	f.Add([]byte{0xff})
	f.Add([]byte{0x80, 0, 0})
	f.Add([]byte("Notch"))
	f.Fuzz(func(t *testing.T, sum []byte) {
		if got, want := MinecraftHexDigest(sum), bigIntDigest(sum); got != want {
			t.Fatalf("MinecraftHexDigest(%x) = %s, want %s", sum, got, want)
		}
	})
}

var benchSink string

// BenchmarkServerIDHash measures the hash as a login computes it (16-byte
// secret, 162-byte key DER); BigIntBaseline is the same through math/big, the
// way a straight port of Java's BigInteger would do it.
func BenchmarkServerIDHash(b *testing.B) {
	secret := make([]byte, SharedSecretLen)
	der := make([]byte, 162)
	for i := range der {
		der[i] = byte(i * 7)
	}
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			benchSink = ServerIDHash("", secret, der)
		}
	})
	b.Run("BigIntBaseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := sha1.New()
			h.Write(secret)
			h.Write(der)
			benchSink = bigIntDigest(h.Sum(nil))
		}
	})
}

// Inputs of any length hash as the textbook SHA-1 + BigInteger would.
func TestServerIDHashLongInput(t *testing.T) {
	der := make([]byte, 600)
	for i := range der {
		der[i] = byte(i)
	}
	h := sha1.New()
	h.Write([]byte("id"))
	h.Write([]byte("secret"))
	h.Write(der)
	if got, want := ServerIDHash("id", []byte("secret"), der), bigIntDigest(h.Sum(nil)); got != want {
		t.Fatalf("long input: %s, want %s", got, want)
	}
	if got, want := ServerIDHash("id", []byte("secret"), der[:100]), bigIntDigest(sha1Sum("id", "secret", der[:100])); got != want {
		t.Fatalf("short input: %s, want %s", got, want)
	}
}

func sha1Sum(a, b string, c []byte) []byte {
	h := sha1.New()
	h.Write([]byte(a))
	h.Write([]byte(b))
	h.Write(c)
	return h.Sum(nil)
}
