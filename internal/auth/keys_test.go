package auth

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"errors"
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
	if _, err := NewKeyPair(nil); err == nil {
		t.Fatal("NewKeyPair(nil) succeeded")
	}
}

func TestDecryptResponse(t *testing.T) {
	k := testKey(t)
	secret := []byte("0123456789abcdef")
	token, err := NewVerifyToken()
	if err != nil || len(token) != VerifyTokenLen {
		t.Fatalf("NewVerifyToken = %x, %v", token, err)
	}
	encSecret := clientEncrypt(t, k.PublicKeyDER(), secret)
	encToken := clientEncrypt(t, k.PublicKeyDER(), token)

	got, err := k.DecryptResponse(encSecret, encToken, token)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("DecryptResponse = %q, %v; want %q", got, err, secret)
	}

	t.Run("token of another login", func(t *testing.T) {
		other := []byte{token[0] ^ 1, token[1], token[2], token[3]}
		if _, err := k.DecryptResponse(encSecret, encToken, other); !errors.Is(err, ErrBadEncryption) {
			t.Fatalf("err = %v, want ErrBadEncryption", err)
		}
	})
	t.Run("token that does not decrypt", func(t *testing.T) {
		garbage := bytes.Repeat([]byte{0x42}, len(encToken))
		if _, err := k.DecryptResponse(encSecret, garbage, token); !errors.Is(err, ErrBadEncryption) {
			t.Fatalf("err = %v, want ErrBadEncryption", err)
		}
		if _, err := k.DecryptResponse(encSecret, nil, token); !errors.Is(err, ErrBadEncryption) {
			t.Fatalf("empty token: err = %v, want ErrBadEncryption", err)
		}
	})
	t.Run("secret of the wrong size", func(t *testing.T) {
		if _, err := k.DecryptResponse(encSecret[:10], encToken, token); !errors.Is(err, ErrBadEncryption) {
			t.Fatalf("err = %v, want ErrBadEncryption", err)
		}
	})
	t.Run("secret that does not decrypt gives random bytes, not an oracle", func(t *testing.T) {
		garbage := bytes.Repeat([]byte{0x42}, len(encSecret))
		a, err := k.DecryptResponse(garbage, encToken, token)
		if err != nil || len(a) != SharedSecretLen {
			t.Fatalf("got %x, %v; want 16 bytes and no error", a, err)
		}
		b, _ := k.DecryptResponse(garbage, encToken, token)
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
	t.Run("Decrypt reports bad padding", func(t *testing.T) {
		if _, err := k.Decrypt(bytes.Repeat([]byte{1}, len(encToken))); !errors.Is(err, ErrBadEncryption) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestVerifySaltSignature(t *testing.T) {
	player, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&player.PublicKey)
	token := []byte{1, 2, 3, 4}
	const salt = int64(-7208474946733613040)
	sign := func(tok []byte, salt int64) []byte {
		var s [8]byte
		binary.BigEndian.PutUint64(s[:], uint64(salt))
		sum := sha256.Sum256(append(append([]byte{}, tok...), s[:]...))
		sig, err := rsa.SignPKCS1v15(nil, player, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	if err := VerifySaltSignature(der, token, salt, sign(token, salt)); err != nil {
		t.Fatalf("valid signature refused: %v", err)
	}
	for name, err := range map[string]error{
		"other salt":  VerifySaltSignature(der, token, salt+1, sign(token, salt)),
		"other token": VerifySaltSignature(der, []byte{9, 9, 9, 9}, salt, sign(token, salt)),
		"bad key":     VerifySaltSignature([]byte("not a key"), token, salt, sign(token, salt)),
		"empty sig":   VerifySaltSignature(der, token, salt, nil),
	} {
		if !errors.Is(err, ErrBadEncryption) {
			t.Errorf("%s: err = %v, want ErrBadEncryption", name, err)
		}
	}
}
