package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// The wake lock: when players arrive at several proxies for one sleeping server,
// the proxy that takes wake:<server> (SET NX with a TTL) starts it and renews the
// lock every third of the TTL until the start ends; the others wait for the
// server to answer. A holder that dies stops renewing, so the lock is gone at
// most wake_lock_ttl later and the next proxy takes it.

// TryWake tries to take server's wake lock for this proxy. held says whether it
// did; then the lock is renewed until release is called (release is safe to call
// twice). When another proxy holds it, holder names that proxy. err means the
// fleet cannot tell (Redis unreachable): the server manager then starts the server
// itself, because a server started twice is better than one never started.
func (f *Fleet) TryWake(ctx context.Context, server string) (release func(), held bool, holder string, err error) {
	if down, why := f.down(); down {
		return nil, false, "", fmt.Errorf("%w: %s", ErrUnreachable, why)
	}
	var tok [12]byte
	_, _ = rand.Read(tok[:])
	key := f.k.wake(server)
	value := f.seal.Seal(key, f.id+" "+hex.EncodeToString(tok[:]))
	ttl := f.cfg.WakeLockTTL.D()
	cctx, cancel := f.callCtx(ctx)
	defer cancel()
	for try := 0; ; try++ {
		ok, err := f.rdb.SetNX(cctx, key, value, ttl).Result()
		if err != nil {
			return nil, false, "", fmt.Errorf("%w: %s", ErrUnreachable, f.explain(err))
		}
		if ok {
			break
		}
		cur, err := f.rdb.Get(cctx, key).Result()
		if err != nil {
			continue // released meanwhile: take it
		}
		// A lock is a live member's, signed: a forged or dead one (which might
		// never expire) is removed, and the lock taken.
		if v, sealed := f.opened(key, key, cur); sealed {
			holder, _, _ = strings.Cut(v, " ")
			if holder == f.id || f.isMember(holder) || try > 0 {
				return nil, false, holder, nil
			}
		}
		f.log.Warn("fleet: a wake lock held by no live member of the fleet was removed", "server", server, "holder", holder)
		if err := releaseScript.Run(cctx, f.rdb, []string{key}, cur).Err(); err != nil {
			return nil, false, "", fmt.Errorf("%w: %s", ErrUnreachable, f.explain(err))
		}
		if try > 0 {
			return nil, false, holder, nil
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer close(done)
		f.renew(key, value, ttl, stop)
	}()
	var once bool
	release = func() {
		if once {
			return
		}
		once = true
		close(stop)
		<-done
		rctx, cancel := context.WithTimeout(context.Background(), f.cfg.Timeout.D())
		defer cancel()
		if err := releaseScript.Run(rctx, f.rdb, []string{key}, value).Err(); err != nil {
			f.log.Debug("wake lock not released; it expires by itself", "server", server, "err", err)
		}
	}
	return release, true, f.id, nil
}

// renew keeps the lock alive every third of its TTL until stop closes; it gives
// up once another proxy holds it (ours expired during an outage).
func (f *Fleet) renew(key, value string, ttl time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-f.leaving: // the proxy is exiting; the lock expires by itself
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), f.cfg.Timeout.D())
		n, err := renewScript.Run(ctx, f.rdb, []string{key}, value, ttl.Milliseconds()).Int()
		cancel()
		switch {
		case err != nil:
			f.log.Debug("wake lock not renewed; trying again", "key", key, "err", err)
		case n == 0:
			f.log.Warn("wake lock lost while starting (Redis was unreachable longer than wake_lock_ttl); another proxy may start the server too", "key", key)
			return
		}
	}
}
