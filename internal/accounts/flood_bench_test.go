package accounts

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// BenchmarkRegistrationFlood registers 600 new accounts at once (the attack
// of a registration flood, one address each) into a bbolt store with the
// default argon2 cost, and times one /login of an existing account made as
// the flood begins. It reports registrations per second and the login's wait:
// a flood must not hold a login up (docs/benchmarks.md).
func BenchmarkRegistrationFlood(b *testing.B) {
	const flood = 600
	for range b.N {
		b.StopTimer()
		store, err := OpenBolt(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		svc := &Service{Store: store, Hasher: NewHasher(DefaultParams, 0), Rules: Rules{MinLength: 8, MaxLength: 64, Remember: time.Hour}}
		ctx := context.Background()
		if r := svc.Handle(ctx, "Owner", "10.0.0.1", "register owner-pass1 owner-pass1"); r.Reply != ReplyRegistered {
			b.Fatal(r)
		}
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for i := range flood {
			wg.Add(1)
			go func() {
				defer wg.Done()
				svc.Handle(ctx, fmt.Sprintf("Bot%d", i), fmt.Sprintf("198.51.%d.%d", i/250, i%250), "register bot-pass-1 bot-pass-1")
			}()
		}
		time.Sleep(300 * time.Millisecond) // the flood is queued when the owner types
		loginStart := time.Now()
		if r := svc.Handle(ctx, "Owner", "10.0.0.2", "login owner-pass1"); r.Reply != ReplyLoggedIn {
			b.Fatal(r)
		}
		login := time.Since(loginStart)
		wg.Wait()
		took := time.Since(start)
		b.StopTimer()
		n, _ := store.List(ctx)
		store.Close()
		b.ReportMetric(float64(len(n)-1)/took.Seconds(), "registrations/s")
		b.ReportMetric(float64(flood-(len(n)-1)), "refused")
		b.ReportMetric(float64(login.Milliseconds()), "login-ms")
		b.StartTimer()
	}
}

// BenchmarkBoltConcurrentCreates creates accounts from 64 goroutines at once,
// as a registration burst writes them: creates per second, each durable
// (fsynced) when it returns.
func BenchmarkBoltConcurrentCreates(b *testing.B) {
	store, err := OpenBolt(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	var next sync.Mutex
	i := 0
	b.SetParallelism(32) // 64 writers on 2 cores
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			next.Lock()
			i++
			n := i
			next.Unlock()
			if err := store.Create(ctx, Account{Name: fmt.Sprintf("P%d", n), Hash: "$argon2id$x"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
}
