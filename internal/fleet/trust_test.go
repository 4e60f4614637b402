package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/accounts"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

const testSecret = "fleet-secret-0123456789"

// forged is a message as someone with write access to Redis but without the
// fleet's secret would publish it.
func forged(kind, proxy string, ts time.Time, fields map[string]any) string {
	m := map[string]any{"kind": kind, "v": map[string]any{"ts": ts.UnixMilli(), "proxy": proxy}}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// With a secret, only what a member of the fleet signed is acted on: a
// command or a session claim published without the secret (under a member's
// id or an invented one) is dropped and counted; a signed one is acted on
// once, and a replay of it is not.
func TestForgedMessagesAreDropped(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newSecretMember(t, mr, "a", "", clk, testSecret), newSecretMember(t, mr, "b", "", clk, testSecret)
	a.connect(t)
	b.connect(t)
	b.local.setPlayers(Player{Name: "Pat", Server: "lobby"})
	for _, msg := range []string{
		forged("command", "evil", clk.Now(), map[string]any{"player": "Pat", "to": "b", "action": "kick", "arg": "pwned"}),
		forged("command", "a", clk.Now(), map[string]any{"player": "Pat", "to": "b", "action": "kick", "arg": "pwned"}),
		forged("session", "a", clk.Now(), map[string]any{"player": "uuid:0123", "at": clk.Now().UnixNano(), "proof": 2}),
	} {
		b.onMessage(msg)
	}
	if len(b.local.ran) != 0 || len(b.local.claimed) != 0 {
		t.Fatalf("a forged message was acted on: ran %v, claimed %v", b.local.ran, b.local.claimed)
	}
	if n := b.Rejected()["unsigned"]; n != 3 {
		t.Fatalf("unsigned messages counted %d, want 3 (%v)", n, b.Rejected())
	}

	// A member's signed command runs once; its replay does not.
	l := listen(t, mr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.publishClaims(ctx) }()
	defer func() { cancel(); <-done }()
	a.Command("b", "kick", "Pat", "by a")
	msg := l.next(t)
	b.onMessage(msg)
	b.onMessage(msg)
	if !slices.Equal(b.local.ran, []string{"kick|Pat|by a|a"}) {
		t.Fatalf("b ran %v, want a's command once", b.local.ran)
	}
	// Later than the replay window, even a first hearing is a replay.
	c := newSecretMember(t, mr, "c", "", clk, testSecret)
	c.connect(t)
	clk.Advance(2 * time.Minute)
	b.connect(t) // a is still a member (its heartbeat is in Redis's clock)
	c.onMessage(msg)
	if len(c.local.ran) != 0 || c.Rejected()["stale"] == 0 {
		t.Fatalf("a two-minute-old command ran: %v, %v", c.local.ran, c.Rejected())
	}
}

// Without a secret, a message is still acted on only from a live member: a
// command published under an id no proxy heartbeats with is dropped.
func TestMessagesFromNonMembersAreDropped(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	b := newMember(t, mr, "b", "", clk)
	b.connect(t)
	b.onMessage(forged("command", "evil", clk.Now(), map[string]any{"player": "Pat", "to": "b", "action": "kick", "arg": "pwned"}))
	b.onMessage(forged("session", "evil", clk.Now(), map[string]any{"player": "uuid:0123", "at": clk.Now().UnixNano(), "proof": 2}))
	if len(b.local.ran) != 0 || len(b.local.claimed) != 0 || b.Rejected()["not_member"] != 2 {
		t.Fatalf("a non-member's message was acted on: %v %v %v", b.local.ran, b.local.claimed, b.Rejected())
	}
}

// A proxy that heartbeats without a signed description is no member: it is
// listed as not live and its player counts are not the fleet's.
func TestUnsignedProxyIsNoMember(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a := newSecretMember(t, mr, "a", "", clk, testSecret)
	a.connect(t)
	ms := strconv.FormatInt(time.Now().UnixMilli(), 10)
	if _, err := mr.ZAdd("infrarust:proxies", mustFloat(ms), "evil"); err != nil {
		t.Fatal(err)
	}
	_ = mr.Set("infrarust:proxy:evil", `{"id":"evil","servers":{"lobby":500}}`)
	// A heartbeat whose description expired: not live, and no forgery either.
	if _, err := mr.ZAdd("infrarust:proxies", mustFloat(ms), "gone"); err != nil {
		t.Fatal(err)
	}
	if err := a.refreshView(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.RemoteOnline("lobby") != 0 || a.liveInView("evil") || a.liveInView("gone") {
		t.Fatalf("a forged proxy counts: %d players, evil live %v, gone live %v", a.RemoteOnline("lobby"), a.liveInView("evil"), a.liveInView("gone"))
	}
	if n := a.Rejected()["unsigned"]; n != 1 {
		t.Fatalf("rejected as unsigned: %d, want the forged description only", n)
	}
}

func mustFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// The auth limbo's accounts and remembered sessions in the fleet's Redis are
// signed: a remembered session or an account written without the secret is
// never used. Accounts from before the secret are signed once, by the first
// proxy that opens the store with it.
func TestAccountsAndSessionsSigned(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	ctx := context.Background()
	plain := newMember(t, mr, "old", "", clk).AccountStore()
	if err := plain.Create(ctx, accounts.Account{Name: "Steve", Hash: "$argon2id$old"}); err != nil {
		t.Fatal(err)
	}
	store := newSecretMember(t, mr, "a", "", clk, testSecret).AccountStore()
	if n, err := store.SealExisting(ctx); err != nil || n != 1 {
		t.Fatalf("SealExisting: %d, %v; want the account from before signed", n, err)
	}
	if a, err := store.Get(ctx, "steve"); err != nil || a.Hash != "$argon2id$old" {
		t.Fatalf("the signed old account: %+v, %v", a, err)
	}
	if n, err := store.SealExisting(ctx); err != nil || n != 0 {
		t.Fatalf("a second SealExisting: %d, %v", n, err)
	}
	// Forged afterwards: an account and a session written without the secret.
	mr.HSet("infrarust:accounts", "victim", `{"name":"Victim","hash":"$argon2id$attacker"}`)
	if _, err := store.Get(ctx, "Victim"); !errors.Is(err, accounts.ErrUnsigned) {
		t.Fatalf("a forged account: %v, want ErrUnsigned", err)
	}
	mr.HSet("infrarust:auth:sessions:victim", "203.0.113.9", strconv.FormatInt(clk.Now().Add(time.Hour).UnixMilli(), 10))
	if ok, err := store.Remembered(ctx, "Victim", "203.0.113.9", clk.Now()); ok || err != nil {
		t.Fatalf("a forged session let an address in: %v, %v", ok, err)
	}
	// Moved: Steve's valid session copied to Victim's key does not open there.
	now := time.Now() // Redis expires the session in its own clock
	if err := store.Remember(ctx, "Steve", "198.51.100.1", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	v := mr.HGet("infrarust:auth:sessions:steve", "198.51.100.1")
	mr.HSet("infrarust:auth:sessions:victim", "198.51.100.1", v)
	if ok, _ := store.Remembered(ctx, "Victim", "198.51.100.1", now); ok {
		t.Fatal("a session moved from another name's key let an address in")
	}
	if ok, _ := store.Remembered(ctx, "Steve", "198.51.100.1", now); !ok {
		t.Fatal("a signed session was not remembered")
	}
}

// duplicate_login "refuse" across the fleet: a's claim holds against b's
// login of the same player, unless b's proves more; a claim its holder left
// behind (the holder gone, or no longer listing the player a heartbeat
// timeout later) is taken over; a forged claim holds nothing.
func TestFleetClaims(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newSecretMember(t, mr, "a", "", clk, testSecret), newSecretMember(t, mr, "b", "", clk, testSecret)
	a.connect(t)
	b.connect(t)
	ctx := context.Background()
	const key = "uuid:069a79f444e94726a5befca90e38aaf5"
	if h, err := a.Claim(ctx, key, clk.Now(), 1); err != nil || h != "" {
		t.Fatalf("a's claim: %q, %v", h, err)
	}
	if h, err := b.Claim(ctx, key, clk.Now(), 1); err != nil || h != "a" {
		t.Fatalf("b's equal claim: holder %q, %v; want a", h, err)
	}
	if h, err := b.Claim(ctx, key, clk.Now(), 2); err != nil || h != "" {
		t.Fatalf("b's stronger claim: holder %q, %v; want it taken", h, err)
	}
	// b's claim, its session never listed, a heartbeat timeout later: stale.
	clk.Advance(11 * time.Second)
	mr.FastForward(11 * time.Second)
	a.connect(t)
	b.connect(t)
	if h, err := a.Claim(ctx, key, clk.Now(), 2); err != nil || h != "" {
		t.Fatalf("a claim b left behind: holder %q, %v; want it taken", h, err)
	}
	// Listed by its holder: it holds.
	a.local.setPlayers(Player{Name: "Notch", UUID: "069a79f4-44e9-4726-a5be-fca90e38aaf5", Server: "lobby", ClientIP: "1.2.3.4"})
	a.connect(t)
	clk.Advance(11 * time.Second)
	mr.FastForward(11 * time.Second)
	a.connect(t)
	b.connect(t)
	if h, _ := b.Claim(ctx, key, clk.Now(), 2); h != "a" {
		t.Fatalf("a claim whose holder lists the player: holder %q, want a", h)
	}
	// A forged claim holds nothing.
	mr.Set("infrarust:session:uuid:ffff", `{"proxy":"a","at":`+strconv.FormatInt(clk.Now().UnixMilli(), 10)+`,"proof":2}`)
	if h, _ := b.Claim(ctx, "uuid:ffff", clk.Now(), 0); h != "" {
		t.Fatalf("a forged claim held: %q", h)
	}
	// Released by its holder: free.
	done := make(chan struct{})
	ctx2, cancel := context.WithCancel(ctx)
	go func() { defer close(done); a.publishClaims(ctx2) }()
	a.Released(key)
	deadline := time.Now().Add(5 * time.Second)
	for mr.Exists("infrarust:session:"+key) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if mr.Exists("infrarust:session:" + key) {
		t.Fatal("a released claim stayed")
	}
}
