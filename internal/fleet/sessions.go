package fleet

import (
	"context"
	"time"
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
			f.mu.Lock()
			e.V = f.clk.next(f.now().UnixMilli(), f.id)
			f.mu.Unlock()
			cctx, cancel := f.callCtx(ctx)
			err := f.rdb.Publish(cctx, f.k.changes(), e.encode()).Err()
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
