package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/seal"
)

// What a proxy trusts of what it reads from Redis (docs/fleet.md, "Trust"):
// with [fleet] secret_file, every entry, message, proxy description, player
// list, wake lock, account and remembered session carries a signature
// (internal/seal) made for the key it sits in, and one without a valid one is
// dropped and counted. Messages that act on players (a session claim, a
// command, a reset) are acted on only from a live member of the fleet, within
// replayWindow of when they were made, and once.

// rejectReasons name why something read from Redis was dropped, the label of
// infrarust_fleet_rejected_total.
var rejectReasons = [...]string{"unsigned", "bad_signature", "not_member", "stale"}

const (
	rejectUnsigned = iota
	rejectBadSeal
	rejectNotMember
	rejectStale
)

// replayWindow is how old a message that acts on players may be: an older one
// is a replay (a message's version is the HLC of when it was made).
const replayWindow = time.Minute

// Rejected counts what was dropped from Redis since start, by reason.
func (f *Fleet) Rejected() map[string]uint64 {
	out := make(map[string]uint64, len(rejectReasons))
	for i, r := range rejectReasons {
		out[r] = f.rejected[i].Load()
	}
	return out
}

// reject counts and logs (at most once a minute per key) a dropped value.
func (f *Fleet) reject(reason int, key string, err error) {
	f.rejected[reason].Add(1)
	f.badEntry(key, err)
}

// opened checks a value's seal for place: the value without it, or the
// reason it is dropped (counted and logged under key).
func (f *Fleet) opened(place, key, raw string) (string, bool) {
	v, err := f.seal.Open(place, raw)
	switch {
	case errors.Is(err, seal.ErrUnsealed):
		f.reject(rejectUnsigned, key, err)
		return "", false
	case err != nil:
		f.reject(rejectBadSeal, key, err)
		return "", false
	}
	return v, true
}

// entryPlace is what an entry's seal is made for: its field of the state hash
// for what is stored, the changes channel and its kind for what is not.
func entryPlace(e Entry) string {
	switch e.Kind {
	case KindSession, KindCommand, KindReset:
		return "changes|" + string(e.Kind)
	}
	return "state|" + e.Field()
}

// sealEntry is an entry as this proxy writes it to Redis.
func (f *Fleet) sealEntry(e Entry) string { return f.seal.Seal(entryPlace(e), e.encode()) }

// openEntry reads an entry from Redis (key names where, for the log): decoded,
// checked and its seal verified.
func (f *Fleet) openEntry(key, raw string) (Entry, bool) {
	e, err := decodeEntry(raw, f.now())
	if err != nil {
		f.badEntry(key, err)
		return e, false
	}
	if _, ok := f.opened(entryPlace(e), key, raw); !ok {
		return e, false
	}
	return e, true
}

// mayAct reports whether a message that acts on players (a session claim, a
// command, a reset) is to be acted on: sent by another live member of the
// fleet, within replayWindow, and not heard before.
func (f *Fleet) mayAct(e Entry) bool {
	key := "a " + string(e.Kind) + " message from " + e.V.Proxy
	if f.now().Sub(time.UnixMilli(e.V.TS)) > replayWindow {
		f.reject(rejectStale, key, fmt.Errorf("made %s ago: a replay", f.now().Sub(time.UnixMilli(e.V.TS)).Round(time.Second)))
		return false
	}
	if !f.isMember(e.V.Proxy) {
		f.reject(rejectNotMember, key, errors.New("no live proxy of the fleet has that id"))
		return false
	}
	id := e.V.Proxy + "|" + strconv.FormatInt(e.V.TS, 10) + "|" + string(e.Kind) + "|" + e.Player
	now := f.now()
	f.heardMu.Lock()
	defer f.heardMu.Unlock()
	if f.heard == nil {
		f.heard = map[string]time.Time{}
	}
	if _, dup := f.heard[id]; dup {
		f.rejected[rejectStale].Add(1)
		return false
	}
	if len(f.heard) > 10_000 {
		for k, at := range f.heard {
			if now.Sub(at) > replayWindow {
				delete(f.heard, k)
			}
		}
	}
	f.heard[id] = now
	return true
}

// viewAskEvery bounds how often an unknown sender makes this proxy read the
// fleet view again (a proxy that joined since the last heartbeat).
const viewAskEvery = 250 * time.Millisecond

// isMember reports whether id is a live proxy of the fleet (heartbeating,
// with a description signed by the fleet's secret), reading the view again
// when it is not in the one held.
func (f *Fleet) isMember(id string) bool {
	if f.liveInView(id) {
		return true
	}
	f.heardMu.Lock()
	recent := f.now().Sub(f.viewAsked) < viewAskEvery
	if !recent {
		f.viewAsked = f.now()
	}
	f.heardMu.Unlock()
	if recent {
		return false
	}
	ctx, cancel := f.callCtx(context.Background())
	defer cancel()
	if err := f.refreshView(ctx); err != nil {
		return false
	}
	return f.liveInView(id)
}

func (f *Fleet) liveInView(id string) bool {
	f.stMu.Lock()
	defer f.stMu.Unlock()
	for _, p := range f.view {
		if p.ID == id {
			return p.Live
		}
	}
	return false
}

// CheckSecret reports whether cfg signs the fleet's messages, or why serve
// would refuse its secret (for config check).
func CheckSecret(cfg config.Fleet) (signed bool, err error) {
	secret, err := readSecret(cfg)
	return len(secret) > 0, err
}

// readSecret is the fleet's secret: INFRARUST_FLEET_SECRET[_FILE] (already in
// cfg.Secret), else secret_file; empty without either.
func readSecret(cfg config.Fleet) ([]byte, error) {
	secret := cfg.Secret
	if secret == "" && cfg.SecretFile != "" {
		fh, err := os.Open(cfg.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("[fleet] secret_file: %w (put the fleet's secret there, the same on every proxy)", err)
		}
		defer fh.Close()
		data, err := io.ReadAll(io.LimitReader(fh, 64<<10))
		if err != nil {
			return nil, fmt.Errorf("[fleet] secret_file: %w", err)
		}
		secret = strings.TrimSpace(string(data))
	}
	if secret != "" && len(secret) < config.MinFleetSecretLen {
		return nil, fmt.Errorf("[fleet] secret is %d characters; use at least %d (e.g. `openssl rand -hex 32`, the same on every proxy)", len(secret), config.MinFleetSecretLen)
	}
	if cfg.SecretFile != "" && secret == "" {
		return nil, fmt.Errorf("[fleet] secret_file %s is empty", cfg.SecretFile)
	}
	return []byte(secret), nil
}
