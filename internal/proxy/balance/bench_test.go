package balance

import (
	"fmt"
	"testing"
	"time"
)

func benchPool(s Strategy) *Pool {
	addrs := make([]Address, 16)
	for i := range addrs {
		addrs[i] = Address{Address: fmt.Sprintf("10.0.0.%d:25565", i+1), Weight: 1 + i%4}
	}
	return NewPool(Options{Strategy: s, SlowStart: 30 * time.Second}, addrs, t0)
}

var strategies = []Strategy{FirstAvailable, RoundRobin, LeastConn, Latency, Random}

// BenchmarkPick is the login hot path with a caller-owned lease: Acquire + Release over 16 addresses.
func BenchmarkPick(b *testing.B) {
	for _, s := range strategies {
		b.Run(string(s), func(b *testing.B) {
			p := benchPool(s)
			now := t0.Add(time.Hour)
			var l Lease
			b.ReportAllocs()
			for b.Loop() {
				if !p.AcquireInto(&l, now, nil) {
					b.Fatal("no address")
				}
				l.Release(now)
			}
		})
	}
}

// BenchmarkAcquire is the same with the allocating Acquire and a one-entry tried list.
func BenchmarkAcquire(b *testing.B) {
	for _, s := range strategies {
		b.Run(string(s), func(b *testing.B) {
			p := benchPool(s)
			now := t0.Add(time.Hour)
			tried := []string{"10.0.0.3:25565"}
			b.ReportAllocs()
			for b.Loop() {
				l, ok := p.Acquire(now, tried)
				if !ok {
					b.Fatal("no address")
				}
				l.Release(now)
			}
		})
	}
}

// BenchmarkPickParallel measures contention on one pool's mutex.
func BenchmarkPickParallel(b *testing.B) {
	p := benchPool(LeastConn)
	now := t0.Add(time.Hour)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var l Lease
		for pb.Next() {
			p.AcquireInto(&l, now, nil)
			l.Release(now)
		}
	})
}
