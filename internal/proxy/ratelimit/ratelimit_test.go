package ratelimit

import (
	"encoding/binary"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// step is one Allow call at t0+at, with the expected answer.
type step struct {
	ip     string
	intent Intent
	at     time.Duration
	want   bool
}

func TestAllow(t *testing.T) {
	def := Config{} // 3 logins / 10s, 300 status / 10s
	tests := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{
			name: "three logins pass, fourth inside the window is rejected",
			cfg:  def,
			steps: []step{
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, time.Second, true},
				{"1.2.3.4", Login, 2 * time.Second, false},
				{"1.2.3.4", Login, 3 * time.Second, false},
			},
		},
		{
			name: "a token returns exactly window/max after the burst",
			cfg:  Config{LoginMax: 3, LoginWindow: 9 * time.Second},
			steps: []step{
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 3*time.Second - 1, false},
				{"1.2.3.4", Login, 3 * time.Second, true},
				{"1.2.3.4", Login, 3 * time.Second, false},
				{"1.2.3.4", Login, 6 * time.Second, true},
			},
		},
		{
			name: "full refill after a whole window",
			cfg:  def,
			steps: []step{
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 10 * time.Second, true},
				{"1.2.3.4", Login, 10 * time.Second, true},
				{"1.2.3.4", Login, 10 * time.Second, true},
				{"1.2.3.4", Login, 10 * time.Second, false},
			},
		},
		{
			name: "status never consumes login tokens",
			cfg:  Config{StatusMax: 2},
			steps: []step{
				{"1.2.3.4", Status, 0, true},
				{"1.2.3.4", Status, 0, true},
				{"1.2.3.4", Status, 0, false},
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 0, false},
				{"1.2.3.4", Status, 5 * time.Second, true},
			},
		},
		{
			name: "status bucket has its own limit and refill",
			cfg:  Config{StatusMax: 5, StatusWindow: time.Second},
			steps: []step{
				{"9.9.9.9", Status, 0, true},
				{"9.9.9.9", Status, 0, true},
				{"9.9.9.9", Status, 0, true},
				{"9.9.9.9", Status, 0, true},
				{"9.9.9.9", Status, 0, true},
				{"9.9.9.9", Status, 0, false},
				{"9.9.9.9", Status, 199 * time.Millisecond, false},
				{"9.9.9.9", Status, 200 * time.Millisecond, true},
			},
		},
		{
			name: "clients are independent",
			cfg:  Config{LoginMax: 1},
			steps: []step{
				{"1.2.3.4", Login, 0, true},
				{"1.2.3.4", Login, 0, false},
				{"1.2.3.5", Login, 0, true},
				{"2001:db8::1", Login, 0, true},
			},
		},
		{
			name: "IPv4-mapped IPv6 is the same client as IPv4",
			cfg:  Config{LoginMax: 1},
			steps: []step{
				{"1.2.3.4", Login, 0, true},
				{"::ffff:1.2.3.4", Login, 0, false},
			},
		},
		{
			name: "IPv6 grouped by /64",
			cfg:  Config{LoginMax: 2},
			steps: []step{
				{"2001:db8:1:2::1", Login, 0, true},
				{"2001:db8:1:2:ffff:ffff:ffff:ffff", Login, 0, true},
				{"2001:db8:1:2::99", Login, 0, false},
				{"2001:db8:1:3::1", Login, 0, true},
			},
		},
		{
			name: "IPv6 /48 grouping",
			cfg:  Config{LoginMax: 1, IPv6Prefix: 48},
			steps: []step{
				{"2001:db8:1:2::1", Login, 0, true},
				{"2001:db8:1:ffff::1", Login, 0, false},
				{"2001:db8:2::1", Login, 0, true},
			},
		},
		{
			name: "IPv6 /128 keys single addresses",
			cfg:  Config{LoginMax: 1, IPv6Prefix: 128},
			steps: []step{
				{"2001:db8::1", Login, 0, true},
				{"2001:db8::2", Login, 0, true},
				{"2001:db8::1", Login, 0, false},
			},
		},
		{
			name: "unknown intent uses the login bucket",
			cfg:  Config{LoginMax: 1},
			steps: []step{
				{"1.2.3.4", Intent(7), 0, true},
				{"1.2.3.4", Login, 0, false},
				{"1.2.3.4", Status, 0, true},
			},
		},
		{
			name: "a wall clock stepping back never allows a burst",
			cfg:  Config{LoginMax: 1},
			steps: []step{
				{"1.2.3.4", Login, 10 * time.Second, true},
				{"1.2.3.4", Login, 0, false},
				{"1.2.3.4", Login, 5 * time.Second, false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(tt.cfg)
			for i, s := range tt.steps {
				if got := l.Allow(addr(s.ip), s.intent, t0.Add(s.at)); got != s.want {
					t.Fatalf("step %d: Allow(%s, %v, +%v) = %v, want %v", i, s.ip, s.intent, s.at, got, s.want)
				}
			}
		})
	}
}

