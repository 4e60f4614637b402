package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"math/big"
	"testing"
)

// oracleKey is the proxy's key as a crypto/rsa key with the same three
// primes: crypto/rsa decrypts it the slow way (no CRT), which makes it an
// independent check of loginKey's arithmetic and unpadding.
func oracleKey(t testing.TB, k *loginKey) *rsa.PrivateKey {
	t.Helper()
	var primes []*big.Int
	phi := big.NewInt(1)
	for _, p := range k.p {
		v := new(big.Int).SetBytes(p.Nat().Bytes(p))
		primes = append(primes, v)
		phi.Mul(phi, new(big.Int).Sub(v, big.NewInt(1)))
	}
	d := new(big.Int).ModInverse(big.NewInt(loginKeyExponent), phi)
	priv := &rsa.PrivateKey{PublicKey: k.pub, D: d, Primes: primes}
	if err := priv.Validate(); err != nil {
		t.Fatalf("the login key is not a valid RSA key: %v", err)
	}
	return priv
}

func TestLoginKeyShape(t *testing.T) {
	k := testKey(t).key
	product := big.NewInt(1)
	seen := map[string]bool{}
	for i, p := range k.p {
		v := new(big.Int).SetBytes(p.Nat().Bytes(p))
		if v.BitLen() != primeBits[i] || !v.ProbablyPrime(32) || seen[v.String()] {
			t.Fatalf("prime %d: %d bits, prime %v, repeated %v", i, v.BitLen(), v.ProbablyPrime(32), seen[v.String()])
		}
		seen[v.String()] = true
		product.Mul(product, v)
	}
	if product.Cmp(k.pub.N) != 0 || k.pub.N.BitLen() != KeyBits || k.pub.E != 65537 {
		t.Fatalf("modulus %d bits (product of the primes: %v), e %d", k.pub.N.BitLen(), product.Cmp(k.pub.N) == 0, k.pub.E)
	}
	_ = oracleKey(t, k) // crypto/rsa's Validate: d·e ≡ 1 for every prime
}

// Every secret a client can encrypt decrypts to itself, and ciphertexts that
// are not such a secret (any value below the modulus) give what crypto/rsa
// gives: the raw value, and the session key only where the padding holds.
func TestLoginKeyAgreesWithCryptoRSA(t *testing.T) {
	k := testKey(t).key
	priv := oracleKey(t, k)
	for i := range 300 {
		msg := make([]byte, i%(k.size()-11+1)) // every length a padding leaves room for
		_, _ = rand.Read(msg)
		ct, err := rsa.EncryptPKCS1v15(rand.Reader, &k.pub, msg)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstOracle(t, k, priv, ct, len(msg))
		if len(msg) == SharedSecretLen {
			got := make([]byte, SharedSecretLen)
			if err := k.decryptSessionKey(ct, got); err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("secret %x decrypted to %x (%v)", msg, got, err)
			}
		}
	}
	for range 300 { // random values: almost never a valid padding
		ct := make([]byte, k.size())
		_, _ = rand.Read(ct)
		ct[0] &= 0x7f // below the modulus, whose top bit is set
		checkAgainstOracle(t, k, priv, ct, SharedSecretLen)
	}
}

// checkAgainstOracle decrypts ct with k and with crypto/rsa: the same raw
// value, the same session key into a buffer of keyLen bytes.
func checkAgainstOracle(t *testing.T, k *loginKey, priv *rsa.PrivateKey, ct []byte, keyLen int) {
	t.Helper()
	em, err := k.decrypt(ct)
	if err != nil {
		t.Fatalf("decrypt %x: %v", ct, err)
	}
	want := new(big.Int).Exp(new(big.Int).SetBytes(ct), priv.D, priv.N)
	if got := new(big.Int).SetBytes(em); got.Cmp(want) != 0 || len(em) != k.size() {
		t.Fatalf("raw decryption of %x: %x, want %x", ct, em, want)
	}
	got, wantKey := make([]byte, keyLen), make([]byte, keyLen)
	_, _ = rand.Read(got)
	copy(wantKey, got)
	if err := k.decryptSessionKey(ct, got); err != nil {
		t.Fatal(err)
	}
	if err := rsa.DecryptPKCS1v15SessionKey(nil, priv, ct, wantKey); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantKey) {
		t.Fatalf("session key from %x: %x, crypto/rsa %x", ct, got, wantKey)
	}
}

