package accounts

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// cheap keeps the tests fast; the defaults are checked on their own.
var cheap = Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1}

func TestHashVerify(t *testing.T) {
	ctx := context.Background()
	h := NewHasher(cheap, 2)
	enc, err := h.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("PHC string %q", enc)
	}
	if ok, stale, err := h.Verify(ctx, "correct horse", enc); !ok || stale || err != nil {
		t.Fatalf("right password: ok=%v stale=%v err=%v", ok, stale, err)
	}
	if ok, _, err := h.Verify(ctx, "Correct horse", enc); ok || err != nil {
		t.Fatalf("wrong password: ok=%v err=%v", ok, err)
	}
	// The same password hashes differently each time (a fresh salt).
	if again, _ := h.Hash(ctx, "correct horse"); again == enc {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	// Raised costs: the old hash still verifies and is reported stale.
	h2 := NewHasher(Params{MemoryKiB: 128, Iterations: 1, Parallelism: 1}, 1)
	if ok, stale, _ := h2.Verify(ctx, "correct horse", enc); !ok || !stale {
		t.Fatalf("old parameters: ok=%v stale=%v, want true true", ok, stale)
	}
}

func TestVerifyRejectsGarbage(t *testing.T) {
	h := NewHasher(cheap, 1)
	for _, bad := range []string{
		"", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=18$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=19$m=64,t=0,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=19$m=99999999999,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=19$m=64,t=1,p=1$!!!$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=19$m=64,t=1,p=1,x=2$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
	} {
		if ok, _, err := h.Verify(context.Background(), "pw", bad); ok || !errors.Is(err, ErrBadHash) {
			t.Errorf("Verify(%q) = %v, %v; want ErrBadHash", bad, ok, err)
		}
	}
}

