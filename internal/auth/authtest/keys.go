package authtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// PlayerKey is the chat-signing key pair the stand-in issued to an account,
// what a 1.19-1.19.2 client puts in Login Start and Velocity forwards (v2/v3).
type PlayerKey struct {
	// Private signs the client's messages (and its encryption salt).
	Private *rsa.PrivateKey
	// PublicKeyDER is the public key, X.509 SubjectPublicKeyInfo.
	PublicKeyDER []byte
	// ExpiresAt is the key's expiry, whole milliseconds.
	ExpiresAt time.Time
	// SignatureV1 is the 1.19 signature (SHA1withRSA by SigningKey over the expiry millis in decimal and the PEM body).
	SignatureV1 []byte
	// SignatureV2 is the 1.19.1+ signature (SHA1withRSA by SigningKey over UUID, expiry millis and DER, as vanilla checks).
	SignatureV2 []byte
}

// PlayerKey returns the key issued to name, if its client fetched one.
func (s *Server) PlayerKey(name string) (PlayerKey, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byName[strings.ToLower(name)]
	if !ok || s.keys[a.ID] == nil {
		return PlayerKey{}, false
	}
	return *s.keys[a.ID], true
}

func (s *Server) handleValidate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		s.refuse(w, http.StatusBadRequest, "IllegalArgumentException", "body is not JSON: "+err.Error())
		return
	}
	if _, ok := s.account(req.AccessToken); !ok {
		s.refuse(w, http.StatusForbidden, "ForbiddenOperationException", "Invalid token")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) account(token string) (Account, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byToken[token]
	if !ok {
		return Account{}, false
	}
	return *a, true
}

// handleCertificates answers as api.minecraftservices.com does: a PEM key
// pair, both signatures in base64 and ISO-8601 times.
func (s *Server) handleCertificates(w http.ResponseWriter, r *http.Request) {
	a, ok := s.account(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	k, err := s.keyFor(a)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(k.Private)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"keyPair": map[string]string{
			"privateKey": pemText("RSA PRIVATE KEY", privDER),
			"publicKey":  pemText("RSA PUBLIC KEY", k.PublicKeyDER),
		},
		"publicKeySignature":   base64.StdEncoding.EncodeToString(k.SignatureV1),
		"publicKeySignatureV2": base64.StdEncoding.EncodeToString(k.SignatureV2),
		"expiresAt":            k.ExpiresAt.UTC().Format(time.RFC3339Nano),
		"refreshedAfter":       k.ExpiresAt.Add(-8 * time.Hour).UTC().Format(time.RFC3339Nano),
	})
}

// pemText armours der without a final newline: nmp drops the first and last
// lines to get the base64 body, so a trailing newline would leave the footer in.
func pemText(kind string, der []byte) string {
	return strings.TrimSuffix(string(pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})), "\n")
}

// keyFor issues (once) the account's key pair, valid for two days from the first fetch.
func (s *Server) keyFor(a Account) (*PlayerKey, error) {
	s.mu.Lock()
	k := s.keys[a.ID]
	s.mu.Unlock()
	if k != nil {
		return k, nil
	}
	priv, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		return nil, fmt.Errorf("authtest: player key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	k = &PlayerKey{Private: priv, PublicKeyDER: der, ExpiresAt: time.Now().Add(48 * time.Hour).Truncate(time.Millisecond)}
	ms := k.ExpiresAt.UnixMilli()
	v1 := strconv.FormatInt(ms, 10) + pemText("RSA PUBLIC KEY", der)
	if k.SignatureV1, err = s.sign([]byte(v1)); err != nil {
		return nil, err
	}
	v2 := append(append([]byte{}, a.ID[:]...), binary.BigEndian.AppendUint64(nil, uint64(ms))...)
	if k.SignatureV2, err = s.sign(append(v2, der...)); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.keys[a.ID]; prev != nil { // a concurrent fetch won
		return prev, nil
	}
	s.keys[a.ID] = k
	return k, nil
}

func (s *Server) sign(msg []byte) ([]byte, error) {
	sum := sha1.Sum(msg)
	sig, err := rsa.SignPKCS1v15(nil, s.signKey, crypto.SHA1, sum[:])
	if err != nil {
		return nil, fmt.Errorf("authtest: sign: %w", err)
	}
	return sig, nil
}
