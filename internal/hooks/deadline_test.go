package hooks

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

type failures struct{ timeouts, stuck atomic.Int32 }

func (f *failures) HandlerFailed(_, _, why string) {
	switch why {
	case "timeout":
		f.timeouts.Add(1)
	case "stuck":
		f.stuck.Add(1)
	}
}
func (f *failures) WebhookFailed(string, string) {}
func (f *failures) WebhookDropped(string)        {}

// TestSlowHandlerIsSkipped: a handler past its deadline is left behind; the login
// goes on with the other handlers' results, and what the slow one does later never
// reaches the event (it works on its own copy).
func TestSlowHandlerIsSkipped(t *testing.T) {
	release := make(chan struct{})
	lateDone := make(chan struct{})
	reg := NewRegistry()
	On(reg, "slow", func(ctx context.Context, e *ServerPreConnect) {
		<-ctx.Done() // its context ends at the deadline...
		<-release    // ...but it ignores that and goes on
		e.Deny("too late")
		close(lateDone)
	}, Timeout(20*time.Millisecond))
	On(reg, "fast", func(_ context.Context, e *ServerPreConnect) { e.Redirect("hub") })
	f := &failures{}
	d, err := New(Options{Handlers: reg, Metrics: f})
	if err != nil {
		t.Fatal(err)
	}
	ev := &ServerPreConnect{Server: "lobby"}
	res := Fire(d, context.Background(), ev)
	if !res.Redirected() || res.Server != "hub" {
		t.Fatalf("result = %+v, want the fast handler's redirect", res)
	}
	if f.timeouts.Load() != 1 {
		t.Errorf("timeouts counted %d, want 1", f.timeouts.Load())
	}
	slow := d.handlers[KindServerPreConnect][0]
	if slow.stuck.Load() != 1 {
		t.Errorf("stuck = %d while the slow handler runs, want 1", slow.stuck.Load())
	}
	close(release)
	<-lateDone
	waitFor(t, func() bool { return slow.stuck.Load() == 0 })
	if ev.Result() != res {
		t.Errorf("the late handler changed the event to %+v", ev.Result())
	}
}

// TestStuckHandlerIsNotCalledAgain: a handler that never returns holds at most
// maxStuck goroutines; after that it is skipped without being called.
func TestStuckHandlerIsNotCalledAgain(t *testing.T) {
	forever := make(chan struct{})
	t.Cleanup(func() { close(forever) })
	var calls atomic.Int32
	reg := NewRegistry()
	On(reg, "stuck", func(ctx context.Context, e *Login) {
		calls.Add(1)
		<-forever
	}, Timeout(time.Millisecond))
	f := &failures{}
	d, err := New(Options{Handlers: reg, Metrics: f})
	if err != nil {
		t.Fatal(err)
	}
	const logins = maxStuck + 10
	for range logins {
		if res := Fire(d, context.Background(), &Login{}); res.Action != Continue {
			t.Fatalf("result = %+v", res)
		}
	}
	if calls.Load() != maxStuck {
		t.Errorf("the stuck handler was called %d times, want %d (then skipped)", calls.Load(), maxStuck)
	}
	if f.timeouts.Load() != maxStuck || f.stuck.Load() != logins-maxStuck {
		t.Errorf("timeouts %d, stuck skips %d; want %d and %d", f.timeouts.Load(), f.stuck.Load(), maxStuck, logins-maxStuck)
	}
}

// TestShutdownEndsTheWait: a login waiting on a handler gives up when the proxy's
// context ends, however long the handler's own deadline.
func TestShutdownEndsTheWait(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	reg := NewRegistry()
	On(reg, "blocks", func(context.Context, *PreLogin) {
		close(started)
		<-release
	}, Timeout(time.Hour))
	d, err := New(Options{Handlers: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	if res := Fire(d, ctx, &PreLogin{}); res.Action != Continue {
		t.Fatalf("result = %+v", res)
	}
}

// waitFor polls cond (a goroutine's bookkeeping after it returns) for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
