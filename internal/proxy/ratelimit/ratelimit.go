// Package ratelimit limits how often one client may open login and status
// connections, so a single address (or IPv6 prefix) cannot flood the proxy or
// its backends.
//
// Every client key owns two independent token buckets: one for login and
// transfer attempts and one for status pings. Server-list refreshes therefore
// never consume the tokens a player needs to join. A bucket allows a burst of
// up to its maximum and then refills steadily, one token every window/max.
//
// # Algorithm
//
// The buckets are implemented with GCRA (the generic cell rate algorithm)
// rather than golang.org/x/time/rate, the product's rate-limit library (the
// admin API's limiter uses it). GCRA is exactly a token bucket, but its whole
// state is a single int64 "theoretical arrival time" (TAT): a request at time
// now is allowed when max(TAT, now)+T-now <= max*T, where T = window/max, and
// then TAT advances by T. A client costs 16 bytes of state (two TATs) plus an
// 8-byte key; a rate.Limiter is 80 bytes (mutex, float tokens, two time.Time
// values) behind a pointer, per bucket.
//
// Measured on the same 1 000 000-IP login flood through the same 64-shard map
// (BenchmarkFlood1MIPs, live heap from runtime.MemStats after GC): 55.7 bytes
// per tracked IP with GCRA, 117.7 with one *rate.Limiter per IP (the login
// bucket only) and 215.9 with both buckets as *rate.Limiter: 2.1× to 3.9× the
// memory, for an Allow that costs no less (BenchmarkFloodAllow; numbers in
// docs/benchmarks.md). Memory is what bounds how many attackers can be tracked
// (DefaultMaxTracked: 56 MB instead of 118 to 216 MB), so the hand-written
// GCRA stays. A bucket is "full again" exactly when TAT <= now, which makes it
// trivial and safe to forget such clients (see Sweep).
//
// # Keys
//
// IPv4 clients are keyed by address (IPv4-mapped IPv6 addresses are unmapped
// first, so a dual-stack listener cannot give one client two identities).
// IPv6 clients are grouped by prefix, /64 by default, because one subscriber
// usually controls a whole /64 and could otherwise rotate addresses freely.
//
// Time is taken from now.UnixNano(). A wall clock stepping forwards refills
// buckets early; one stepping backwards is read as debt, clamped to one
// window, and never as extra tokens.
//
// # Bounded memory
//
// State lives in 64 shards selected by a per-limiter seeded hash, so
// concurrent connections rarely contend on one lock and an attacker cannot
// aim at a single shard. At most Config.MaxTracked keys are tracked (spread
// evenly over the shards). When a shard is full, it is swept first (at most
// once per second, so a flood cannot turn every insert into a full scan);
// if it is still full, every new key of that shard shares one overflow bucket
// per intent with the normal per-client quota. Clients already tracked keep
// their own buckets; new clients are limited collectively and can never get
// more than one client's quota per shard and window, so overflow never opens
// a bypass (a client moving from the shared bucket to its own can see at most
// one extra quota, once). Call Sweep periodically (for example every window)
// to release keys that no longer carry any debt.
package ratelimit

