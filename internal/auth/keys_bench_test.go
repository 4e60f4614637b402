package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"testing"
	"time"
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
	decrypt := cryptoRSADecrypt(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := decrypt(); err != nil {
			b.Fatal(err)
		}
	}
}

// cryptoRSADecrypt is the yardstick's decryption: a fresh two-prime
// crypto/rsa key and a shared secret encrypted to it, decrypted at each call.
func cryptoRSADecrypt(b *testing.B) func() error {
	priv, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		b.Fatal(err)
	}
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, &priv.PublicKey, make([]byte, SharedSecretLen))
	if err != nil {
		b.Fatal(err)
	}
	secret := make([]byte, SharedSecretLen)
	return func() error { return rsa.DecryptPKCS1v15SessionKey(nil, priv, ct, secret) }
}

// BenchmarkRSADecryptQuiet is one decryption as a quiet proxy makes it, ours
// and crypto/rsa's: each after 20 ms asleep (its caches, branch history and
// the core's clock given to others, as between two logins), timed alone
// (µs-each; ns/op counts the pause). Run it with -benchtime 5s or more.
func BenchmarkRSADecryptQuiet(b *testing.B) {
	k, ct := keyAndSecret(b)
	for _, tc := range []struct {
		name    string
		decrypt func() error
	}{
		{"ours", func() error { _, err := k.DecryptSharedSecret(ct); return err }},
		{"crypto-rsa", cryptoRSADecrypt(b)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var took time.Duration
			for b.Loop() {
				time.Sleep(20 * time.Millisecond)
				start := time.Now()
				if err := tc.decrypt(); err != nil {
					b.Fatal(err)
				}
				took += time.Since(start)
			}
			b.ReportMetric(float64(took.Microseconds())/float64(b.N), "µs-each")
		})
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
