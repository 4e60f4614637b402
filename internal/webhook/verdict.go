package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Envelope is the JSON body of every request.
type Envelope struct {
	// ID is the delivery id (also in DeliveryHeader).
	ID string `json:"id"`
	// Seq grows with every event the proxy fires: notifications may arrive out of
	// order (parallel senders, retries), and receivers order them by it.
	Seq uint64 `json:"seq"`
	// Event is the event name ("pre_login", ...).
	Event string `json:"event"`
	// Time is when the event fired.
	Time time.Time `json:"timestamp"`
	// Data is the event's fields.
	Data any `json:"data"`
	// Result is the decision the event ended with (notifications only).
	Result *Verdict `json:"result,omitempty"`
}

// Verdict is a deciding webhook's answer, and the decision a notification reports.
type Verdict struct {
	// Action is "continue" (or "allow", or empty), "deny", "redirect" or "limbo";
	// "disconnect" is read as "deny".
	Action string `json:"action"`
	// Reason is what a denied player reads.
	Reason string `json:"reason,omitempty"`
	// Server is the redirect target.
	Server string `json:"server,omitempty"`
}

// MaxAnswer bounds the answer body read from a deciding webhook.
const MaxAnswer = 64 << 10

// ErrBadAnswer means the answer is not a verdict this proxy understands.
var ErrBadAnswer = errors.New("webhook answer is not a verdict")

// ParseVerdict reads a deciding webhook's answer. An empty body means "continue".
// Unknown fields are ignored (room for later versions); unknown actions, a
// redirect without a server and anything that is not one JSON object are errors.
func ParseVerdict(body []byte) (Verdict, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return Verdict{Action: "continue"}, nil
	}
	var v Verdict
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&v); err != nil {
		return Verdict{}, fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	if dec.More() {
		return Verdict{}, fmt.Errorf("%w: more than one JSON value", ErrBadAnswer)
	}
	switch v.Action {
	case "", "continue", "allow":
		v.Action = "continue"
	case "deny", "disconnect":
		v.Action = "deny"
	case "redirect":
		if v.Server == "" {
			return Verdict{}, fmt.Errorf("%w: redirect without a server", ErrBadAnswer)
		}
	case "limbo":
	default:
		return Verdict{}, fmt.Errorf("%w: unknown action %q (use continue, deny, redirect or limbo)", ErrBadAnswer, v.Action)
	}
	const maxText = 1024
	if len(v.Reason) > maxText || len(v.Server) > maxText {
		return Verdict{}, fmt.Errorf("%w: reason or server longer than %d bytes", ErrBadAnswer, maxText)
	}
	return v, nil
}