func TestNilLimiterAllowsAll(t *testing.T) {
	var l *Limiter
	for range 10 {
		if !l.Allow(addr("1.2.3.4"), Login, t0) {
			t.Fatal("nil limiter rejected a connection")
		}
	}
	if l.Tracked() != 0 || l.Sweep(t0) != 0 {
		t.Fatal("nil limiter reports state")
	}
}

func TestKeyOf(t *testing.T) {
	l := New(Config{})
	tests := []struct {
		a, b   string
		prefix int
		same   bool
	}{
		{"1.2.3.4", "::ffff:1.2.3.4", 64, true},
		{"1.2.3.4", "1.2.3.5", 64, false},
		{"1.2.3.4", "::1.2.3.4", 128, false}, // IPv4-compatible is plain IPv6
		{"1.2.3.4", "0:1::102:304", 64, false},
		{"1.2.3.4", "0:1:0:0:0:0:102:304", 128, false},
		{"2001:db8::1", "2001:db8::2", 64, true},
		{"2001:db8::1", "2001:db8::2", 128, false},
		{"2001:db8::1", "2001:db8::1%eth0", 128, true},
		{"2001:db8:0:0:8000::", "2001:db8::", 65, false},
		{"2001:db8:0:0:7fff::", "2001:db8::", 65, true},
		{"2001:db8::", "2001:db9::", 31, true},
		{"2001:db8::", "2001:db9::", 32, false},
		{"2001:db8::", "3001:db9::", 1, true},
	}
	for _, tt := range tests {
		ka, kb := l.keyOf(addr(tt.a), tt.prefix), l.keyOf(addr(tt.b), tt.prefix)
		if (ka == kb) != tt.same {
			t.Errorf("keyOf(%s)==keyOf(%s) at /%d: %v, want %v", tt.a, tt.b, tt.prefix, ka == kb, tt.same)
		}
	}
}

func TestSweepRemovesOnlyFullBuckets(t *testing.T) {
	l := New(Config{LoginMax: 2, LoginWindow: 10 * time.Second, StatusMax: 10, StatusWindow: 10 * time.Second})
	l.Allow(addr("10.0.0.1"), Login, t0)                    // login TAT t0+5s
	l.Allow(addr("10.0.0.2"), Login, t0.Add(4*time.Second)) // login TAT t0+9s
	l.Allow(addr("10.0.0.3"), Status, t0)                   // status TAT t0+1s
	l.Allow(addr("10.0.0.4"), Status, t0.Add(8*time.Second))
	l.Allow(addr("10.0.0.4"), Login, t0) // login full at t0+5s, status at t0+9s

	tests := []struct {
		at          time.Duration
		wantRemoved int
		wantTracked int
	}{
		{0, 0, 4},
		{999 * time.Millisecond, 0, 4},
		{time.Second, 1, 3},     // 10.0.0.3
		{5 * time.Second, 1, 2}, // 10.0.0.1; 10.0.0.4 still owes status
		{9 * time.Second, 2, 0}, // 10.0.0.2 and 10.0.0.4
	}
	for _, tt := range tests {
		if got := l.Sweep(t0.Add(tt.at)); got != tt.wantRemoved {
			t.Errorf("Sweep(+%v) removed %d, want %d", tt.at, got, tt.wantRemoved)
		}
		if got := l.Tracked(); got != tt.wantTracked {
			t.Errorf("after Sweep(+%v) Tracked() = %d, want %d", tt.at, got, tt.wantTracked)
		}
	}
}

