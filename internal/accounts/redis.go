package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the Store of a fleet: every proxy reads and writes the same
// accounts. Durability is Redis's own (run it with appendonly yes).
type Redis struct {
	rdb    redis.Cmdable
	prefix string
}

// NewRedis keeps accounts under prefix (the fleet's key_prefix):
// <prefix>accounts is a hash of name → account, <prefix>auth:sessions:<name>
// a hash of ip → end of the session, expiring with the last one.
func NewRedis(rdb redis.Cmdable, prefix string) *Redis {
	return &Redis{rdb: rdb, prefix: prefix}
}

func (r *Redis) accounts() string            { return r.prefix + "accounts" }
func (r *Redis) sessions(name string) string { return r.prefix + "auth:sessions:" + Key(name) }

// Close does nothing: the fleet owns the connection.
func (r *Redis) Close() error { return nil }

func (r *Redis) Get(ctx context.Context, name string) (Account, error) {
	v, err := r.rdb.HGet(ctx, r.accounts(), Key(name)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Account{}, ErrNotFound
	}
	if err != nil {
		return Account{}, err
	}
	var a Account
	return a, json.Unmarshal(v, &a)
}

func (r *Redis) Create(ctx context.Context, a Account) error {
	v, err := json.Marshal(a)
	if err != nil {
		return err
	}
	set, err := r.rdb.HSetNX(ctx, r.accounts(), Key(a.Name), v).Result()
	if err != nil {
		return err
	}
	if !set {
		return ErrExists
	}
	return nil
}

// putScript replaces a field only if it exists, so a Put racing an
// unregister on another proxy never brings the account back.
var putScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
`)

func (r *Redis) Put(ctx context.Context, a Account) error {
	v, err := json.Marshal(a)
	if err != nil {
		return err
	}
	n, err := putScript.Run(ctx, r.rdb, []string{r.accounts()}, Key(a.Name), v).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (r *Redis) Delete(ctx context.Context, name string) error {
	n, err := r.rdb.HDel(ctx, r.accounts(), Key(name)).Result()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return r.Forget(ctx, name)
}

func (r *Redis) List(ctx context.Context) ([]Account, error) {
	m, err := r.rdb.HGetAll(ctx, r.accounts()).Result()
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Account, 0, len(keys))
	for _, k := range keys {
		var a Account
		if err := json.Unmarshal([]byte(m[k]), &a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (r *Redis) Remember(ctx context.Context, name, ip string, until time.Time) error {
	k := r.sessions(name)
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, ip, until.UnixMilli())
		p.PExpireAt(ctx, k, until) // sessions all last `remember`: the newest ends last
		return nil
	})
	return err
}

func (r *Redis) Remembered(ctx context.Context, name, ip string, now time.Time) (bool, error) {
	v, err := r.rdb.HGet(ctx, r.sessions(name), ip).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return err == nil && ms > now.UnixMilli(), nil
}

func (r *Redis) Forget(ctx context.Context, name string) error {
	return r.rdb.Del(ctx, r.sessions(name)).Err()
}