func TestParamsCheck(t *testing.T) {
	if err := DefaultParams.Check(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Params{{MemoryKiB: 64, Iterations: 0, Parallelism: 1}, {MemoryKiB: 4, Iterations: 1, Parallelism: 1}, {MemoryKiB: 64, Iterations: 1}} {
		if p.Check() == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

// The hasher never runs more hashes at once than its slots: a flood of
// /login attempts waits instead of filling the memory.
func TestHasherBoundsConcurrency(t *testing.T) {
	h := NewHasher(cheap, 1)
	if err := h.acquire(context.Background(), false); err != nil { // one hash "running"
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := h.Hash(ctx, "password"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a hash beyond the bound ran: %v", err)
	}
	h.release()
	if _, err := h.Hash(context.Background(), "password"); err != nil {
		t.Fatal(err)
	}
}

// A check of an existing password (a /login) is served before the new hashes
// (registrations) waiting longer than it, and the new hashes that may wait are
// bounded: a registration flood holds a login up by the hashes already
// running, no more.
func TestHasherServesChecksFirst(t *testing.T) {
	h := NewHasher(cheap, 1)
	if err := h.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 3)
	var wg sync.WaitGroup
	for _, w := range []struct {
		name  string
		check bool
	}{{"register-1", false}, {"register-2", false}, {"login", true}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.acquire(context.Background(), w.check); err != nil {
				t.Error(err)
				return
			}
			order <- w.name
			h.release()
		}()
		waitFor(t, func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			return len(h.hashes)+len(h.checks) == slices.Index([]string{"register-1", "register-2", "login"}, w.name)+1
		})
	}
	h.release()
	wg.Wait()
	close(order)
	var got []string
	for n := range order {
		got = append(got, n)
	}
	if !slices.Equal(got, []string{"login", "register-1", "register-2"}) {
		t.Fatalf("served in order %v, want the login first, then registrations in order", got)
	}
	// The waiting room of new hashes is bounded.
	h = NewHasher(cheap, 1)
	_ = h.acquire(context.Background(), false)
	for range h.waitCap {
		go func() { _ = h.acquire(context.Background(), false) }()
	}
	waitFor(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.hashes) == h.waitCap })
	if _, err := h.Hash(context.Background(), "password"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a hash past the waiting room: %v, want ErrBusy", err)
	}
	for range h.waitCap { // each waiter gets a slot and keeps it: the goroutines end
		h.release()
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

func stores(t *testing.T) map[string]func() Store {
	return map[string]func() Store{
		"bolt": func() Store {
			s, err := OpenBolt(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"redis": func() Store {
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { rdb.Close() })
			return NewRedis(rdb, "test:")
		},
	}
}

func TestStores(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open()
			now := time.Unix(1_800_000_000, 0)
			a := Account{Name: "Steve", Hash: "h1", RegisteredAt: now, RegisteredIP: "10.0.0.1"}
			if err := s.Create(ctx, a); err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, Account{Name: "STEVE", Hash: "h2"}); !errors.Is(err, ErrExists) {
				t.Fatalf("a second Steve in other case: %v, want ErrExists", err)
			}
			got, err := s.Get(ctx, "steve")
			if err != nil || got.Name != "Steve" || got.Hash != "h1" || !got.RegisteredAt.Equal(now) {
				t.Fatalf("Get = %+v, %v", got, err)
			}
			got.Hash = "h3"
			if err := s.Put(ctx, got); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, Account{Name: "Alex"}); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Put of no account: %v, want ErrNotFound", err)
			}
			if err := s.Create(ctx, Account{Name: "Alex", Hash: "x"}); err != nil {
				t.Fatal(err)
			}
			list, err := s.List(ctx)
			if err != nil || len(list) != 2 || list[0].Name != "Alex" || list[1].Hash != "h3" {
				t.Fatalf("List = %+v, %v", list, err)
			}

			// Sessions: per name and address, until their end.
			if err := s.Remember(ctx, "Steve", "10.0.0.1", now.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name, ip string
				at       time.Time
				want     bool
			}{
				{"steve", "10.0.0.1", now, true},
				{"Steve", "10.0.0.2", now, false},
				{"Alex", "10.0.0.1", now, false},
				{"Steve", "10.0.0.1", now.Add(2 * time.Hour), false},
			} {
				if ok, err := s.Remembered(ctx, c.name, c.ip, c.at); ok != c.want || err != nil {
					t.Errorf("Remembered(%s, %s, +%v) = %v, %v; want %v", c.name, c.ip, c.at.Sub(now), ok, err, c.want)
				}
			}
			if err := s.Forget(ctx, "STEVE"); err != nil {
				t.Fatal(err)
			}
			if ok, _ := s.Remembered(ctx, "Steve", "10.0.0.1", now); ok {
				t.Fatal("a session outlived Forget")
			}
			_ = s.Remember(ctx, "Alex", "10.0.0.3", now.Add(time.Hour))
			if err := s.Delete(ctx, "alex"); err != nil {
				t.Fatal(err)
			}
			if ok, _ := s.Remembered(ctx, "Alex", "10.0.0.3", now); ok {
				t.Fatal("a session outlived its account")
			}
			if _, err := s.Get(ctx, "Alex"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get after Delete: %v", err)
			}
			if err := s.Delete(ctx, "alex"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("second Delete: %v", err)
			}
		})
	}
}

func TestBoltKeepsAccountsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = s.Create(ctx, Account{Name: "Steve", Hash: "h"})
	_ = s.Remember(ctx, "Steve", "1.2.3.4", time.Now().Add(time.Hour))
	_ = s.Remember(ctx, "Steve", "1.2.3.5", time.Now().Add(-time.Hour))
	// A second process on the same data dir is told, not hung.
	if _, err := OpenBolt(dir); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second open: %v", err)
	}
	s.Close()
	s, err = OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, "steve"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Sweep(time.Now()); n != 1 || err != nil {
		t.Fatalf("Sweep removed %d, %v; want the one ended session", n, err)
	}
	if ok, _ := s.Remembered(ctx, "Steve", "1.2.3.4", time.Now()); !ok {
		t.Fatal("Sweep removed a live session")
	}
}

func newService(t *testing.T) (*Service, *time.Time) {
	s, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	now := time.Unix(1_800_000_000, 0)
	return &Service{Store: s, Hasher: NewHasher(cheap, 2), Rules: Rules{MinLength: 6, MaxLength: 32, Remember: 12 * time.Hour}, Now: func() time.Time { return now }}, &now
}

