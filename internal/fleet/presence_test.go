package fleet

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"
)

func player(name, server string) Player {
	return Player{Name: name, Server: server, Address: server + ":25565", ClientIP: "198.51.100.1", Protocol: 769,
		ProxyMode: "passthrough", Since: t0}
}

// Players on two proxies make one fleet list and one count per server; a proxy
// that stops heartbeating takes its players with it once its heartbeat expires.
func TestFleetPlayersAndCounts(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk)
	a.local.setPlayers(player("Alice", "lobby"), player("Bob", "survival"))
	b.local.setPlayers(player("carol", "lobby"))
	a.connect(t)
	b.connect(t)
	a.connect(t) // sees b's first heartbeat

	list, err := a.Players(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range list {
		got = append(got, p.Name+"@"+p.Proxy)
	}
	if want := []string{"Alice@a", "Bob@a", "carol@b"}; !equalStrings(got, want) {
		t.Fatalf("fleet list %v, want %v", got, want)
	}
	if lobby, err := a.Players(context.Background(), "lobby"); err != nil || len(lobby) != 2 {
		t.Fatalf("lobby: %v, %v", lobby, err)
	}
	if n := a.OnlineCount("lobby"); n != 2 {
		t.Fatalf("OnlineCount(lobby) on a = %d, want 2", n)
	}
	if n := a.RemoteOnline("survival"); n != 0 {
		t.Fatalf("RemoteOnline(survival) on a = %d, want 0 (Bob is a's own)", n)
	}
	st := a.Status()
	if st.LiveProxies != 2 || st.Players != 3 || len(st.Proxies) != 2 || !st.Proxies[0].Self || st.Proxies[1].Players != 1 {
		t.Fatalf("status %+v", st)
	}

	// Bob leaves a, Dave arrives at b: one heartbeat each moves the lists.
	a.local.setPlayers(player("Alice", "lobby"))
	b.local.setPlayers(player("carol", "lobby"), player("Dave", "survival"))
	before := a.Ops()
	if err := a.heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := a.Ops() - before; n != 2 { // HDEL + the heartbeat script
		t.Fatalf("a heartbeat after one departure sent %d commands", n)
	}
	b.connect(t)
	a.connect(t)
	if n := a.OnlineCount("survival"); n != 1 {
		t.Fatalf("OnlineCount(survival) = %d, want Dave", n)
	}

	// b dies: after heartbeat_timeout its players are gone from a's view.
	mr.FastForward(a.cfg.HeartbeatTimeout.D() + time.Second)
	mr.SetTime(time.Now().Add(a.cfg.HeartbeatTimeout.D() + time.Second))
	a.connect(t)
	if n := a.OnlineCount("lobby"); n != 1 {
		t.Fatalf("after b's heartbeat expired OnlineCount(lobby) = %d, want 1", n)
	}
	list, _ = a.Players(context.Background(), "")
	if len(list) != 1 || list[0].Name != "Alice" {
		t.Fatalf("after b died: %v", list)
	}
	st = a.Status()
	if st.LiveProxies != 1 || len(st.Proxies) != 2 || st.Proxies[1].Live {
		t.Fatalf("b should be listed as lost: %+v", st.Proxies)
	}
}

// A Redis that lost the players hash gets it whole again at the next heartbeat.
func TestHeartbeatRewritesLostPlayers(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a := newMember(t, mr, "a", "", clk)
	a.local.setPlayers(player("Alice", "lobby"), player("Bob", "lobby"))
	a.connect(t)
	mr.FlushAll()
	a.connect(t)
	if keys, _ := mr.HKeys("infrarust:players:a"); len(keys) != 2 {
		t.Fatalf("players hash after a flush holds %v", keys)
	}
	if ttl := mr.TTL("infrarust:players:a"); ttl <= 0 {
		t.Fatalf("players hash has no TTL (%v): a dead proxy's players would stay", ttl)
	}
}

func TestLeaveRemovesPlayersAtOnce(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a := newMember(t, mr, "a", "", clk)
	a.local.setPlayers(player("Alice", "lobby"))
	a.connect(t)
	a.leave()
	if mr.Exists("infrarust:players:a") || mr.Exists("infrarust:proxy:a") {
		t.Fatal("a proxy leaving left its players behind")
	}
}

func TestPlayersWhileDown(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a := newMember(t, mr, "a", "", clk)
	a.connect(t)
	mr.Close()
	a.fail(t)
	if _, err := a.Players(context.Background(), ""); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("players while down: %v, want ErrUnreachable", err)
	}
	if st := a.Status(); st.Connected || st.LastError == "" {
		t.Fatalf("status while down: %+v", st)
	}
}

// One proxy holds the wake lock; the others are told who; the lock is free again
// once released, or once the TTL passes without renewal (a dead holder).
func TestWakeLock(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk)
	a.connect(t)
	b.connect(t)
	ctx := context.Background()
	release, held, _, err := a.TryWake(ctx, "survival")
	if err != nil || !held {
		t.Fatalf("a: held %v, %v", held, err)
	}
	if _, held, holder, err := b.TryWake(ctx, "survival"); err != nil || held || holder != "a" {
		t.Fatalf("b while a holds it: held %v holder %q %v", held, holder, err)
	}
	rl, held, _, _ := b.TryWake(ctx, "lobby")
	if !held {
		t.Fatal("another server's lock is independent")
	}
	rl()
	release()
	release() // twice is fine
	rb, held, _, err := b.TryWake(ctx, "survival")
	if err != nil || !held {
		t.Fatalf("b after release: %v %v", held, err)
	}
	// b dies holding it: nobody renews; the TTL frees it.
	_, held, _, _ = a.TryWake(ctx, "survival")
	if held {
		t.Fatal("a took a lock b holds")
	}
	mr.FastForward(a.cfg.WakeLockTTL.D())
	ra, held, _, err := a.TryWake(ctx, "survival")
	if err != nil || !held {
		t.Fatalf("a after b's lock expired: %v %v", held, err)
	}
	rb() // b's late release must not free a's lock
	if _, held, holder, _ := b.TryWake(ctx, "survival"); held || holder != "a" {
		t.Fatalf("b's stale release freed a's lock: held %v holder %q", held, holder)
	}
	ra()

	mr.Close()
	a.fail(t)
	if _, _, _, err := a.TryWake(ctx, "survival"); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("TryWake while down: %v", err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
