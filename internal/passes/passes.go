// Package passes remembers which names passed bot verification from which
// address, until when: across restarts (a bbolt file in the data dir) and,
// with [fleet], across the proxies of a fleet (Redis, signed with the fleet's
// secret). The proxy keeps the passes it uses in memory in front of it.
package passes

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/infrarust-go/infrarust/internal/seal"
)

// Store keeps passes. Names compare without case.
type Store interface {
	// Pass remembers that name passed from ip, until until.
	Pass(ctx context.Context, name, ip string, until time.Time) error
	// Passed is until when name's pass from ip holds; ok false when there is
	// none at now.
	Passed(ctx context.Context, name, ip string, now time.Time) (until time.Time, ok bool, err error)
	// Forget drops every pass of a name (from any address) or of an address
	// (for any name) and reports how many.
	Forget(ctx context.Context, nameOrIP string) (int, error)
	Close() error
}

// key is a pass's key: the name in lower case, a separator, the address.
func key(name, ip string) string { return strings.ToLower(name) + "|" + ip }

// matches reports whether a pass's key is one of nameOrIP's.
func matches(k, nameOrIP string) bool {
	name, ip, _ := strings.Cut(k, "|")
	return name == strings.ToLower(nameOrIP) || ip == nameOrIP
}

// FileName is the passes' file in the data dir.
const FileName = "verify.db"

var bucket = []byte("passes")

// Bolt is the Store of a proxy on its own: <data_dir>/verify.db.
type Bolt struct{ db *bolt.DB }

// OpenBolt opens (or creates) the passes' file in dataDir.
func OpenBolt(dataDir string) (*Bolt, error) {
	path := filepath.Join(dataDir, FileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("verification passes %s are in use by another process (a running proxy?)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("verification passes %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("verification passes %s: %w", path, err)
	}
	return &Bolt{db: db}, nil
}

func (b *Bolt) Close() error { return b.db.Close() }

func (b *Bolt) Pass(_ context.Context, name, ip string, until time.Time) error {
	v := binary.BigEndian.AppendUint64(nil, uint64(until.UnixNano()))
	// A pass lost in a crash costs its player a second check: no fsync of its own
	// is worth a burst of passes waiting on one, so they share Batch's.
	return b.db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put([]byte(key(name, ip)), v) })
}

func (b *Bolt) Passed(_ context.Context, name, ip string, now time.Time) (until time.Time, ok bool, err error) {
	err = b.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucket).Get([]byte(key(name, ip)))
		if len(v) == 8 {
			until = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
		}
		return nil
	})
	return until, err == nil && now.Before(until), err
}

func (b *Bolt) Forget(_ context.Context, nameOrIP string) (n int, err error) {
	err = b.db.Update(func(tx *bolt.Tx) error {
		var gone [][]byte
		if err := tx.Bucket(bucket).ForEach(func(k, _ []byte) error {
			if matches(string(k), nameOrIP) {
				gone = append(gone, bytes.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range gone {
			if err := tx.Bucket(bucket).Delete(k); err != nil {
				return err
			}
		}
		n = len(gone)
		return nil
	})
	return n, err
}

// Sweep drops the passes that ended before now.
func (b *Bolt) Sweep(now time.Time) (removed int, err error) {
	err = b.db.Update(func(tx *bolt.Tx) error {
		var dead [][]byte
		if err := tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			if len(v) != 8 || int64(binary.BigEndian.Uint64(v)) <= now.UnixNano() {
				dead = append(dead, bytes.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range dead {
			if err := tx.Bucket(bucket).Delete(k); err != nil {
				return err
			}
		}
		removed = len(dead)
		return nil
	})
	return removed, err
}

// Redis is the Store of a fleet: <prefix>verify:pass:<name>|<ip>, each
// expiring with its pass, signed with the fleet's secret (a forged pass is
// not one).
type Redis struct {
	rdb    redis.UniversalClient
	prefix string
	seal   *seal.Sealer
}

// NewRedis keeps passes under prefix (the fleet's key_prefix), signed by s
// (nil: unsigned, a fleet without a secret).
func NewRedis(rdb redis.UniversalClient, prefix string, s *seal.Sealer) *Redis {
	return &Redis{rdb: rdb, prefix: prefix, seal: s}
}

func (r *Redis) name(k string) string { return r.prefix + "verify:pass:" + k }

// Close does nothing: the fleet owns the connection.
func (r *Redis) Close() error { return nil }

func (r *Redis) Pass(ctx context.Context, name, ip string, until time.Time) error {
	k := r.name(key(name, ip))
	v := r.seal.Seal(k, strconv.FormatInt(until.UnixMilli(), 10))
	return r.rdb.Set(ctx, k, v, max(time.Until(until), time.Second)).Err()
}

func (r *Redis) Passed(ctx context.Context, name, ip string, now time.Time) (time.Time, bool, error) {
	k := r.name(key(name, ip))
	v, err := r.rdb.Get(ctx, k).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	if v, err = r.seal.Open(k, v); err != nil {
		return time.Time{}, false, nil // forged: no pass
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, false, nil
	}
	until := time.UnixMilli(ms)
	return until, now.Before(until), nil
}

// Forget scans the passes' keys: an operator's command, never a player's.
func (r *Redis) Forget(ctx context.Context, nameOrIP string) (int, error) {
	pattern := r.name(globEscape(strings.ToLower(nameOrIP)) + "|*")
	if _, err := netip.ParseAddr(nameOrIP); err == nil {
		pattern = r.name("*|" + globEscape(nameOrIP))
	}
	n := 0
	iter := r.rdb.Scan(ctx, 0, pattern, 500).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		d, err := r.rdb.Del(ctx, batch...).Result()
		n += int(d)
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return n, err
	}
	return n, flush()
}

// globEscape makes s match itself in a Redis glob.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
