package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/infrarust-go/infrarust/internal/seal"
)

// Redis is the Store of a fleet: every proxy reads and writes the same
// accounts. Durability is Redis's own (run it with appendonly yes).
type Redis struct {
	rdb    redis.Cmdable
	prefix string
	// seal signs every account and session written and checks every one read
	// (the fleet's secret); nil signs nothing.
	seal *seal.Sealer
}

// Sealed makes the store sign what it writes and refuse what it reads
// without a valid signature: an account or a remembered session forged in
// Redis by someone without the fleet's secret is never used.
func (r *Redis) Sealed(s *seal.Sealer) *Redis {
	r.seal = s
	return r
}

func accountPlace(name string) string     { return "accounts|" + Key(name) }
func sessionPlace(name, ip string) string { return "auth:sessions:" + Key(name) + "|" + ip }
func (r *Redis) sealedMarker() string     { return r.prefix + "accounts:sealed" }

// ErrUnsigned: an account in Redis has no valid signature of the fleet's
// secret (forged, or written before the secret was set and not sealed since).
var ErrUnsigned = errors.New("the account's entry in Redis is not signed with the fleet's secret")

// decode opens and decodes one stored account.
func (r *Redis) decode(name, raw string) (Account, error) {
	v, err := r.seal.Open(accountPlace(name), raw)
	if err != nil {
		return Account{}, fmt.Errorf("%w (%v)", ErrUnsigned, err)
	}
	var a Account
	if err := json.Unmarshal([]byte(v), &a); err != nil {
		return Account{}, err
	}
	if Key(a.Name) != Key(name) {
		return Account{}, fmt.Errorf("%w (it names %q)", ErrUnsigned, a.Name)
	}
	return a, nil
}

func (r *Redis) encode(a Account) (string, error) {
	v, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	return r.seal.Seal(accountPlace(a.Name), string(v)), nil
}

// SealExisting signs the accounts written before the fleet had a secret,
// once: the first proxy started with a secret trusts what it finds then, and
// leaves a signed marker, after which an unsigned account is refused. It
// reports how many it signed. Without a secret it does nothing.
func (r *Redis) SealExisting(ctx context.Context) (int, error) {
	if !r.seal.On() {
		return 0, nil
	}
	const mark = "sealed v1"
	if v, err := r.rdb.Get(ctx, r.sealedMarker()).Result(); err == nil {
		if got, err := r.seal.Open(r.sealedMarker(), v); err == nil && got == mark {
			return 0, nil
		}
	} else if !errors.Is(err, redis.Nil) {
		return 0, err
	}
	all, err := r.rdb.HGetAll(ctx, r.accounts()).Result()
	if err != nil {
		return 0, err
	}
	n := 0
	for field, raw := range all {
		if _, err := r.seal.Open(accountPlace(field), raw); err == nil {
			continue
		}
		var a Account
		if json.Unmarshal([]byte(raw), &a) != nil || Key(a.Name) != field {
			continue
		}
		v, err := r.encode(a)
		if err != nil {
			return n, err
		}
		if ok, err := swapScript.Run(ctx, r.rdb, []string{r.accounts()}, field, raw, v).Bool(); err != nil {
			return n, err
		} else if ok {
			n++
		}
	}
	return n, r.rdb.Set(ctx, r.sealedMarker(), r.seal.Seal(r.sealedMarker(), mark), 0).Err()
}

// swapScript replaces a field only if it still holds what was read.
var swapScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0
`)

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
	return r.decode(name, string(v))
}

func (r *Redis) Create(ctx context.Context, a Account) error {
	v, err := r.encode(a)
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
	v, err := r.encode(a)
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
		a, err := r.decode(k, m[k])
		if err != nil {
			continue // forged or foreign: never used, not listed
		}
		out = append(out, a)
	}
	return out, nil
}

func (r *Redis) Remember(ctx context.Context, name, ip string, until time.Time) error {
	k := r.sessions(name)
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, ip, r.seal.Seal(sessionPlace(name, ip), strconv.FormatInt(until.UnixMilli(), 10)))
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
	if v, err = r.seal.Open(sessionPlace(name, ip), v); err != nil {
		return false, nil // forged: not remembered, the password is asked
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return err == nil && ms > now.UnixMilli(), nil
}

func (r *Redis) Forget(ctx context.Context, name string) error {
	return r.rdb.Del(ctx, r.sessions(name)).Err()
}

// Counter is the fleet's Guard counter: every proxy counts into the same
// keys (<prefix>auth:guard:<key>), which expire with their window.
func (r *Redis) Counter() Counter { return redisCounter{r} }

type redisCounter struct{ r *Redis }

func (c redisCounter) key(k string) string { return c.r.prefix + "auth:guard:" + k }

// addScript adds one and starts the window with the first add (a key left
// without an expiry by anyone is given one, so it never counts forever).
var addScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
`)

func (c redisCounter) Add(ctx context.Context, key string, window time.Duration) (int, time.Duration, error) {
	ms := max(window.Milliseconds(), 1)
	v, err := addScript.Run(ctx, c.r.rdb, []string{c.key(key)}, ms).Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(v) != 2 {
		return 0, 0, errors.New("accounts: unexpected counter answer from Redis")
	}
	return int(v[0]), time.Duration(v[1]) * time.Millisecond, nil
}

func (c redisCounter) Count(ctx context.Context, key string) (int, time.Duration, error) {
	k := c.key(key)
	var get *redis.StringCmd
	var ttl *redis.DurationCmd
	_, err := c.r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, k)
		ttl = p.PTTL(ctx, k)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, err
	}
	n, err := get.Int()
	if errors.Is(err, redis.Nil) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	left := ttl.Val()
	if left <= 0 {
		return 0, 0, nil
	}
	return n, left, nil
}
