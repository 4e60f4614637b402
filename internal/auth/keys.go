package auth

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
)

// KeyBits is the size of the proxy's RSA key: vanilla servers use 1024 bits
// and clients accept any size, but larger keys only slow every login down.
const KeyBits = 1024

// SharedSecretLen is the AES-128 key (and CFB8 IV) length every client sends.
const SharedSecretLen = 16

// VerifyTokenLen is the length of the verify token vanilla sends; clients echo any length.
const VerifyTokenLen = 4

// ErrBadEncryption marks an Encryption Response the proxy cannot accept: the
// ciphertext does not decrypt with its key or the verify token differs. The
// message never says which, so a client learns nothing about the padding.
var ErrBadEncryption = errors.New("auth: encryption response does not match this login")

// KeyPair is the proxy's RSA key for the Encryption Request, generated once
// per start and shared by every login; safe for concurrent use.
type KeyPair struct {
	priv *rsa.PrivateKey
	der  []byte
}

// GenerateKeyPair makes the per-start key pair (KeyBits, as vanilla).
func GenerateKeyPair() (*KeyPair, error) {
	priv, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return nil, fmt.Errorf("auth: generate the RSA key for logins: %w", err)
	}
	return NewKeyPair(priv)
}

// NewKeyPair wraps an existing key, for tests that want a fixed key.
func NewKeyPair(priv *rsa.PrivateKey) (*KeyPair, error) {
	if priv == nil {
		return nil, errors.New("auth: nil RSA key")
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("auth: encode the RSA public key: %w", err)
	}
	return &KeyPair{priv: priv, der: der}, nil
}

// PublicKeyDER is the X.509 SubjectPublicKeyInfo the Encryption Request
// carries and the server-id hash covers. Callers must not modify it.
func (k *KeyPair) PublicKeyDER() []byte { return k.der }

// Decrypt undoes the client's PKCS#1 v1.5 encryption of one field.
func (k *KeyPair) Decrypt(ciphertext []byte) ([]byte, error) {
	// PKCS#1 v1.5 (deprecated in Go) is what every Minecraft client sends; the protocol leaves no choice.
	plain, err := rsa.DecryptPKCS1v15(nil, k.priv, ciphertext)
	if err != nil {
		return nil, ErrBadEncryption
	}
	return plain, nil
}

// DecryptResponse checks an Encryption Response against the verify token this
// login sent and returns the 16-byte shared secret. The token is compared in
// constant time. The secret is decrypted without revealing padding errors
// (Go's session-key decryption): a malformed secret yields a random one, the
// session server then refuses the hash and the player gets the usual
// "Failed to verify username!" instead of a padding oracle.
func (k *KeyPair) DecryptResponse(encSecret, encToken, verifyToken []byte) ([]byte, error) {
	token, err := k.Decrypt(encToken)
	if err != nil {
		return nil, fmt.Errorf("%w (verify token)", ErrBadEncryption)
	}
	if subtle.ConstantTimeCompare(token, verifyToken) != 1 {
		return nil, fmt.Errorf("%w (verify token)", ErrBadEncryption)
	}
	return k.DecryptSharedSecret(encSecret)
}

// DecryptSharedSecret returns the client's shared secret; see DecryptResponse
// for why a malformed one comes back as random bytes rather than an error.
// Only a ciphertext of the wrong size for the key is an error.
func (k *KeyPair) DecryptSharedSecret(encSecret []byte) ([]byte, error) {
	if len(encSecret) != k.priv.Size() {
		return nil, fmt.Errorf("%w (shared secret is %d bytes, want %d)", ErrBadEncryption, len(encSecret), k.priv.Size())
	}
	secret := make([]byte, SharedSecretLen)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("auth: random bytes: %w", err)
	}
	// Deprecated in Go for the same reason as in Decrypt; the protocol mandates it.
	if err := rsa.DecryptPKCS1v15SessionKey(nil, k.priv, encSecret, secret); err != nil {
		return nil, fmt.Errorf("%w (shared secret)", ErrBadEncryption)
	}
	return secret, nil
}

// NewVerifyToken returns VerifyTokenLen random bytes for one Encryption Request.
func NewVerifyToken() ([]byte, error) {
	t := make([]byte, VerifyTokenLen)
	if _, err := rand.Read(t); err != nil {
		return nil, fmt.Errorf("auth: random verify token: %w", err)
	}
	return t, nil
}

// VerifySaltSignature checks the answer 1.19-1.19.2 clients with a chat key
// may send instead of the encrypted verify token: an SHA256withRSA signature,
// by the player's public key (X.509 DER), of the verify token followed by
// the salt in big-endian order.
func VerifySaltSignature(playerKeyDER, verifyToken []byte, salt int64, signature []byte) error {
	pub, err := x509.ParsePKIXPublicKey(playerKeyDER)
	if err != nil {
		return fmt.Errorf("%w (player key: %v)", ErrBadEncryption, err)
	}
	rsaPub, ok := pub.(*rsa.PublicKey)
	if !ok {
		return fmt.Errorf("%w (player key is %T, want RSA)", ErrBadEncryption, pub)
	}
	h := sha256.New()
	h.Write(verifyToken)
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], uint64(salt))
	h.Write(s[:])
	if err := rsa.VerifyPKCS1v15(rsaPub, crypto.SHA256, h.Sum(nil), signature); err != nil {
		return fmt.Errorf("%w (salt signature)", ErrBadEncryption)
	}
	return nil
}
