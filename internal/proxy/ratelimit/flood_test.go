package ratelimit

import (
	"hash/maphash"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// The product's rate-limit library is golang.org/x/time/rate; the per-IP player
// limiter keeps its hand-written GCRA only because of memory. These benchmarks
// measure that claim on a 1 000 000-IP flood: the same clients, through the same
// 64-shard map, once per kind of per-client state.
//
//	go test -run '^$' -bench 'Flood' -benchtime 1x -count 3 ./internal/proxy/ratelimit

// floodShards mirrors Limiter's layout (64 shards picked by the limiter's seeded
// hash, one map per shard under a mutex, keys from keyOf) with the per-client
// value V swapped, so only the state differs between the variants.
type floodShards[V any] struct {
	l      *Limiter
	shards [shardCount]struct {
		mu sync.Mutex
		m  map[key]V
	}
	newV func() V
	// allow decides for one client and returns its new state (values, not a
	// pointer, so the state does not escape to the heap on every call).
	allow func(v V, intent Intent, now time.Time) (next V, allowed, changed bool)
}

func newFloodShards[V any](newV func() V, allow func(V, Intent, time.Time) (V, bool, bool)) *floodShards[V] {
	f := &floodShards[V]{l: New(Config{}), newV: newV, allow: allow}
	for i := range f.shards {
		f.shards[i].m = map[key]V{}
	}
	return f
}

func (f *floodShards[V]) Allow(ip netip.Addr, intent Intent, now time.Time) bool {
	k := f.l.keyOf(ip, f.l.params.Load().prefix)
	s := &f.shards[maphash.Comparable(f.l.seed, k)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	if !ok {
		v = f.newV()
	}
	v, allowed, changed := f.allow(v, intent, now)
	if !ok || changed {
		s.m[k] = v
	}
	return allowed
}

func (f *floodShards[V]) Tracked() int {
	n := 0
	for i := range f.shards {
		n += len(f.shards[i].m)
	}
	return n
}

// floodLimiter is what a variant offers the flood.
type floodLimiter interface {
	Allow(ip netip.Addr, intent Intent, now time.Time) bool
	Tracked() int
}

// rateLimits are the default quotas as x/time/rate limits: 3 logins per 10 s and
// 300 pings per 10 s, bursts of the same size.
var rateLimits = [2]struct {
	every time.Duration
	burst int
}{
	Login:  {DefaultLoginWindow / DefaultLoginMax, DefaultLoginMax},
	Status: {DefaultStatusWindow / DefaultStatusMax, DefaultStatusMax},
}

func newRateLimiter(i Intent) *rate.Limiter {
	return rate.NewLimiter(rate.Every(rateLimits[i].every), rateLimits[i].burst)
}

var floodVariants = []struct {
	name string
	make func() floodLimiter
}{
	// The shipped limiter itself.
	{"gcra-limiter", func() floodLimiter { return New(Config{MaxTracked: 4_000_000}) }},
	// Its state in the harness: shows the harness adds nothing.
	{"gcra-harness", func() floodLimiter {
		p := newParams(Config{})
		return newFloodShards(func() state { return state{} }, func(s state, intent Intent, now time.Time) (state, bool, bool) {
			prev := s
			ok := conform(&s[intent], now.UnixNano(), p.buckets[intent])
			return s, ok, s != prev
		})
	}},
	// One *rate.Limiter per IP: the bucket the flood uses (login), created on
	// first sight; the status bucket would come on top once the IP pings.
	{"rate-1-limiter", func() floodLimiter {
		return newFloodShards(func() *rate.Limiter { return newRateLimiter(Login) }, func(l *rate.Limiter, _ Intent, now time.Time) (*rate.Limiter, bool, bool) {
			return l, l.AllowN(now, 1), false
		})
	}},
	// Both buckets per IP as *rate.Limiter, what replacing the GCRA pair takes.
	{"rate-2-limiters", func() floodLimiter {
		return newFloodShards(func() [2]*rate.Limiter { return [2]*rate.Limiter{newRateLimiter(Login), newRateLimiter(Status)} },
			func(ls [2]*rate.Limiter, intent Intent, now time.Time) ([2]*rate.Limiter, bool, bool) {
				return ls, ls[intent].AllowN(now, 1), false
			})
	}},
}

// floodIPs is the flood: n distinct IPv4 clients.
func floodIPs(n int) []netip.Addr {
	ips := make([]netip.Addr, n)
	for i := range ips {
		ips[i] = ipv4(0x0a000000 + uint32(i))
	}
	return ips
}

func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkFlood1MIPs sends one login from each of 1 000 000 distinct IPs into
// each variant and reports the live heap per tracked IP (runtime.MemStats after
// GC, the IP list itself excluded) and the cost of each first-sight Allow.
func BenchmarkFlood1MIPs(b *testing.B) {
	const n = 1_000_000
	ips := floodIPs(n)
	for _, v := range floodVariants {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				before := heapAlloc()
				l := v.make()
				b.StartTimer()
				start := time.Now()
				cpu0, cpuOK := processCPU()
				for i, ip := range ips {
					l.Allow(ip, Login, t0.Add(time.Duration(i)*time.Microsecond))
				}
				cpu1, _ := processCPU()
				elapsed := time.Since(start)
				b.StopTimer()
				after := heapAlloc()
				if got := l.Tracked(); got != n {
					b.Fatalf("tracked %d IPs, want %d", got, n)
				}
				b.ReportMetric(float64(after-before)/n, "bytes/ip")
				b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/new-ip")
				if cpuOK {
					// CPU of the whole process (GC included): what the flood costs.
					b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/n, "cpu-ns/new-ip")
				}
				runtime.KeepAlive(l)
				b.StartTimer()
			}
		})
	}
}

// BenchmarkFloodAllow is the steady state of a flood: Allow for IPs already
// tracked (65 536 of them, round robin), per variant.
func BenchmarkFloodAllow(b *testing.B) {
	ips := floodIPs(1 << 16)
	for _, v := range floodVariants {
		b.Run(v.name, func(b *testing.B) {
			l := v.make()
			for _, ip := range ips {
				l.Allow(ip, Login, t0)
			}
			now := t0.Add(time.Second)
			b.ReportAllocs()
			i := 0
			cpu0, cpuOK := processCPU()
			for b.Loop() {
				l.Allow(ips[i&(1<<16-1)], Login, now)
				i++
			}
			if cpu1, _ := processCPU(); cpuOK && i > 0 {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(i), "cpu-ns/op")
			}
		})
	}
}

// The harness must limit exactly like the shipped limiter, or its numbers would
// compare different things: every variant grants the same logins on the same
// sequence.
func TestFloodVariantsAgree(t *testing.T) {
	ips := floodIPs(50)
	var want []bool
	for vi, v := range floodVariants {
		l := v.make()
		var got []bool
		for step := range 40 {
			now := t0.Add(time.Duration(step) * 700 * time.Millisecond)
			for _, ip := range ips[:step%len(ips)+1] {
				got = append(got, l.Allow(ip, Login, now))
			}
		}
		if vi == 0 {
			want = got
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s decides differently from %s at call %d", v.name, floodVariants[0].name, i)
			}
		}
	}
}
