package perms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/infrarust-go/infrarust/internal/seal"
)

// Redis is the Store of a fleet: one document at <prefix>permissions, signed
// with the fleet's secret, and a message on <prefix>permissions:changed after
// every change so the other proxies read it at once. A document that is not
// signed right, or older than one this proxy already saw (a replay), is never
// applied: the last good one stays in force.
type Redis struct {
	rdb           redis.UniversalClient
	key, channel  string
	seal          *seal.Sealer
	poll          time.Duration
	mu            sync.Mutex
	last          Doc  // the newest good document seen
	good          bool // last was read from Redis or written here
	rejected      error
	rejectedCount int
}

// A proxy refuses a document older than one it read, so a replayed grant
// cannot come back while it runs; a proxy that starts after the replay has
// nothing to compare with and takes it (docs/commands.md#roles).

// NewRedis keeps the permissions under prefix (the fleet's key_prefix),
// signed by s (nil: unsigned, a fleet without a secret).
func NewRedis(rdb redis.UniversalClient, prefix string, s *seal.Sealer) *Redis {
	return &Redis{rdb: rdb, key: prefix + "permissions", channel: prefix + "permissions:changed", seal: s,
		poll: 30 * time.Second, last: Doc{Groups: map[string]Group{}}}
}

// Where names the key.
func (r *Redis) Where() string { return "redis key " + r.key }

// read is the document in Redis as this proxy may trust it: the stored one
// when it is signed and not older than the last seen, else the last seen
// (with the reason it was refused).
func (r *Redis) read(ctx context.Context, get func(context.Context, string) *redis.StringCmd) (Doc, error) {
	raw, err := get(ctx, r.key).Result()
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(err, redis.Nil) {
		if r.good {
			// Redis lost the key (a restart without persistence): put back the
			// newest document this proxy read, so no proxy starts from none.
			if data, err := json.Marshal(r.last); err == nil {
				_ = r.rdb.SetNX(ctx, r.key, r.seal.Seal(r.key, string(data)), 0).Err()
			}
		}
		return r.last.Clone(), nil
	}
	if err != nil {
		return Doc{}, err
	}
	var d Doc
	value, serr := r.seal.Open(r.key, raw)
	switch {
	case serr != nil:
		return r.last.Clone(), r.refuse(fmt.Errorf("the stored permissions were refused: %w", serr))
	case json.Unmarshal([]byte(value), &d) != nil:
		return r.last.Clone(), r.refuse(errors.New("the stored permissions are not a permissions document"))
	case d.Version < r.last.Version:
		return r.last.Clone(), r.refuse(fmt.Errorf("the stored permissions (version %d) are %w (version %d): a replay", d.Version, ErrOlder, r.last.Version))
	}
	if d.Groups == nil {
		d.Groups = map[string]Group{}
	}
	r.last, r.good = d.Clone(), true
	return d, nil
}

// sawGood reports whether a good document was read (or written) here.
func (r *Redis) sawGood() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.good
}

// refuse notes a refused document (r.mu held).
func (r *Redis) refuse(err error) error {
	r.rejected = err
	r.rejectedCount++
	return &RefusedError{err}
}

// ErrOlder is a document older than one this proxy saw.
var ErrOlder = errors.New("older than a document this proxy saw")

// RefusedError is a stored document that was not applied; the last good one
// stays in force.
type RefusedError struct{ err error }

func (e *RefusedError) Error() string { return e.err.Error() }
func (e *RefusedError) Unwrap() error { return e.err }

// Refused counts the documents refused so far.
func (r *Redis) Refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rejectedCount
}

// Load reads the document (see read; a refused one is reported with the last good document).
func (r *Redis) Load(ctx context.Context) (Doc, error) {
	return r.read(ctx, r.rdb.Get)
}

// Update changes the document in one optimistic transaction (retried when
// another proxy changed it meanwhile) and tells the fleet.
func (r *Redis) Update(ctx context.Context, c Change) (Doc, bool, error) {
	c, err := c.Check()
	if err != nil {
		return Doc{}, false, err
	}
	var out Doc
	var changed bool
	for range 8 {
		err = r.rdb.Watch(ctx, func(tx *redis.Tx) error {
			cur, err := r.read(ctx, tx.Get)
			var refused *RefusedError
			switch {
			case err != nil && !errors.As(err, &refused):
				return err
			case refused != nil && !r.sawGood():
				// Written over, it would drop every stored group for this
				// proxy's empty view: another secret's document (or a forgery)
				// is left for the operator.
				return fmt.Errorf("%w; not writing over it: give every proxy the same [fleet] secret, or delete the key %s to start the stored roles over", err, r.key)
			}
			next := cur.Clone()
			if changed, err = next.Apply(c); err != nil || !changed {
				out = cur
				return err
			}
			// A version is at least the time of the change, so a proxy that
			// restarted (or a Redis that lost the key) still writes a newer one
			// than any the others read: theirs refuse only what is older.
			next.Version = max(cur.Version+1, time.Now().UnixMilli())
			data, err := json.Marshal(next)
			if err != nil {
				return err
			}
			sealed := r.seal.Seal(r.key, string(data))
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, r.key, sealed, 0)
				p.Publish(ctx, r.channel, next.Version)
				return nil
			})
			if err == nil {
				out = next
			}
			return err
		}, r.key)
		if !errors.Is(err, redis.TxFailedErr) {
			break
		}
	}
	if err != nil {
		return Doc{}, false, err
	}
	if changed {
		r.mu.Lock()
		if out.Version > r.last.Version {
			r.last, r.good = out.Clone(), true
		}
		r.mu.Unlock()
	}
	return out, changed, nil
}

// Follow calls apply with the document at once (when Redis answers) and
// after every change any proxy makes, until ctx ends: on the change message,
// and every poll interval in case a message was lost while the subscription
// reconnected. refused is told of a document that was not applied.
func (r *Redis) Follow(ctx context.Context, apply func(Doc), refused func(error)) {
	sub := r.rdb.Subscribe(ctx, r.channel)
	defer sub.Close()
	msgs := sub.Channel()
	var applied int64 = -1
	// Until the first document is read, Redis is asked every second: a proxy
	// that starts while Redis is away gets its staff back soon after.
	next := func() time.Duration {
		if applied < 0 {
			return time.Second
		}
		return r.poll
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	load := func() {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		d, err := r.Load(lctx)
		if err != nil {
			var ref *RefusedError
			if errors.As(err, &ref) && refused != nil {
				refused(err)
			}
			if !errors.As(err, &ref) {
				return // Redis does not answer: keep what is in force
			}
		}
		if d.Version != applied {
			applied = d.Version
			apply(d)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-msgs:
			load()
		case <-timer.C:
			load()
			timer.Reset(next())
		}
	}
}