// A swept client must not be able to exceed its quota: sweeping only drops
// state that is identical to a fresh bucket.
func TestSweepNeverGrantsExtra(t *testing.T) {
	l := New(Config{LoginMax: 3, LoginWindow: 3 * time.Second})
	ip := addr("1.2.3.4")
	granted := 0
	for ms := 0; ms < 3000; ms += 100 {
		now := t0.Add(time.Duration(ms) * time.Millisecond)
		l.Sweep(now)
		if l.Allow(ip, Login, now) {
			granted++
		}
	}
	// Burst 3 at t=0 plus refills at 1s and 2s.
	if granted != 5 {
		t.Fatalf("granted %d logins in 3s with sweeps, want 5", granted)
	}
}

func ipv4(i uint32) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], i)
	return netip.AddrFrom4(b)
}

func TestMaxTrackedCapHolds(t *testing.T) {
	const capacity = 640 // 10 per shard
	l := New(Config{LoginMax: 2, MaxTracked: capacity})
	granted := 0
	for i := range uint32(100_000) {
		if l.Allow(ipv4(0x0a000000+i), Login, t0) {
			granted++
		}
	}
	if got := l.Tracked(); got > capacity {
		t.Fatalf("Tracked() = %d, exceeds MaxTracked %d", got, capacity)
	}
	// Tracked clients got one token each; overflow buckets give at most one
	// quota (2) per shard.
	if maxGranted := capacity + 2*shardCount; granted > maxGranted {
		t.Fatalf("granted %d logins, want at most %d with a full table", granted, maxGranted)
	}
	// A tracked client keeps its own bucket while the table is full.
	first := ipv4(0x0a000000)
	if !l.Allow(first, Login, t0) {
		t.Fatal("tracked client lost its second token while the table was full")
	}
	if l.Allow(first, Login, t0) {
		t.Fatal("tracked client exceeded its quota")
	}
	// Once the buckets refill, the on-demand sweep frees room for new clients.
	later := t0.Add(20 * time.Second)
	newcomer := addr("192.0.2.1")
	if !l.Allow(newcomer, Login, later) || !l.Allow(newcomer, Login, later) || l.Allow(newcomer, Login, later) {
		t.Fatal("newcomer after refill should get its own quota of 2")
	}
	if got := l.Tracked(); got > capacity {
		t.Fatalf("Tracked() = %d after sweep-on-insert, exceeds %d", got, capacity)
	}
}

func TestOverflowSharesOneBucket(t *testing.T) {
	// One slot per shard: the second distinct key in a shard overflows.
	l := New(Config{LoginMax: 1, MaxTracked: 1})
	byShard := map[*shard][]netip.Addr{}
	for i := uint32(0); len(byShard) < shardCount || minLen(byShard) < 3; i++ {
		ip := ipv4(0xc0000200 + i)
		s := l.shardOf(l.keyOf(ip, 64))
		byShard[s] = append(byShard[s], ip)
	}
	for _, ips := range byShard {
		if !l.Allow(ips[0], Login, t0) {
			t.Fatal("first key of a shard rejected")
		}
		if !l.Allow(ips[1], Login, t0) {
			t.Fatal("first overflow key rejected although the overflow bucket is full")
		}
		if l.Allow(ips[2], Login, t0) {
			t.Fatal("second overflow key allowed: overflow keys must share one bucket")
		}
	}
	if got := l.Tracked(); got != shardCount {
		t.Fatalf("Tracked() = %d, want %d", got, shardCount)
	}
}

