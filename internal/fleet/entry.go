package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
)

// Kind says what an Entry changes.
type Kind string

const (
	// KindDrain is an address's drain intent (drained or enabled); it is stored.
	KindDrain Kind = "drain"
	// KindBan is a ban or its lifting; it is stored.
	KindBan Kind = "ban"
	// KindReset clears an address's failures on every proxy; it is only published:
	// it is about this moment's failures, so it is never replayed later.
	KindReset Kind = "reset"
	// KindSession says a proxy let a player in (sessions.go); it is only published.
	KindSession Kind = "session"
	// KindMaintenance is a server's maintenance (On) or its end; it is stored.
	KindMaintenance Kind = "maintenance"
	// KindCommand asks the proxy To to send or kick one of its players (an
	// in-game /send or /kick typed on another proxy); it is only published.
	KindCommand Kind = "command"
)

// maxEntryBytes bounds one entry read from Redis: a ban with a long reason is a few
// KiB; anything bigger is not ours and is skipped.
const maxEntryBytes = 64 << 10

// Entry is one change of shared operator state, as stored in the state hash, sent
// on the changes channel and kept in the proxy's journal.
type Entry struct {
	Kind    Kind   `json:"kind"`
	Server  string `json:"server,omitempty"`
	Address string `json:"address,omitempty"`
	Drained bool   `json:"drained,omitempty"`
	// On is a server's maintenance, for KindMaintenance.
	On bool `json:"on,omitempty"`
	// BanType and BanValue name a ban (value normalised by the ban store), so a
	// lifted ban keeps its identity after Ban is gone.
	BanType  bans.Type `json:"ban_type,omitempty"`
	BanValue string    `json:"ban_value,omitempty"`
	// Ban is the ban in force; nil when it was lifted.
	Ban *bans.Ban `json:"ban,omitempty"`
	// Player and At: a session's identity key and when the proxy let it in (unix
	// nanoseconds), for KindSession.
	Player string `json:"player,omitempty"`
	At     int64  `json:"at,omitempty"`
	// Proof is how strongly the session proved its identity (0 a bare offline
	// name, 1 an account's password, 2 Mojang), for KindSession: a weaker
	// session never ends a stronger one.
	Proof int `json:"proof,omitempty"`
	// To, Action and Arg, for KindCommand: the proxy that holds Player, "send"
	// (Arg: the server) or "kick" (Arg: the reason).
	To     string  `json:"to,omitempty"`
	Action string  `json:"action,omitempty"`
	Arg    string  `json:"arg,omitempty"`
	V      Version `json:"v"`
}

// Field is the entry's identity in the state hash and the journal: later changes
// of the same field replace earlier ones.
func (e Entry) Field() string {
	switch e.Kind {
	case KindBan:
		return "ban|" + string(e.BanType) + "|" + e.BanValue
	default:
		return string(e.Kind) + "|" + e.Server + "|" + e.Address
	}
}

// check refuses an entry this proxy cannot act on (a newer build's kind, a
// half-written one), so bad data in Redis is skipped with a reason, never applied.
func (e Entry) check() error {
	switch e.Kind {
	case KindDrain, KindReset:
		if e.Server == "" || e.Address == "" {
			return errors.New("a drain or reset without server or address")
		}
	case KindMaintenance:
		if e.Server == "" || e.Address != "" {
			return errors.New("a maintenance without server (or with an address)")
		}
	case KindSession:
		if e.Player == "" || e.At <= 0 {
			return errors.New("a session claim without player or time")
		}
	case KindCommand:
		if e.Player == "" || e.To == "" || (e.Action != "send" && e.Action != "kick") || (e.Action == "send" && e.Arg == "") {
			return errors.New("a command without player, proxy, a known action or its server")
		}
	case KindBan:
		if e.BanType == "" || e.BanValue == "" {
			return errors.New("a ban without type or value")
		}
		if e.Ban != nil && (e.Ban.Type != e.BanType || e.Ban.Value != e.BanValue) {
			return errors.New("a ban whose body names another ban")
		}
	default:
		return fmt.Errorf("unknown kind %q (a newer proxy's?)", e.Kind)
	}
	if e.V.Proxy == "" {
		return errors.New("no version")
	}
	return nil
}