// A value past the modulus cannot be a ciphertext: an error, as crypto/rsa's.
func TestLoginKeyRefusesValuesPastTheModulus(t *testing.T) {
	k := testKey(t).key
	for _, v := range []*big.Int{k.pub.N, new(big.Int).Add(k.pub.N, big.NewInt(1)), new(big.Int).Lsh(big.NewInt(1), KeyBits)} {
		ct := make([]byte, k.size()+1)
		v.FillBytes(ct)
		if ct[0] != 0 {
			ct = ct[:k.size()] // 2^1024 does not fit: any all-ones value stands for it
			for i := range ct {
				ct[i] = 0xff
			}
		} else {
			ct = ct[1:]
		}
		if err := k.decryptSessionKey(ct, make([]byte, SharedSecretLen)); err == nil {
			t.Fatalf("%x decrypted", ct)
		}
	}
}

// Hand-made paddings crypto/rsa's rules refuse or accept, at the edges. A
// message is taken only whole and of the key buffer's length; that buffer is
// sized so each case tests one rule.
func TestLoginKeyPaddingEdges(t *testing.T) {
	k := testKey(t).key
	priv := oracleKey(t, k)
	// pad builds em = first second PS sep M, with PS 0x11 bytes and M 0xab
	// bytes, the separator after ps bytes of padding.
	pad := func(first, second byte, ps int, sep byte) []byte {
		em := append([]byte{first, second}, bytes.Repeat([]byte{0x11}, ps)...)
		em = append(em, sep)
		return append(em, bytes.Repeat([]byte{0xab}, k.size()-len(em))...)
	}
	full := k.size() - 3 - SharedSecretLen // the padding before a shared secret
	cases := []struct {
		name   string
		em     []byte
		keyLen int
		takes  bool
	}{
		{"well formed", pad(0, 2, full, 0), SharedSecretLen, true},
		{"first byte not zero", pad(1, 2, full, 0), SharedSecretLen, false},
		{"block type 1", pad(0, 1, full, 0), SharedSecretLen, false},
		{"no separator", pad(0, 2, full, 0x11), SharedSecretLen, false},
		{"a message of another length", pad(0, 2, full-1, 0), SharedSecretLen, false},
		{"8 bytes of padding", pad(0, 2, 8, 0), k.size() - 11, true},
		{"7 bytes of padding", pad(0, 2, 7, 0), k.size() - 10, false},
	}
	for _, c := range cases {
		if len(c.em) != k.size() {
			t.Fatalf("%s: padded to %d bytes", c.name, len(c.em))
		}
		// Its ciphertext: em^e mod n (em is below n, its first byte 0 or 1).
		ct := new(big.Int).Exp(new(big.Int).SetBytes(c.em), big.NewInt(int64(k.pub.E)), k.pub.N).FillBytes(make([]byte, k.size()))
		got := make([]byte, c.keyLen)
		if err := k.decryptSessionKey(ct, got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if took := bytes.Equal(got, c.em[len(c.em)-c.keyLen:]); took != c.takes {
			t.Fatalf("%s: message taken %v, want %v", c.name, took, c.takes)
		}
		if c.keyLen <= k.size()-11 { // crypto/rsa refuses a longer buffer outright
			checkAgainstOracle(t, k, priv, ct, c.keyLen)
		}
	}
}

// FuzzLoginKeyDecrypt: any bytes of the key's size decrypt as crypto/rsa
// decrypts them, or are refused as past the modulus; nothing panics.
func FuzzLoginKeyDecrypt(f *testing.F) {
	k := testKey(f).key
	priv := oracleKey(f, k)
	ct, _ := rsa.EncryptPKCS1v15(rand.Reader, &k.pub, make([]byte, SharedSecretLen))
	f.Add(ct)
	f.Add(make([]byte, k.size()))
	f.Fuzz(func(t *testing.T, b []byte) {
		ct := make([]byte, k.size())
		copy(ct, b)
		if new(big.Int).SetBytes(ct).Cmp(k.pub.N) >= 0 {
			if _, err := k.decrypt(ct); err == nil {
				t.Fatalf("%x is past the modulus and decrypted", ct)
			}
			return
		}
		checkAgainstOracle(t, k, priv, ct, SharedSecretLen)
	})
}
