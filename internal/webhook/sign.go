// Package webhook delivers player events to operators' HTTP endpoints: a Decider
// asks and waits for the answer (bounded by its timeout), a Notifier queues and
// forgets (bounded queue, retries, drops counted). Both sign the body with
// HMAC-SHA256 when a secret is set.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Headers every request carries.
const (
	// SignatureHeader holds "sha256=" and the hex HMAC-SHA256 of the body under the secret.
	SignatureHeader = "X-Infrarust-Signature-256"
	// EventHeader names the event, so a receiver can route before parsing.
	EventHeader = "X-Infrarust-Event"
	// DeliveryHeader is the delivery's id, the same across retries (deduplicate on it).
	DeliveryHeader = "X-Infrarust-Delivery"
)

// Sign returns the SignatureHeader value for body.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a SignatureHeader value in constant time; receivers written in Go
// can use the same code (docs/events.md shows it).
func Verify(secret, body []byte, header string) bool {
	got, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	sig, err := hex.DecodeString(got)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(sig, m.Sum(nil))
}