// maxFuture is how far ahead of this proxy's clock a version, a claim or a
// heartbeat may be: further is not a clock's skew but a forged or corrupt entry,
// which would push every proxy's clock (and every later change) past it for good.
const maxFuture = 5 * time.Minute

// decodeEntry reads one entry from Redis, bounded and checked; now is this
// proxy's clock.
func decodeEntry(data string, now time.Time) (Entry, error) {
	var e Entry
	if len(data) > maxEntryBytes {
		return e, fmt.Errorf("entry of %d bytes is over the %d-byte limit", len(data), maxEntryBytes)
	}
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return e, fmt.Errorf("entry is not JSON: %w", err)
	}
	if e.Kind == KindBan && e.Ban == nil {
		// An unban carries no "ban" field; an explicit null is not ours (a
		// half-written or hand-made entry) and must not lift a ban.
		var fields map[string]json.RawMessage
		if json.Unmarshal([]byte(data), &fields) == nil {
			if raw, ok := fields["ban"]; ok && string(raw) == "null" {
				return e, errors.New(`"ban": null is not an unban (an unban has no ban field)`)
			}
		}
	}
	if err := e.check(); err != nil {
		return e, err
	}
	limit := now.Add(maxFuture)
	if time.UnixMilli(e.V.TS).After(limit) || (e.At > 0 && time.Unix(0, e.At).After(limit)) {
		return e, fmt.Errorf("version %s is more than %s ahead of this proxy's clock", time.UnixMilli(e.V.TS).UTC().Format(time.RFC3339), maxFuture)
	}
	return e, nil
}

// encode is the entry's stored form.
func (e Entry) encode() string {
	b, _ := json.Marshal(e) // plain data: cannot fail
	return string(b)
}

// dead reports whether the entry no longer changes anything on any proxy (an
// expired or lifted ban), so it may be forgotten once old enough.
func (e Entry) dead(now time.Time) bool {
	return e.Kind == KindBan && (e.Ban == nil || (e.Ban.ExpiresAt != nil && !now.Before(*e.Ban.ExpiresAt)))
}

// describe names the change for logs and messages.
func (e Entry) describe() string {
	switch e.Kind {
	case KindDrain:
		if e.Drained {
			return "drain of " + e.Address + " on " + e.Server
		}
		return "enable of " + e.Address + " on " + e.Server
	case KindReset:
		return "reset of " + e.Address + " on " + e.Server
	case KindMaintenance:
		if e.On {
			return "maintenance of " + e.Server
		}
		return "end of the maintenance of " + e.Server
	case KindSession:
		return "session of " + e.Player
	case KindCommand:
		return e.Action + " of " + e.Player + " on " + e.To
	case KindBan:
		if e.Ban == nil {
			return "unban of " + string(e.BanType) + " " + e.BanValue
		}
		return "ban of " + string(e.BanType) + " " + e.BanValue
	}
	return strings.TrimSpace(string(e.Kind) + " " + e.Field())
}

// sameBan reports whether two bans say the same thing, so applying a ban the
// store already holds is skipped (no file write, no duplicate event).
func sameBan(a, b bans.Ban) bool {
	if a.Type != b.Type || a.Value != b.Value || a.Reason != b.Reason || a.CreatedBy != b.CreatedBy || !a.CreatedAt.Equal(b.CreatedAt) {
		return false
	}
	if (a.ExpiresAt == nil) != (b.ExpiresAt == nil) {
		return false
	}
	return a.ExpiresAt == nil || a.ExpiresAt.Equal(*b.ExpiresAt)
}
