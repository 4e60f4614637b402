package accounts

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// counters are the Guard's counters: a proxy's own, and the fleet's Redis
// (miniredis, whose clock the test moves).
var counters = map[string]func(t *testing.T, clock *time.Time) Counter{
	"memory": func(_ *testing.T, clock *time.Time) Counter {
		return &MemoryCounter{Now: func() time.Time { return *clock }}
	},
	"redis": func(t *testing.T, clock *time.Time) Counter {
		mr := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { rdb.Close() })
		return &fastForward{NewRedis(rdb, "test:").Counter(), mr, clock}
	},
}

// fastForward moves miniredis's clock with the test's.
type fastForward struct {
	Counter
	mr    *miniredis.Miniredis
	clock *time.Time
}

func (f *fastForward) advance(d time.Duration) { f.mr.FastForward(d) }

// Guessing an account's password is limited per account, whatever the
// connection or address: after max failures within the window, each address
// may try once more in it (the guesser with many addresses is slowed to one
// guess per address per window), the owner who types the right password from
// an address of his own still gets in at once, and the window's end lifts it.
// Names compare without case, so "VICTIM" counts against "Victim".
func TestGuardLimitsGuessesPerAccount(t *testing.T) {
	for name, mk := range counters {
		t.Run(name, func(t *testing.T) {
			now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			counter := mk(t, &now)
			ctx := context.Background()
			svc := &Service{
				Store: boltStore(t), Hasher: NewHasher(cheap, 2), Rules: Rules{MinLength: 4, MaxLength: 64},
				Now:   func() time.Time { return now },
				Guard: &Guard{Counter: counter, MaxFailures: 3, Window: 10 * time.Minute},
			}
			if r := svc.Handle(ctx, "Victim", "10.0.0.1", "register owner-pass owner-pass"); r.Reply != ReplyRegistered {
				t.Fatalf("register: %+v", r)
			}
			for i, n := range []string{"Victim", "VICTIM", "victim"} {
				if r := svc.Handle(ctx, n, "198.51.100.1", "login guess-"+n); r.Reply != ReplyWrongPassword {
					t.Fatalf("guess %d: %+v", i, r)
				}
			}
			// Cooling down: this address has had its try, another gets one.
			if r := svc.Handle(ctx, "Victim", "198.51.100.1", "login guess-4"); r.Reply != ReplyCoolingDown || r.Wait <= 0 || r.Wait > 10*time.Minute {
				t.Fatalf("a guess past the limit: %+v, want a cool-down", r)
			}
			if r := svc.Handle(ctx, "Victim", "198.51.100.2", "login guess-5"); r.Reply != ReplyWrongPassword {
				t.Fatalf("a new address's one try: %+v", r)
			}
			if r := svc.Handle(ctx, "Victim", "198.51.100.2", "login guess-6"); r.Reply != ReplyCoolingDown {
				t.Fatalf("a second try from that address: %+v, want a cool-down", r)
			}
			// The owner from his own address gets in, right away.
			if r := svc.Handle(ctx, "Victim", "203.0.113.7", "login owner-pass"); r.Reply != ReplyLoggedIn {
				t.Fatalf("the owner during the cool-down: %+v", r)
			}
			// The window ends: the guesser may try again.
			now = now.Add(11 * time.Minute)
			if ff, ok := counter.(*fastForward); ok {
				ff.advance(11 * time.Minute)
			}
			if r := svc.Handle(ctx, "Victim", "198.51.100.1", "login guess-7"); r.Reply != ReplyWrongPassword {
				t.Fatalf("after the window: %+v", r)
			}
		})
	}
}

// One password of an account is checked at a time on a proxy: connections
// side by side guess no faster than one.
func TestGuardChecksOneAtATime(t *testing.T) {
	g := &Guard{Counter: &MemoryCounter{}, MaxFailures: 100, Window: time.Minute}
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "Victim"
			if i%2 == 1 {
				name = "VICTIM"
			}
			done, err := g.check(context.Background(), name, "10.0.0.1")
			if err != nil {
				t.Error(err)
				return
			}
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			running.Add(-1)
			done(true)
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d checks of one account ran at once", most.Load())
	}
	if n, _, _ := g.Counter.Count(context.Background(), "fail:victim"); n != 8 {
		t.Fatalf("failures counted %d, want 8", n)
	}
	if len(g.locks.held) != 0 {
		t.Fatalf("locks left behind: %v", g.locks.held)
	}
}

// An address registers at most its allowance of accounts within the window.
func TestGuardLimitsRegistrationsPerAddress(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	svc := &Service{
		Store: boltStore(t), Hasher: NewHasher(cheap, 2), Rules: Rules{MinLength: 4, MaxLength: 64},
		Now: func() time.Time { return now },
		Guard: &Guard{Counter: &MemoryCounter{Now: func() time.Time { return now }}, MaxFailures: 5, Window: time.Minute,
			MaxRegistrations: 2, RegistrationWindow: time.Hour},
	}
	for i, n := range []string{"Junk1", "Junk2"} {
		if r := svc.Handle(ctx, n, "198.51.100.1", "register pass1234 pass1234"); r.Reply != ReplyRegistered {
			t.Fatalf("registration %d: %+v", i, r)
		}
	}
	if r := svc.Handle(ctx, "Junk3", "198.51.100.1", "register pass1234 pass1234"); r.Reply != ReplyTooManyRegistrations {
		t.Fatalf("a third registration from one address: %+v", r)
	}
	if _, err := svc.Store.Get(ctx, "Junk3"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused registration was stored: %v", err)
	}
	if r := svc.Handle(ctx, "Fresh", "198.51.100.2", "register pass1234 pass1234"); r.Reply != ReplyRegistered {
		t.Fatalf("another address: %+v", r)
	}
	now = now.Add(61 * time.Minute)
	if r := svc.Handle(ctx, "Junk3", "198.51.100.1", "register pass1234 pass1234"); r.Reply != ReplyRegistered {
		t.Fatalf("after the window: %+v", r)
	}
}

// The memory counter is bounded: past Max live keys a new key is refused
// (the check fails closed) and expired keys make room.
func TestMemoryCounterBounded(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m := &MemoryCounter{Now: func() time.Time { return now }, Max: 2}
	ctx := context.Background()
	for _, k := range []string{"a", "b"} {
		if _, _, err := m.Add(ctx, k, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := m.Add(ctx, "c", time.Minute); !errors.Is(err, ErrCounterFull) {
		t.Fatalf("a third key: %v", err)
	}
	if n, _, err := m.Add(ctx, "a", time.Minute); err != nil || n != 2 {
		t.Fatalf("a known key still counts: %d, %v", n, err)
	}
	now = now.Add(2 * time.Minute)
	if _, _, err := m.Add(ctx, "c", time.Minute); err != nil {
		t.Fatalf("expired keys make room: %v", err)
	}
}

func boltStore(t *testing.T) Store {
	s, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
