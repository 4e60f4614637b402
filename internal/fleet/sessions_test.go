package fleet

import (
	"context"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/testutil"
)

// A session a proxy lets in is published (never stored) and reaches the other
// proxies' Local, not its own; a claim message without a player or time is
// ignored.
func TestSessionClaimsArePublishedToTheOthers(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk)
	a.connect(t)
	b.connect(t)
	l := listen(t, mr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.publishClaims(ctx) }()
	defer func() { cancel(); <-done }()
	a.Claimed("uuid:069a79f444e94726a5befca90e38aaf5", clk.Now(), 0)
	msg := l.next(t)
	a.onMessage(msg)
	b.onMessage(msg)
	if len(a.local.claimed) != 0 {
		t.Fatalf("a proxy settles its own claim: %v", a.local.claimed)
	}
	if want := "uuid:069a79f444e94726a5befca90e38aaf5|a|b"; len(b.local.claimed) != 1 || b.local.claimed[0] != want {
		t.Fatalf("b got %v, want [%s]", b.local.claimed, want)
	}
	if mr.Exists("infrarust:state") {
		t.Fatal("a session claim was stored")
	}
	for _, bad := range []string{
		`{"kind":"session","at":1,"v":{"ts":1,"proxy":"a"}}`,
		`{"kind":"session","player":"name:x","v":{"ts":1,"proxy":"a"}}`,
	} {
		b.onMessage(bad)
	}
	if len(b.local.claimed) != 1 {
		t.Fatalf("a claim without player or time was applied: %v", b.local.claimed)
	}
	if !strings.Contains(msg, `"kind":"session"`) {
		t.Fatalf("published %s", msg)
	}
}
