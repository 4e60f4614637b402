package auth

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
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

// ErrBadEncryption marks an Encryption Response the proxy cannot accept: its
// shared secret is not a ciphertext of the proxy key's size.
var ErrBadEncryption = errors.New("auth: encryption response does not match this login")

// KeyPair is the proxy's RSA key for the Encryption Request, generated once
// per start and shared by every login; safe for concurrent use.
type KeyPair struct {
	key *loginKey
	der []byte
}

// GenerateKeyPair makes the per-start key pair: KeyBits, as vanilla, with
// three primes (loginKey says why).
func GenerateKeyPair() (*KeyPair, error) {
	key, err := newLoginKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("auth: generate the RSA key for logins: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.pub)
	if err != nil {
		return nil, fmt.Errorf("auth: encode the RSA public key: %w", err)
	}
	return &KeyPair{key: key, der: der}, nil
}

// PublicKeyDER is the X.509 SubjectPublicKeyInfo the Encryption Request
// carries and the server-id hash covers. Callers must not modify it.
func (k *KeyPair) PublicKeyDER() []byte { return k.der }

// DecryptSharedSecret returns the client's 16-byte shared secret. It is
// decrypted without revealing padding errors (loginKey.decryptSessionKey): a
// malformed secret yields a random one, the session server then refuses the
// hash and the player gets the usual "Failed to verify username!" instead of a
// padding oracle. Only a ciphertext that cannot be one for the key (its size,
// or a value past the modulus) is an error.
func (k *KeyPair) DecryptSharedSecret(encSecret []byte) ([]byte, error) {
	if len(encSecret) != k.key.size() {
		return nil, fmt.Errorf("%w (shared secret is %d bytes, want %d)", ErrBadEncryption, len(encSecret), k.key.size())
	}
	secret := make([]byte, SharedSecretLen)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("auth: random bytes: %w", err)
	}
	// PKCS#1 v1.5 is what every Minecraft client sends; the protocol leaves no choice.
	if err := k.key.decryptSessionKey(encSecret, secret); err != nil {
		return nil, fmt.Errorf("%w (shared secret)", ErrBadEncryption)
	}
	return secret, nil
}

// Challenge is what one login's Encryption Request asks of the client.
//
// ServerID is new for every login (vanilla before 1.7 did the same, and
// BungeeCord still does; vanilla since sends ""): the client's join and the
// proxy's hasJoined hash it with the shared secret, so an Encryption Response
// recorded from one login and replayed on another names a join the session
// server never saw. That is what the verify token guards against in vanilla,
// which decrypts it with a second RSA operation (as long as the shared
// secret's); the proxy sends the token, as every client expects one, and
// does not decrypt the answer.
type Challenge struct {
	ServerID    string
	VerifyToken []byte
}

// NewChallenge draws a login's serverId (16 hex digits, 64 random bits; the
// protocol allows 20 characters) and its VerifyTokenLen-byte verify token.
func NewChallenge() (Challenge, error) {
	var b [8 + VerifyTokenLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Challenge{}, fmt.Errorf("auth: random login challenge: %w", err)
	}
	return Challenge{ServerID: hex.EncodeToString(b[:8]), VerifyToken: b[8:]}, nil
}
