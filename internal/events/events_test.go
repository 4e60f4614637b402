package events

import (
	"context"
	"testing"
	"time"
)

func TestFanOutFilterAndLag(t *testing.T) {
	b := NewBus()
	all := b.Subscribe(8)
	health := b.Subscribe(8, BackendHealthChange)
	slow := b.Subscribe(2)
	defer all.Close()
	defer health.Close()

	b.Publish(PlayerJoin, Player{Username: "a"})
	b.Publish(BackendHealthChange, HealthChange{Address: "x", To: "unhealthy"})
	for i := 0; i < 5; i++ { // slow never reads: publishing must not block
		b.Publish(StatsTick, nil)
	}
	ctx := context.Background()
	if ev, _ := all.Next(ctx); ev.Type != PlayerJoin {
		t.Fatalf("all got %q first", ev.Type)
	}
	if ev, _ := health.Next(ctx); ev.Type != BackendHealthChange || ev.Data.(HealthChange).To != "unhealthy" {
		t.Fatalf("health got %+v", ev)
	}
	ev, _ := slow.Next(ctx)
	if ev.Type != Lagged || ev.Data.(LaggedInfo).Missed != 5 {
		t.Fatalf("slow subscriber should first learn it missed 5, got %+v", ev)
	}
	if ev, _ := slow.Next(ctx); ev.Type != PlayerJoin {
		t.Fatalf("after the lag notice the buffered events follow, got %q", ev.Type)
	}
	slow.Close()
	slow.Close()
	if b.Subscribers() != 2 {
		t.Fatalf("subscribers = %d", b.Subscribers())
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := health.Next(cctx); err == nil {
		t.Fatal("Next must return when the context ends")
	}
}

// Wants says whether a subscriber would take an event of a type: none while
// nobody listens, then only the types a subscription asked for (all for one
// that asked for none), and none again once they close.
func TestWants(t *testing.T) {
	b := NewBus()
	if b.Wants(PlayerJoin) {
		t.Fatal("wanted with no subscriber")
	}
	var nilBus *Bus
	if nilBus.Wants(PlayerJoin) {
		t.Fatal("a nil bus wants events")
	}
	health := b.Subscribe(1, BackendHealthChange)
	if b.Wants(PlayerJoin) || !b.Wants(BackendHealthChange) {
		t.Fatalf("with a health subscriber: join %v, health %v", b.Wants(PlayerJoin), b.Wants(BackendHealthChange))
	}
	all := b.Subscribe(1)
	if !b.Wants(PlayerJoin) {
		t.Fatal("a subscriber to every type does not want joins")
	}
	all.Close()
	health.Close()
	if b.Wants(BackendHealthChange) {
		t.Fatal("wanted after every subscriber closed")
	}
}
