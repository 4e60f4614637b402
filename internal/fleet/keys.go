package fleet

import "github.com/redis/go-redis/v9"

// keys names everything the fleet keeps in Redis; every name starts with the
// configured key_prefix (default "infrarust:"). docs/fleet.md lists them.
type keys struct{ prefix string }

// state is the hash of shared operator state: field Entry.Field(), value the
// Entry's JSON with its version. It is the persisted copy a proxy reads when it
// starts or reconnects.
func (k keys) state() string { return k.prefix + "state" }

// changes is the pub/sub channel every stored change (and every reset) is
// published on, so the other proxies apply it within a round trip.
func (k keys) changes() string { return k.prefix + "changes" }

// proxies is the sorted set of proxy ids scored by their last heartbeat, in
// Redis's own clock (milliseconds), so liveness does not depend on the proxies'
// clocks agreeing.
func (k keys) proxies() string { return k.prefix + "proxies" }

// proxy is one proxy's description (address, version, start, player counts).
func (k keys) proxy(id string) string { return k.prefix + "proxy:" + id }

// players is the hash of one proxy's players (field: a session key, value: the
// player's JSON). It expires heartbeat_timeout after the last heartbeat, so a
// dead proxy's players disappear by themselves.
func (k keys) players(id string) string { return k.prefix + "players:" + id }

// session is a fleet-wide claim of one identity (duplicate_login "refuse").
func (k keys) session(identity string) string { return k.prefix + "session:" + identity }

// wake is the lock that makes one proxy start a sleeping server.
func (k keys) wake(server string) string { return k.prefix + "wake:" + server }

// The Lua scripts run atomically in Redis, so a compare and its write cannot
// interleave with another proxy's.
var (
	// casScript stores an entry unless the hash holds a newer (or the same)
	// version of its field, and publishes it when stored. It returns nil when
	// stored, else the entry that stays.
	// KEYS[1] state; ARGV: field, ts, proxy, json, channel.
	casScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local ok, c = pcall(cjson.decode, cur)
  if ok and type(c) == 'table' and type(c.v) == 'table' then
    local cts = tonumber(c.v.ts) or 0
    local nts = tonumber(ARGV[2])
    if cts > nts or (cts == nts and tostring(c.v.proxy) >= ARGV[3]) then
      return cur
    end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[4])
return false
`)

	// forgetScript removes a field only if it still holds exactly the entry the
	// caller judged dead, so a newer change made meanwhile is never lost.
	// KEYS[1] state; ARGV: field, json.
	forgetScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
`)

	// heartbeatScript marks the proxy alive at Redis's time, stores its
	// description and keeps its players hash alive. It returns the time (ms) and
	// how many players the hash holds, so the caller can tell a hash Redis lost
	// (a restart) from one that is complete.
	// KEYS[1] proxies, KEYS[2] proxy:<id>, KEYS[3] players:<id>; ARGV: id, json,
	// players ttl (ms), description ttl (ms).
	heartbeatScript = redis.NewScript(`
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], ms, ARGV[1])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return {ms, redis.call('HLEN', KEYS[3])}
`)

	// viewScript forgets proxies silent for longer than the retention and lists
	// the others with their last heartbeat, with Redis's time now.
	// KEYS[1] proxies; ARGV: retention (ms).
	viewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
return {now, redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')}
`)

	// renewScript extends a wake lock only while this proxy still holds it.
	// KEYS[1] wake:<server>; ARGV: holder value, ttl (ms).
	renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

	// releaseScript drops a wake lock only if this proxy still holds it, never a
	// lock another proxy took after ours expired.
	// KEYS[1] wake:<server>; ARGV: holder value.
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)
)
