package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"testing"
)

// BenchmarkRSADecrypt is one PKCS#1 v1.5 decryption with the proxy's 1024-bit
// key, the floor of a client_only login's CPU: every login decrypts its shared
// secret (and only that: see Challenge). BenchmarkCryptoRSADecrypt is the
// same with crypto/rsa and a two-prime key, the yardstick issue 31 names.
func BenchmarkRSADecrypt(b *testing.B) {
	k, ct := keyAndSecret(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.DecryptSharedSecret(ct); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCryptoRSADecrypt(b *testing.B) {
	priv, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		b.Fatal(err)
	}
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, &priv.PublicKey, make([]byte, SharedSecretLen))
	if err != nil {
		b.Fatal(err)
	}
	secret := make([]byte, SharedSecretLen)
	b.ReportAllocs()
	for b.Loop() {
		if err := rsa.DecryptPKCS1v15SessionKey(nil, priv, ct, secret); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRSADecryptCold is BenchmarkRSADecrypt as a quiet proxy runs it: the
// caches hold other work's data (16 MiB written between decryptions, outside
// the timing), as between two logins a hundred milliseconds apart.
func BenchmarkRSADecryptCold(b *testing.B) {
	k, ct := keyAndSecret(b)
	other := make([]byte, 16<<20)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for j := range other {
			other[j] = byte(i + j)
		}
		b.StartTimer()
		if _, err := k.DecryptSharedSecret(ct); err != nil {
			b.Fatal(err)
		}
	}
}

// keyAndSecret is a fresh login key and a shared secret encrypted to it.
func keyAndSecret(b *testing.B) (*KeyPair, []byte) {
	k, err := GenerateKeyPair()
	if err != nil {
		b.Fatal(err)
	}
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, &k.key.pub, make([]byte, SharedSecretLen))
	if err != nil {
		b.Fatal(err)
	}
	return k, ct
}