func minLen(m map[*shard][]netip.Addr) int {
	n := -1
	for _, v := range m {
		if n < 0 || len(v) < n {
			n = len(v)
		}
	}
	return n
}

func TestSetConfig(t *testing.T) {
	ip := addr("1.2.3.4")
	l := New(Config{LoginMax: 3})
	for range 3 {
		l.Allow(ip, Login, t0)
	}
	if l.Allow(ip, Login, t0) {
		t.Fatal("fourth login allowed")
	}
	// A larger quota applies immediately, keeping the debt already owed.
	l.SetConfig(Config{LoginMax: 5})
	if got := l.Config().LoginMax; got != 5 {
		t.Fatalf("Config().LoginMax = %d, want 5", got)
	}
	// Debt 3*3.33s = 10s against a new limit of 5*2s = 10s: still empty.
	if l.Allow(ip, Login, t0) {
		t.Fatal("reload must not forgive debt")
	}
	if !l.Allow(ip, Login, t0.Add(2*time.Second)) {
		t.Fatal("token should return after the new interval of 2s")
	}
	// A smaller quota clamps the debt to the new limit.
	l.SetConfig(Config{LoginMax: 1, LoginWindow: time.Second})
	if l.Allow(ip, Login, t0.Add(2*time.Second)) {
		t.Fatal("no token right after shrinking the quota")
	}
	if !l.Allow(ip, Login, t0.Add(3*time.Second)) {
		t.Fatal("debt must be clamped to the new, smaller window")
	}
	// Changing the IPv6 grouping forgets everything.
	l.SetConfig(Config{LoginMax: 1, LoginWindow: time.Second, IPv6Prefix: 56})
	if l.Tracked() != 0 {
		t.Fatalf("Tracked() = %d after prefix change, want 0", l.Tracked())
	}
}

func TestConfigDefaults(t *testing.T) {
	got := New(Config{LoginWindow: 1000 * time.Hour * 24, IPv6Prefix: 200}).Config()
	want := Config{LoginMax: 3, LoginWindow: MaxWindow, StatusMax: 300, StatusWindow: 10 * time.Second, IPv6Prefix: 128, MaxTracked: DefaultMaxTracked}
	if got != want {
		t.Fatalf("Config() = %+v, want %+v", got, want)
	}
}

func TestConcurrentAllowRespectsQuota(t *testing.T) {
	l := New(Config{LoginMax: 50})
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 8 {
		wg.Go(func() {
			n := 0
			for range 100 {
				if l.Allow(addr("1.2.3.4"), Login, t0) {
					n++
				}
			}
			mu.Lock()
			granted += n
			mu.Unlock()
		})
	}
	wg.Go(func() {
		for range 100 {
			l.Sweep(t0)
			l.Tracked()
		}
	})
	wg.Wait()
	if granted != 50 {
		t.Fatalf("granted %d concurrent logins, want exactly 50", granted)
	}
}

func BenchmarkAllow(b *testing.B) {
	l := New(Config{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := uint32(0)
		for pb.Next() {
			i++
			l.Allow(ipv4(0x0a000000+i%65536), Status, t0)
		}
	})
}

// BenchmarkTrackMillionIPs measures the memory cost of tracking a million
// distinct clients, the scale of a botnet flood.
func BenchmarkTrackMillionIPs(b *testing.B) {
	const n = 1_000_000
	var ips []netip.Addr
	for i := range uint32(n) {
		ips = append(ips, ipv4(0x0a000000+i))
	}
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		l := New(Config{MaxTracked: 2 * n})
		for i, ip := range ips {
			l.Allow(ip, Login, t0.Add(time.Duration(i)*time.Microsecond))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		tracked := l.Tracked()
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(tracked), "bytes/ip")
		b.ReportMetric(float64(tracked), "tracked")
		// Each client owes 3.33s of login debt, so every bucket is full again
		// (and forgettable) 3.33s after the last client arrived.
		l.Sweep(t0.Add(5 * time.Second))
		b.ReportMetric(float64(l.Tracked()), "tracked_after_sweep")
		runtime.KeepAlive(l)
	}
}
