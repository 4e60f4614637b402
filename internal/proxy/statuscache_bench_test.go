package proxy

import (
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// BenchmarkStatusCacheHit is the cost of answering a ping from the cache: no
// backend I/O (fetch must not run) and no allocation.
func BenchmarkStatusCacheHit(b *testing.B) {
	c := newStatusCache(config.StatusCache{TTL: config.Duration(time.Minute), MaxStale: config.Duration(time.Minute)})
	body := []byte(`{"version":{"name":"bench","protocol":767},"players":{"max":20,"online":1},"description":{"text":"bench"}}`)
	fetches := 0
	fetch := func() ([]byte, error) { fetches++; return body, nil }
	if _, hit := c.get(767, time.Now, fetch); hit {
		b.Fatal("first get was a hit")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, hit := c.get(767, time.Now, fetch); !hit {
			b.Fatal("miss inside the TTL")
		}
	}
	b.StopTimer()
	if fetches != 1 {
		b.Fatalf("fetch ran %d times; a hit must not touch the backend", fetches)
	}
}

// BenchmarkStatusCacheHitParallel is the same under contention (one mutex per server).
func BenchmarkStatusCacheHitParallel(b *testing.B) {
	c := newStatusCache(config.StatusCache{TTL: config.Duration(time.Minute), MaxStale: config.Duration(time.Minute)})
	body := []byte(`{}`)
	c.get(767, time.Now, func() ([]byte, error) { return body, nil })
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.get(767, time.Now, func() ([]byte, error) { return body, nil })
		}
	})
}
