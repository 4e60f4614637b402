package fleet

import (
	"context"
	"slices"
	"testing"

	"github.com/infrarust-go/infrarust/internal/testutil"
)

// A /send or /kick typed on proxy a for a player on proxy b is published for b
// alone to carry out; it is never stored, and a malformed one is skipped.
func TestCommandsReachTheProxyThatHoldsThePlayer(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b, c := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk), newMember(t, mr, "c", "", clk)
	for _, m := range []*member{a, b, c} {
		m.connect(t)
	}
	l := listen(t, mr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.publishClaims(ctx) }()
	defer func() { cancel(); <-done }()

	a.Command("b", "send", "Steve", "lobby")
	a.Command("b", "kick", "Alex", "griefing")
	for range 2 {
		msg := l.next(t)
		for _, m := range []*member{a, b, c} {
			m.onMessage(msg)
		}
	}
	want := []string{"send|Steve|lobby|a", "kick|Alex|griefing|a"}
	if !slices.Equal(b.local.ran, want) {
		t.Fatalf("b ran %v, want %v", b.local.ran, want)
	}
	if len(a.local.ran)+len(c.local.ran) != 0 {
		t.Fatalf("a command ran on a proxy it was not for: a %v, c %v", a.local.ran, c.local.ran)
	}
	if mr.Exists("infrarust:state") {
		t.Fatal("a command was stored")
	}
	for _, bad := range []string{
		`{"kind":"command","player":"x","to":"b","action":"ban","v":{"ts":1,"proxy":"a"}}`,
		`{"kind":"command","player":"x","to":"b","action":"send","v":{"ts":1,"proxy":"a"}}`,
		`{"kind":"command","to":"b","action":"kick","v":{"ts":1,"proxy":"a"}}`,
	} {
		b.onMessage(bad)
	}
	if len(b.local.ran) != 2 {
		t.Fatalf("a malformed command ran: %v", b.local.ran)
	}
}
