package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"strings"
	"sync"
	"testing"
)

var (
	keyOnce sync.Once
	keyPair *KeyPair
	keyErr  error
)

// testKey shares one generated key across tests: generation is the slow part.
func testKey(t testing.TB) *KeyPair {
	t.Helper()
	keyOnce.Do(func() { keyPair, keyErr = GenerateKeyPair() })
	if keyErr != nil {
		t.Fatalf("GenerateKeyPair: %v", keyErr)
	}
	return keyPair
}

// clientEncrypt does what a client does with the Encryption Request's key.
func clientEncrypt(t testing.TB, der, msg []byte) []byte {
	t.Helper()
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		t.Fatalf("client cannot parse the public key: %v", err)
	}
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, pub.(*rsa.PublicKey), msg)
	if err != nil {
		t.Fatalf("encrypt: %v", err)
	}
	return ct
}

func TestKeyPairIsVanillaShaped(t *testing.T) {
	k := testKey(t)
	pub, err := x509.ParsePKIXPublicKey(k.PublicKeyDER())
	if err != nil {
		t.Fatalf("public key DER is not SubjectPublicKeyInfo: %v", err)
	}
	rsaPub, ok := pub.(*rsa.PublicKey)
	if !ok || rsaPub.N.BitLen() != KeyBits {
		t.Fatalf("public key is %T with %d bits, want RSA %d", pub, rsaPub.N.BitLen(), KeyBits)
	}
	// Vanilla's 1024-bit key encodes to 162 bytes; clients do not care, but a
	// different size would mean a different encoding.
	if n := len(k.PublicKeyDER()); n != 162 {
		t.Fatalf("DER is %d bytes, want 162", n)
	}
}

func TestDecryptSharedSecret(t *testing.T) {
	k := testKey(t)
	secret := []byte("0123456789abcdef")
	encSecret := clientEncrypt(t, k.PublicKeyDER(), secret)

	got, err := k.DecryptSharedSecret(encSecret)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("DecryptSharedSecret = %q, %v; want %q", got, err, secret)
	}
	t.Run("secret of the wrong size", func(t *testing.T) {
		for _, ct := range [][]byte{nil, encSecret[:10], append(encSecret, 0)} {
			if _, err := k.DecryptSharedSecret(ct); !errors.Is(err, ErrBadEncryption) {
				t.Fatalf("%d bytes: err = %v, want ErrBadEncryption", len(ct), err)
			}
		}
	})
	t.Run("secret that does not decrypt gives random bytes, not an oracle", func(t *testing.T) {
		garbage := bytes.Repeat([]byte{0x42}, len(encSecret))
		a, err := k.DecryptSharedSecret(garbage)
		if err != nil || len(a) != SharedSecretLen {
			t.Fatalf("got %x, %v; want 16 bytes and no error", a, err)
		}
		b, _ := k.DecryptSharedSecret(garbage)
		if bytes.Equal(a, b) || bytes.Equal(a, secret) {
			t.Fatalf("garbage secret decrypted to a fixed value %x", a)
		}
	})
	t.Run("secret of another length gives random bytes", func(t *testing.T) {
		enc := clientEncrypt(t, k.PublicKeyDER(), []byte("short"))
		got, err := k.DecryptSharedSecret(enc)
		if err != nil || len(got) != SharedSecretLen || bytes.HasPrefix(got, []byte("short")) {
			t.Fatalf("got %q, %v", got, err)
		}
	})
}

// Every login gets its own serverId (what makes a replayed Encryption Response
// useless) and a verify token of vanilla's length, and both fit the packet.
func TestNewChallenge(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		ch, err := NewChallenge()
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.ServerID) != 16 || strings.Trim(ch.ServerID, "0123456789abcdef") != "" {
			t.Fatalf("serverId %q: want 16 lowercase hex digits (the protocol allows 20 characters)", ch.ServerID)
		}
		if len(ch.VerifyToken) != VerifyTokenLen {
			t.Fatalf("verify token %x: want %d bytes", ch.VerifyToken, VerifyTokenLen)
		}
		if seen[ch.ServerID] {
			t.Fatalf("serverId %q drawn twice in 1000 logins", ch.ServerID)
		}
		seen[ch.ServerID] = true
	}
}
