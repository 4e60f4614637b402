package events

import (
	"context"
	"testing"
	"time"
)

// Recent keeps the last n announcements in order, never a stats tick nor a
// player event's decided copy, and stops with its context.
func TestRecentKeepsTheLastEvents(t *testing.T) {
	bus := NewBus()
	r := NewRecent(bus, 3)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	for i := range 5 {
		bus.Publish(PlayerJoin, Player{Username: string(rune('a' + i))})
		bus.Publish(StatsTick, nil)
		bus.Publish(PlayerLogin, nil)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l := r.List()
		if len(l) == 3 && l[2].Data.(Player).Username == "e" {
			if l[0].Data.(Player).Username != "c" {
				t.Fatalf("kept %+v, want c, d, e", l)
			}
			for _, e := range l {
				if e.Type != PlayerJoin {
					t.Fatalf("kept a %s", e.Type)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kept %+v", l)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if bus.Subscribers() != 0 {
		t.Fatal("Run left its subscription")
	}
}