func TestServiceFlow(t *testing.T) {
	svc, now := newService(t)
	ctx := context.Background()
	steps := []struct {
		line  string
		ip    string
		reply Reply
		auth  bool
	}{
		{"login secret1", "1.1.1.1", ReplyNotRegistered, false},
		{"register secret1", "1.1.1.1", ReplyUsage, false},
		{"register secret1 secret2", "1.1.1.1", ReplyPasswordsDiffer, false},
		{"register abc abc", "1.1.1.1", ReplyPasswordTooShort, false},
		{"register " + strings.Repeat("x", 33) + " " + strings.Repeat("x", 33), "1.1.1.1", ReplyPasswordTooLong, false},
		{"REG secret1 secret1", "1.1.1.1", ReplyRegistered, true},
		{"register other12 other12", "1.1.1.1", ReplyAlreadyRegistered, false},
		{"login wrong12", "2.2.2.2", ReplyWrongPassword, false},
		{"l secret1", "2.2.2.2", ReplyLoggedIn, true},
		{"changepassword wrong12 newpass1", "2.2.2.2", ReplyWrongPassword, false},
		{"changepassword secret1 newpass1", "2.2.2.2", ReplyPasswordChanged, true},
		{"login secret1", "2.2.2.2", ReplyWrongPassword, false},
		{"login newpass1", "2.2.2.2", ReplyLoggedIn, true},
		{"fly", "2.2.2.2", ReplyUnknownCommand, false},
	}
	for _, s := range steps {
		r := svc.Handle(ctx, "Steve", s.ip, s.line)
		if r.Reply != s.reply || r.Authenticated != s.auth || r.Failed != (s.reply == ReplyWrongPassword) {
			t.Fatalf("/%s: %+v, want reply %d authenticated %v", s.line, r, s.reply, s.auth)
		}
	}
	// The change of password ended 1.1.1.1's session; 2.2.2.2's stays for `remember`.
	for ip, want := range map[string]bool{"1.1.1.1": false, "2.2.2.2": true} {
		if ok, _ := svc.Remembered(ctx, "steve", ip); ok != want {
			t.Errorf("remembered from %s = %v, want %v", ip, ok, want)
		}
	}
	*now = now.Add(13 * time.Hour)
	if ok, _ := svc.Remembered(ctx, "Steve", "2.2.2.2"); ok {
		t.Error("a session outlived remember")
	}
	a, _ := svc.Store.Get(ctx, "steve")
	if a.RegisteredIP != "1.1.1.1" || a.LastLoginIP != "2.2.2.2" {
		t.Errorf("account %+v", a)
	}
	if err := svc.ResetPassword(ctx, "steve", "abc"); err == nil {
		t.Error("a reset to a too short password was taken")
	}
	if err := svc.ResetPassword(ctx, "steve", "operator1"); err != nil {
		t.Fatal(err)
	}
	if r := svc.Handle(ctx, "Steve", "3.3.3.3", "login operator1"); r.Reply != ReplyLoggedIn {
		t.Fatalf("login after reset: %+v", r)
	}
	if r := svc.Unregister(ctx, "steve", "10.0.0.1", "nope123"); r.Reply != ReplyWrongPassword {
		t.Fatalf("unregister with a wrong password: %+v", r)
	}
	if r := svc.Unregister(ctx, "steve", "10.0.0.1", "operator1"); r.Reply != ReplyNone {
		t.Fatalf("unregister: %+v", r)
	}
	if ok, _ := svc.Registered(ctx, "Steve"); ok {
		t.Fatal("still registered after unregister")
	}
}

// A stored hash made with old parameters is replaced at the next login.
func TestServiceUpgradesStaleHash(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	if r := svc.Handle(ctx, "Alex", "1.1.1.1", "register hunter22 hunter22"); !r.Authenticated {
		t.Fatal(r)
	}
	svc.Hasher = NewHasher(Params{MemoryKiB: 128, Iterations: 2, Parallelism: 1}, 1)
	if r := svc.Handle(ctx, "Alex", "1.1.1.1", "login hunter22"); !r.Authenticated {
		t.Fatal(r)
	}
	a, _ := svc.Store.Get(ctx, "alex")
	if !strings.Contains(a.Hash, "m=128,t=2,p=1") {
		t.Fatalf("hash not upgraded: %s", a.Hash)
	}
}
