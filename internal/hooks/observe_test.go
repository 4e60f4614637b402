package hooks

import (
	"context"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/webhook"
)

// One publish reaches every reader: a fired event runs its handler, then is on
// the bus (SSE, metrics) with the decision, and an observer sees it; what
// anything else publishes on the bus reaches the observer too. An event with
// no handler is still built and published while the bus has a reader for it.
func TestOnePublishReachesEveryReader(t *testing.T) {
	bus := events.NewBus()
	seen := make(chan events.Event, 8)
	r := NewRegistry()
	On(r, "deny-griefer", func(_ context.Context, e *Login) {
		if e.Profile.Name == "Griefer" {
			e.Deny("no")
		}
	})
	Observe(r, "watch", func(_ context.Context, e events.Event) { seen <- e }, events.PlayerLogin, events.BanCreated)
	Observe(r, "broken", func(context.Context, events.Event) { panic("observer bug") }, events.PlayerLogin)
	d, err := New(Options{Handlers: r, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	sse := bus.Subscribe(8, events.PlayerLogin)
	defer sse.Close()

	res := Fire(d, context.Background(), &Login{Server: "lobby", Profile: Profile{Name: "Griefer"}})
	if !res.Denied() {
		t.Fatalf("the handler's decision was lost: %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := sse.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	env, ok := ev.Data.(*webhook.Envelope)
	if ev.Type != events.PlayerLogin || !ok || env.Event != "login" || env.Result == nil || env.Result.Action != "deny" {
		t.Fatalf("the bus carried %+v (%+v), want player.login with the denial", ev, ev.Data)
	}
	if got := next(t, seen); got.Type != events.PlayerLogin {
		t.Fatalf("the observer saw %s first, want player.login", got.Type)
	}
	bus.Publish(events.BanCreated, map[string]string{"target": "203.0.113.9"})
	if got := next(t, seen); got.Type != events.BanCreated {
		t.Fatalf("the observer saw %s, want ban.created published by someone else", got.Type)
	}

	if d.Wants(KindServerConnected) {
		t.Fatal("server_connected wanted with no handler and no reader")
	}
	sc := bus.Subscribe(1, events.PlayerServerConnected)
	if !d.Wants(KindServerConnected) {
		t.Fatal("server_connected not wanted while the bus has a reader for it")
	}
	sc.Close()
	if d.Wants(KindPermissionsSetup) {
		t.Fatal("permissions_setup (it carries a function) is published")
	}
}

// Close waits for the observers, and an observer stuck past its deadline
// does not hold Close beyond the caller's.
func TestCloseWaitsForObservers(t *testing.T) {
	bus := events.NewBus()
	r := NewRegistry()
	stuck := make(chan struct{})
	Observe(r, "stuck", func(context.Context, events.Event) { <-stuck }, events.ConfigReload)
	d, err := New(Options{Handlers: r, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	bus.Publish(events.ConfigReload, nil)
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_ = d.Close(ctx)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close waited %s for a stuck observer", took)
	}
	close(stuck)
	d.observing.Wait() // it ends once its function returns
}

func next(t *testing.T, ch <-chan events.Event) events.Event {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("the observer saw nothing")
		return events.Event{}
	}
}
