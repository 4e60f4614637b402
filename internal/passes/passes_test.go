package passes

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/infrarust-go/infrarust/internal/seal"
)

func stores(t *testing.T) map[string]Store {
	b, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	return map[string]Store{"bolt": b, "redis": NewRedis(rdb, "test:", seal.New([]byte("fleet-secret-0123456789")))}
}

// A pass holds for its name (any case) from its address until it ends; a
// name or an address is forgotten whole.
func TestPasses(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			now := time.Now()
			until := now.Add(time.Hour).Truncate(time.Millisecond)
			for _, p := range []struct{ name, ip string }{{"Steve", "203.0.113.7"}, {"Steve", "198.51.100.1"}, {"Alex", "203.0.113.7"}} {
				if err := s.Pass(ctx, p.name, p.ip, until); err != nil {
					t.Fatal(err)
				}
			}
			if u, ok, err := s.Passed(ctx, "steve", "203.0.113.7", now); err != nil || !ok || !u.Equal(until) {
				t.Fatalf("Steve's pass: %v %v %v", u, ok, err)
			}
			if _, ok, _ := s.Passed(ctx, "Steve", "192.0.2.1", now); ok {
				t.Fatal("a pass from another address")
			}
			if _, ok, _ := s.Passed(ctx, "Steve", "203.0.113.7", until.Add(time.Second)); ok {
				t.Fatal("a pass after its end")
			}
			if n, err := s.Forget(ctx, "STEVE"); err != nil || n != 2 {
				t.Fatalf("forget Steve: %d, %v", n, err)
			}
			if _, ok, _ := s.Passed(ctx, "Alex", "203.0.113.7", now); !ok {
				t.Fatal("forgetting Steve forgot Alex")
			}
			if n, err := s.Forget(ctx, "203.0.113.7"); err != nil || n != 1 {
				t.Fatalf("forget an address: %d, %v", n, err)
			}
			if _, ok, _ := s.Passed(ctx, "Alex", "203.0.113.7", now); ok {
				t.Fatal("a forgotten address still passes")
			}
		})
	}
}

// In the fleet's Redis a pass is signed: one written without the secret, or
// moved from another name's key, is no pass.
func TestForgedPassIsNone(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	s := NewRedis(rdb, "test:", seal.New([]byte("fleet-secret-0123456789")))
	ctx := context.Background()
	now := time.Now()
	mr.Set("test:verify:pass:bot1|198.51.100.9", "99999999999999")
	if _, ok, _ := s.Passed(ctx, "bot1", "198.51.100.9", now); ok {
		t.Fatal("an unsigned pass let a bot skip the check")
	}
	if err := s.Pass(ctx, "Steve", "203.0.113.7", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	v, _ := mr.Get("test:verify:pass:steve|203.0.113.7")
	mr.Set("test:verify:pass:bot1|203.0.113.7", v)
	if _, ok, _ := s.Passed(ctx, "bot1", "203.0.113.7", now); ok {
		t.Fatal("a pass moved to another name's key let a bot skip the check")
	}
}

// The local store keeps passes across a restart and sweeps ended ones.
func TestBoltKeepsPassesAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	b, err := OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	_ = b.Pass(ctx, "Steve", "203.0.113.7", now.Add(time.Hour))
	_ = b.Pass(ctx, "Old", "203.0.113.7", now.Add(-time.Minute))
	b.Close()
	if b, err = OpenBolt(dir); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, ok, _ := b.Passed(ctx, "Steve", "203.0.113.7", now); !ok {
		t.Fatal("a pass did not survive a restart")
	}
	if n, err := b.Sweep(now); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
}