import (
	"encoding/binary"
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults applied to zero or negative Config fields, matching Infrarust's
// documented [rate_limit] defaults.
const (
	// DefaultLoginMax lets a player retry a failed join twice.
	DefaultLoginMax = 3
	// DefaultLoginWindow is the refill period of the login bucket.
	DefaultLoginWindow = 10 * time.Second
	// DefaultStatusMax covers a client refreshing a long server list.
	DefaultStatusMax = 300
	// DefaultStatusWindow is the refill period of the status bucket.
	DefaultStatusWindow = 10 * time.Second
	// DefaultIPv6Prefix groups IPv6 by /64, the usual per-subscriber block.
	DefaultIPv6Prefix = 64
	// DefaultMaxTracked bounds the limiter to about 56 MB when full (see
	// BenchmarkTrackMillionIPs) while tracking a million distinct attackers.
	DefaultMaxTracked = 1_000_000
	// MaxWindow caps a window so time arithmetic can never overflow; longer
	// windows are clamped to it.
	MaxWindow = 30 * 24 * time.Hour
)

const (
	shardCount = 64
	// overflowSweepEvery rate-limits the on-demand sweep of a full shard.
	overflowSweepEvery = int64(time.Second)
)

// Config sets the quotas; zero fields take the documented defaults so a
// partially filled config behaves like Infrarust's.
type Config struct {
	// LoginMax is how many login/transfer attempts one key may burst.
	LoginMax int
	// LoginWindow is the time over which LoginMax attempts refill.
	LoginWindow time.Duration
	// StatusMax is how many status pings one key may burst.
	StatusMax int
	// StatusWindow is the time over which StatusMax pings refill.
	StatusWindow time.Duration
	// IPv6Prefix groups IPv6 clients by this many leading bits (1..128; 0 = 64).
	IPv6Prefix int
	// MaxTracked is the hard cap on tracked keys, bounding memory (0 = 1 000 000).
	MaxTracked int
}

// withDefaults fills zero fields and clamps out-of-range ones.
func (c Config) withDefaults() Config {
	if c.LoginMax <= 0 {
		c.LoginMax = DefaultLoginMax
	}
	if c.LoginWindow <= 0 {
		c.LoginWindow = DefaultLoginWindow
	}
	if c.StatusMax <= 0 {
		c.StatusMax = DefaultStatusMax
	}
	if c.StatusWindow <= 0 {
		c.StatusWindow = DefaultStatusWindow
	}
	c.LoginWindow = min(c.LoginWindow, MaxWindow)
	c.StatusWindow = min(c.StatusWindow, MaxWindow)
	if c.IPv6Prefix <= 0 {
		c.IPv6Prefix = DefaultIPv6Prefix
	}
	c.IPv6Prefix = min(c.IPv6Prefix, 128)
	if c.MaxTracked <= 0 {
		c.MaxTracked = DefaultMaxTracked
	}
	return c
}

// Intent selects the bucket a connection draws from, so status pings never
// consume login tokens.
type Intent int

const (
	// Login is for login and transfer handshakes (Transfer uses Login).
	Login Intent = iota
	// Status is for server-list pings.
	Status
)

// String names the intent for logs.
func (i Intent) String() string {
	switch i {
	case Login:
		return "login"
	case Status:
		return "status"
	default:
		return "unknown"
	}
}

// bucket holds the GCRA parameters of one intent, in nanoseconds.
type bucket struct {
	interval int64 // T: time for one token to come back
	limit    int64 // max*T: how far TAT may run ahead of now
}

// params is the immutable, atomically swapped configuration.
type params struct {
	cfg      Config
	buckets  [2]bucket
	prefix   int
	shardCap int
}

func newParams(cfg Config) *params {
	cfg = cfg.withDefaults()
	mk := func(max int, window time.Duration) bucket {
		t := max64(int64(window)/int64(max), 1)
		return bucket{interval: t, limit: t * int64(max)}
	}
	return &params{
		cfg:      cfg,
		buckets:  [2]bucket{Login: mk(cfg.LoginMax, cfg.LoginWindow), Status: mk(cfg.StatusMax, cfg.StatusWindow)},
		prefix:   cfg.IPv6Prefix,
		shardCap: max(1, (cfg.MaxTracked+shardCount-1)/shardCount),
	}
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// key identifies a client in 64 bits, which keeps a tracked client at about
// 56 bytes instead of 84 with a 128-bit key (Go maps pay for every key byte
// roughly twice). The three kinds of key live in disjoint ranges:
//
//   - IPv4: 0x00000001_xxxxxxxx, i.e. the IPv6 prefix 0:1::/32 inside the
//     IETF-reserved ::/8, which no real IPv6 client is routed from;
//   - IPv6 grouped by a prefix of at most 64 bits: the masked upper 64 bits;
//   - IPv6 grouped by a longer prefix: a seeded hash of the masked address
//     with the top bit set (8000::/1 is unallocated). Two such clients share
//     a bucket only on a 64-bit hash collision, which an attacker cannot
//     aim for without the per-limiter seed.
type key uint64

const (
	ipv4Tag  key = 1 << 32
	hashFlag key = 1 << 63
)

// state is the per-client GCRA state: one TAT (UnixNano) per intent.
// A TAT at or before now means the bucket is full.
type state [2]int64

// full reports whether both buckets have refilled, i.e. forgetting the
// client cannot grant it anything it would not get anyway.
func (s state) full(now int64) bool { return s[0] <= now && s[1] <= now }

type shard struct {
	mu        sync.Mutex
	m         map[key]state
	overflow  state // shared by new keys while the shard is full
	lastSweep int64 // UnixNano of the last on-demand sweep
	_         [64]byte
}

// Limiter is a per-client rate limiter with bounded memory; it is safe for
// concurrent use and a nil *Limiter allows everything (rate limiting off).
type Limiter struct {
	params atomic.Pointer[params]
	seed   maphash.Seed
	shards [shardCount]shard
}

// New returns a limiter for cfg; zero fields take the defaults.
func New(cfg Config) *Limiter {
	l := &Limiter{seed: maphash.MakeSeed()}
	l.params.Store(newParams(cfg))
	for i := range l.shards {
		l.shards[i].m = make(map[key]state)
	}
	return l
}

// Config returns the effective configuration, defaults included, so callers
// can log or display what is actually enforced.
func (l *Limiter) Config() Config { return l.params.Load().cfg }

// SetConfig applies a reloaded configuration without dropping clients' debt.
// Changed quotas apply from the next request (debt beyond a smaller quota is
// clamped to it). A changed IPv6Prefix regroups clients, so all tracked state
// is forgotten: every client starts with a full bucket once. A smaller
// MaxTracked applies to new keys; existing ones leave through Sweep.
func (l *Limiter) SetConfig(cfg Config) {
	np := newParams(cfg)
	old := l.params.Swap(np)
	if old.prefix == np.prefix {
		return
	}
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		clear(s.m)
		s.overflow = state{}
		s.mu.Unlock()
	}
}

// keyOf maps an address to its client key.
func (l *Limiter) keyOf(ip netip.Addr, prefix int) key {
	ip = ip.Unmap()
	if ip.Is4() {
		a := ip.As4()
		return ipv4Tag | key(binary.BigEndian.Uint32(a[:]))
	}
	b := ip.As16() // the zero Addr yields ::, sharing one bucket with it
	hi := binary.BigEndian.Uint64(b[:8])
	if prefix <= 64 {
		return key(hi & (^uint64(0) << (64 - prefix)))
	}
	lo := binary.BigEndian.Uint64(b[8:]) & (^uint64(0) << (128 - prefix))
	return hashFlag | key(maphash.Comparable(l.seed, [2]uint64{hi, lo}))
}

func (l *Limiter) shardOf(k key) *shard {
	return &l.shards[maphash.Comparable(l.seed, k)%shardCount]
}

// conform is one GCRA step: it reports whether a request at now fits the
// bucket and, if so, charges it to *tat. Debt left by a larger quota before
// a reload is clamped to one full window of the current quota, even when the
// request is rejected.
func conform(tat *int64, now int64, b bucket) bool {
	t := *tat
	if t < now {
		t = now
	} else if t > now+b.limit {
		t = now + b.limit
		*tat = t
	}
	t += b.interval
	if t-now > b.limit {
		return false
	}
	*tat = t
	return true
}

// Allow reports whether ip may open a connection with intent at now, and
// charges one token if so. Unknown intents use the stricter login bucket.
func (l *Limiter) Allow(ip netip.Addr, intent Intent, now time.Time) bool {
	if l == nil {
		return true
	}
	if intent != Status {
		intent = Login
	}
	p := l.params.Load()
	b := p.buckets[intent]
	k := l.keyOf(ip, p.prefix)
	n := now.UnixNano()
	s := l.shardOf(k)

	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[k]
	if !ok && len(s.m) >= p.shardCap {
		if n-s.lastSweep >= overflowSweepEvery || n < s.lastSweep {
			s.lastSweep = n
			s.sweep(n)
		}
		if len(s.m) >= p.shardCap {
			return conform(&s.overflow[intent], n, b)
		}
	}
	prev := st
	allowed := conform(&st[intent], n, b)
	if st != prev {
		s.m[k] = st
	}
	return allowed
}

// sweep drops the shard's full keys; the caller holds s.mu.
func (s *shard) sweep(now int64) (removed int) {
	for k, st := range s.m {
		if st.full(now) {
			delete(s.m, k)
			removed++
		}
	}
	return removed
}

// Sweep forgets clients whose buckets have both refilled, which is
// indistinguishable from never having seen them, and returns how many it
// dropped. Call it periodically to keep memory proportional to active
// clients.
func (l *Limiter) Sweep(now time.Time) (removed int) {
	if l == nil {
		return 0
	}
	n := now.UnixNano()
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		removed += s.sweep(n)
		s.mu.Unlock()
	}
	return removed
}

// Tracked returns how many client keys hold state, for metrics and for
// checking that memory stays bounded.
func (l *Limiter) Tracked() int {
	if l == nil {
		return 0
	}
	total := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		total += len(s.m)
		s.mu.Unlock()
	}
	return total
}
