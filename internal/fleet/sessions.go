package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// One player, one session across the fleet: a proxy that lets a player in
// publishes the player's identity on the changes channel (KindSession, never
// stored), and every other proxy that holds a session of the same identity
// settles it by the same rule, so no reply is needed: under duplicate_login
// "replace" the older session ends, under "refuse" the newer one does. Nothing
// on the login path waits for Redis: the claim is queued and published by a
// goroutine of its own; with Redis away, two sessions may live until it is back.

// claimQueue bounds the claims waiting to be published; past it a claim is
// dropped (logged): a login flood must not grow memory.
const claimQueue = 1024

// Claimed publishes that this proxy let in the player of identity key at at,
// having proven it with strength. It never blocks.
func (f *Fleet) Claimed(key string, at time.Time, strength int) {
	e := Entry{Kind: KindSession, Player: key, At: at.UnixNano(), Proof: strength}
	select {
	case f.claims <- e:
	default:
		f.log.Warn("fleet: a player's session was not announced to the other proxies (too many at once); a duplicate elsewhere lives on until the backend ends it", "identity", key)
	}
}

// publishClaims sends queued claims until ctx ends.
func (f *Fleet) publishClaims(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-f.claims:
			if e.Kind == kindRelease {
				cctx, cancel := f.callCtx(ctx)
				err := releaseClaimScript.Run(cctx, f.rdb, []string{f.k.session(e.Player)}, f.id).Err()
				cancel()
				if err != nil && ctx.Err() == nil {
					f.log.Debug("fleet: a session claim was not released; the next login finds it stale", "identity", e.Player, "err", err)
				}
				continue
			}
			f.mu.Lock()
			e.V = f.clk.next(f.now().UnixMilli(), f.id)
			f.mu.Unlock()
			cctx, cancel := f.callCtx(ctx)
			err := f.rdb.Publish(cctx, f.k.changes(), f.sealEntry(e)).Err()
			cancel()
			if err != nil && ctx.Err() == nil {
				f.log.Debug("fleet: a session claim was not published", "identity", e.Player, "err", err)
			}
		}
	}
}

// onSession settles a claim another proxy published.
func (f *Fleet) onSession(e Entry) {
	if e.V.Proxy == f.id {
		return
	}
	f.opts.Local.SessionClaimed(e.Player, time.Unix(0, e.At), e.Proof, e.V.Proxy, f.id)
}

// Fleet-wide claims, for duplicate_login "refuse": a login that claims an
// identity writes session:<identity> (signed: the proxy, when, how strongly
// proven) before the player is let in, and a second login on any proxy finds
// it there. A claim is released when its session ends; one left behind by a
// proxy that died, or by a session that ended while Redis was away, is known
// by its holder: not live, or no longer listing a player of that identity once
// a heartbeat has passed since the claim.

// sessionClaim is the value of a session:<identity> key.
type sessionClaim struct {
	Proxy string `json:"proxy"`
	At    int64  `json:"at"` // unix ms
	Proof int    `json:"proof"`
}

// claimTTL bounds a claim nobody released (Redis away at the session's end
// and no later login to take it over).
const claimTTL = 24 * time.Hour

// claimScript sets a claim unless one is there (ARGV[3] "0"), in which case it
// returns the one there; with ARGV[3] "1" it sets it anyway.
// KEYS[1] session:<identity>; ARGV: value, ttl (ms), force.
var claimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and ARGV[3] == '0' then
  return cur
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`)

// releaseClaimScript drops a claim only if this proxy holds it.
// KEYS[1] session:<identity>; ARGV: proxy id.
var releaseClaimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, c = pcall(cjson.decode, cur)
  if ok and type(c) == 'table' and c.proxy == ARGV[1] then
    return redis.call('DEL', KEYS[1])
  end
end
return 0
`)

// Claim makes this proxy's claim of identity key fleet-wide before the player
// is let in. holder names the live proxy holding a session of it that proved
// at least strength (the login is then refused); "" when the claim is this
// proxy's now. An error: the fleet cannot tell (Redis unreachable), and the
// caller's local rule stands alone.
func (f *Fleet) Claim(ctx context.Context, key string, at time.Time, strength int) (holder string, err error) {
	if down, why := f.down(); down {
		return "", fmt.Errorf("%w: %s", ErrUnreachable, why)
	}
	rk := f.k.session(key)
	raw, _ := json.Marshal(sessionClaim{Proxy: f.id, At: at.UnixMilli(), Proof: strength})
	value := f.seal.Seal(rk, string(raw))
	cctx, cancel := f.callCtx(ctx)
	defer cancel()
	ttl := claimTTL.Milliseconds()
	cur, err := claimScript.Run(cctx, f.rdb, []string{rk}, value, ttl, "0").Text()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrUnreachable, f.explain(err))
	}
	if h, ok := f.heldBy(cctx, rk, key, cur, strength); ok {
		return h, nil
	}
	if err := claimScript.Run(cctx, f.rdb, []string{rk}, value, ttl, "1").Err(); err != nil && !errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("%w: %s", ErrUnreachable, f.explain(err))
	}
	return "", nil
}

// heldBy reports whether the claim cur still holds against a login that
// proved strength: signed, by another live member, as strong or stronger, and
// either younger than a heartbeat timeout or still listed by its holder.
func (f *Fleet) heldBy(ctx context.Context, rk, key, cur string, strength int) (string, bool) {
	v, ok := f.opened(rk, rk, cur)
	if !ok {
		return "", false
	}
	var c sessionClaim
	if json.Unmarshal([]byte(v), &c) != nil || c.Proxy == "" || c.Proxy == f.id || c.Proof < strength || !f.isMember(c.Proxy) {
		return "", false
	}
	if f.now().Sub(time.UnixMilli(c.At)) < f.cfg.HeartbeatTimeout.D() {
		return c.Proxy, true // its holder has not published its players since
	}
	return c.Proxy, f.lists(ctx, c.Proxy, key)
}

// lists reports whether proxy's published players include one of identity
// key ("uuid:<32 hex>"); a failure to read counts as listed (refuse stays safe).
func (f *Fleet) lists(ctx context.Context, proxy, key string) bool {
	h, err := f.rdb.HGetAll(ctx, f.k.players(proxy)).Result()
	if err != nil {
		return true
	}
	want := strings.TrimPrefix(key, "uuid:")
	for field, raw := range h {
		v, err := f.seal.Open(playerPlace(proxy, field), raw)
		if err != nil {
			continue
		}
		var p Player
		if json.Unmarshal([]byte(v), &p) == nil && strings.ReplaceAll(strings.ToLower(p.UUID), "-", "") == want {
			return true
		}
	}
	return false
}

// Released gives up this proxy's fleet-wide claim of identity key (its session
// ended). It never blocks; a release lost with Redis away is found stale by
// the next login (heldBy).
func (f *Fleet) Released(key string) {
	select {
	case f.claims <- Entry{Kind: kindRelease, Player: key}:
	default:
	}
}

// kindRelease is a release queued for publishClaims; it is never sent.
const kindRelease Kind = "release"
