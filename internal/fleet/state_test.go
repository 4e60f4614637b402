package fleet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestVersionOrder(t *testing.T) {
	cases := []struct {
		a, b Version
		want int
	}{
		{Version{1, "a"}, Version{2, "a"}, -1},
		{Version{2, "a"}, Version{1, "z"}, 1},
		{Version{5, "a"}, Version{5, "b"}, -1},
		{Version{5, "b"}, Version{5, "b"}, 0},
		{Version{0, "p"}, Version{1, "a"}, -1},
	}
	for _, c := range cases {
		if got := c.a.Compare(c.b); got != c.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := c.b.Compare(c.a); got != -c.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

// The clock is hybrid: a change made after seeing another is newer than it even
// when this proxy's wall clock is behind the other's.
func TestClockMovesPastWhatItSaw(t *testing.T) {
	var c clock
	a := c.next(1000, "a")
	if a.TS != 1000 {
		t.Fatalf("first version %v", a)
	}
	if b := c.next(1000, "a"); b.TS != 1001 {
		t.Fatalf("same millisecond: %v, want 1001", b)
	}
	c.see(Version{TS: 5000, Proxy: "z"}) // another proxy's clock is 4 s ahead
	if v := c.next(1002, "a"); !v.Newer(Version{TS: 5000, Proxy: "z"}) {
		t.Fatalf("a change made after seeing 5000@z is %v, older than it", v)
	}
}

// A drain made on one proxy is stored, published, and applied by another proxy
// from the message; the receipt says the fleet has it.
func TestDrainReachesOtherProxy(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk)
	a.connect(t)
	b.connect(t)
	l := listen(t, mr)

	r := a.drainNow("lobby", "10.0.0.1:25565", true)
	a.pushNow(t)
	if d := r.Wait(context.Background()); d.State != Shared {
		t.Fatalf("delivery %+v, want shared", d)
	}
	msg := l.next(t)
	b.onMessage(msg)
	if !b.local.Drained("lobby", "10.0.0.1:25565") {
		t.Fatal("b did not apply the drain")
	}
	a.onMessage(msg) // its own echo changes nothing
	if a.local.writes != 1 {
		t.Fatalf("a wrote its stores %d times, want once (by the admin API)", a.local.writes)
	}
	// The stored copy: a proxy that starts later gets it from the hash.
	c := newMember(t, mr, "c", "", clk)
	c.connect(t)
	if !c.local.Drained("lobby", "10.0.0.1:25565") {
		t.Fatal("a proxy joining later did not get the drain")
	}

	clk.Advance(time.Second)
	b.drainNow("lobby", "10.0.0.1:25565", false)
	b.pushNow(t)
	msg = l.next(t)
	a.onMessage(msg)
	c.onMessage(msg)
	if a.local.Drained("lobby", "10.0.0.1:25565") || c.local.Drained("lobby", "10.0.0.1:25565") {
		t.Fatal("the enable did not reach a and c")
	}
	l.none(t, mr)
}

func TestBanAndUnbanReachOtherProxy(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk)
	a.connect(t)
	b.connect(t)
	l := listen(t, mr)

	exp := t0.Add(time.Hour)
	ban := bans.Ban{Type: bans.TypeUsername, Value: "griefer", Reason: "grief", CreatedAt: t0, CreatedBy: "op", ExpiresAt: &exp}
	_ = a.local.AddBan(ban)
	a.Ban(ban)
	a.pushNow(t)
	b.onMessage(l.next(t))
	got, ok := findBan(b.local.Bans(), bans.TypeUsername, "griefer")
	if !ok || !sameBan(got, ban) {
		t.Fatalf("b has %+v (%v), want %+v", got, ok, ban)
	}

	clk.Advance(time.Second)
	_ = b.local.RemoveBan(bans.TypeUsername, "griefer")
	b.Unban(bans.TypeUsername, "griefer")
	b.pushNow(t)
	a.onMessage(l.next(t))
	if a.local.banned(bans.TypeUsername, "griefer") {
		t.Fatal("the unban did not reach a")
	}
}

// Changes made on both sides of a partition converge on the last one, whichever
// side reconnects first.
func TestPartitionLastChangeWins(t *testing.T) {
	for _, order := range []string{"ab", "ba"} {
		t.Run("reconnect "+order, func(t *testing.T) {
			mr := startMiniredis(t)
			clk := testutil.NewClock(t0)
			a, b := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk)
			a.connect(t)
			b.connect(t)
			addr := mr.Addr()
			mr.Close()
			a.fail(t)
			b.fail(t)

			ra := a.drainNow("lobby", "x:1", true) // first
			if d := ra.Wait(context.Background()); d.State != Queued || !strings.Contains(d.Message, "published when Redis answers") {
				t.Fatalf("delivery while down: %+v", d)
			}
			clk.Advance(time.Second)
			b.drainNow("lobby", "x:1", false) // last: wins
			ban := bans.Ban{Type: bans.TypeIP, Value: "203.0.113.7", CreatedAt: clk.Now()}
			_ = b.local.AddBan(ban)
			b.Ban(ban)

			if err := mr.StartAddr(addr); err != nil {
				t.Fatal(err)
			}
			first, second := a, b
			if order == "ba" {
				first, second = b, a
			}
			first.connect(t)
			second.connect(t)
			first.connect(t) // the periodic resync
			for _, m := range []*member{a, b} {
				if m.local.Drained("lobby", "x:1") {
					t.Errorf("%s: drained, want the later enable", m.id)
				}
				if !m.local.banned(bans.TypeIP, "203.0.113.7") {
					t.Errorf("%s: the ban made during the partition is missing", m.id)
				}
				if n := m.Status().Pending; n != 0 {
					t.Errorf("%s: %d changes still pending", m.id, n)
				}
			}
		})
	}
}

// A Redis restarted without its data gets the state back from the proxies.
func TestRedisLosingItsDataIsRefilled(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a := newMember(t, mr, "a", "", clk)
	a.connect(t)
	a.drainNow("lobby", "x:1", true)
	a.pushNow(t)
	mr.FlushAll()
	a.connect(t)
	b := newMember(t, mr, "b", "", clk)
	b.connect(t)
	if !b.local.Drained("lobby", "x:1") {
		t.Fatal("the drain did not survive a Redis that lost its data")
	}
}

// A proxy that restarts keeps what it changed while Redis was down (the journal)
// and publishes it once Redis is back.
func TestPendingChangeSurvivesProxyRestart(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a := newMember(t, mr, "a", "", clk)
	a.connect(t)
	addr := mr.Addr()
	mr.Close()
	a.fail(t)
	a.drainNow("lobby", "x:1", true)
	a.Close()

	if err := mr.StartAddr(addr); err != nil {
		t.Fatal(err)
	}
	again := newMember(t, mr, "a", a.dir, clk)
	again.local = a.local // same stores on disk
	again.opts.Local = a.local
	if n := again.Status().Pending; n != 1 {
		t.Fatalf("after the restart %d changes pending, want 1", n)
	}
	again.reconcileAll()
	again.connect(t)
	b := newMember(t, mr, "b", "", clk)
	b.connect(t)
	if !b.local.Drained("lobby", "x:1") {
		t.Fatal("a change made while Redis was down was lost across a proxy restart")
	}
}

// Drains and bans a proxy had before joining are offered with the oldest version:
// the fleet learns them where it has nothing, and its own changes win elsewhere.
func TestLegacyStateYieldsToTheFleet(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a := newMember(t, mr, "a", "", clk)
	a.connect(t)
	a.drainNow("lobby", "x:1", false) // the fleet says: enabled
	a.pushNow(t)

	b := newMember(t, mr, "b", "", clk)
	_ = b.local.SetDrained("lobby", "x:1", true) // drained before joining
	_ = b.local.SetDrained("lobby", "y:1", true)
	b.reconcileAll()
	b.connect(t)
	if b.local.Drained("lobby", "x:1") {
		t.Fatal("a drain from before the fleet overrode the fleet's enable")
	}
	a.connect(t)
	if !a.local.Drained("lobby", "y:1") {
		t.Fatal("the fleet did not learn a drain it had no opinion on")
	}
}

// When Redis keeps a newer change than the one pushed, that one applies here and
// the operator is told.
func TestPushLosesToNewerChange(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk)
	a.connect(t)
	b.connect(t)
	// b's change is newer (its clock is ahead) but a pushes last.
	bclk := testutil.NewClock(t0.Add(time.Minute))
	b.now = bclk.Now
	b.drainNow("lobby", "x:1", true)
	b.pushNow(t)
	r := a.drainNow("lobby", "x:1", false)
	a.pushNow(t)
	d := r.Wait(context.Background())
	if d.State != Superseded || !strings.Contains(d.Message, "made on b") {
		t.Fatalf("delivery %+v, want superseded by b", d)
	}
	if !a.local.Drained("lobby", "x:1") {
		t.Fatal("a did not apply the newer drain")
	}
}

func TestResetIsPublishedNotStored(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk)
	a.connect(t)
	b.connect(t)
	l := listen(t, mr)
	if d := a.Reset(context.Background(), "lobby", "x:1").Wait(context.Background()); d.State != Shared {
		t.Fatalf("delivery %+v", d)
	}
	msg := l.next(t)
	b.onMessage(msg)
	a.onMessage(msg)
	if len(b.local.resets) != 1 || len(a.local.resets) != 0 {
		t.Fatalf("resets: a %v, b %v; want b only", a.local.resets, b.local.resets)
	}
	if mr.Exists("infrarust:state") {
		t.Fatal("a reset was stored")
	}
	addr := mr.Addr()
	mr.Close()
	a.fail(t)
	if d := a.Reset(context.Background(), "lobby", "x:1").Wait(context.Background()); d.State != LocalOnly {
		t.Fatalf("reset while down: %+v", d)
	}
	_ = addr
}

// Entries another program (or a newer build) wrote are skipped, never applied.
func TestSyncSkipsForeignEntries(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	mr.HSet("infrarust:state", "drain|lobby|x:1", "not json")
	mr.HSet("infrarust:state", "drain|lobby|y:1", `{"kind":"drain","server":"lobby","address":"z:1","drained":true,"v":{"ts":1,"proxy":"q"}}`)
	mr.HSet("infrarust:state", "teleport|a", `{"kind":"teleport","v":{"ts":1,"proxy":"q"}}`)
	a := newMember(t, mr, "a", "", clk)
	a.connect(t)
	if len(a.local.Drains()) != 0 {
		t.Fatalf("foreign entries were applied: %v", a.local.Drains())
	}
}

// A lifted ban older than deadAfter is forgotten everywhere.
func TestDeadBansAreForgotten(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a := newMember(t, mr, "a", "", clk)
	a.connect(t)
	a.Unban(bans.TypeUsername, "old")
	a.pushNow(t)
	if !strings.Contains(mr.HGet("infrarust:state", "ban|username|old"), `"ban_value":"old"`) {
		t.Fatal("the unban was not stored")
	}
	clk.Advance(deadAfter + time.Hour)
	a.connect(t)
	if mr.HGet("infrarust:state", "ban|username|old") != "" {
		t.Fatal("a long-dead unban is still stored")
	}
	if _, ok := a.j.get("ban|username|old"); ok {
		t.Fatal("a long-dead unban is still in the journal")
	}
}

func TestJournalFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, JournalFileName)
	j, err := openJournal(path)
	if err != nil || len(j.entries) != 0 {
		t.Fatalf("missing file: %v, %d entries", err, len(j.entries))
	}
	e := Entry{Kind: KindDrain, Server: "s", Address: "a:1", Drained: true, V: Version{3, "p"}}
	j.put(e, true)
	if err := j.save(); err != nil {
		t.Fatal(err)
	}
	again, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := again.get(e.Field()); !ok || got.Entry != e || !got.Pending {
		t.Fatalf("round trip: %+v", got)
	}
	for name, body := range map[string]string{
		"not json":    "{",
		"version":     `{"version":2,"entries":[]}`,
		"null entry":  `{"version":1,"entries":[null]}`,
		"bad entry":   `{"version":1,"entries":[{"kind":"drain","v":{"ts":1,"proxy":"p"}}]}`,
		"future kind": `{"version":1,"entries":[{"kind":"teleport","v":{"ts":1,"proxy":"p"}}]}`,
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := openJournal(path); err == nil || !strings.Contains(err.Error(), "move") {
			t.Errorf("%s: %v, want an error saying what to do", name, err)
		}
	}
}

func TestResolveRedisURL(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "url")
	_ = os.WriteFile(good, []byte("redis://:pw@10.0.0.5:6379/0\n# comment\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	env := map[string]string{"R": "rediss://h:6380"}
	cases := []struct {
		in, want, err string
	}{
		{"redis://h:6379", "redis://h:6379", ""},
		{"env:R", "rediss://h:6380", ""},
		{"env:UNSET", "", "UNSET is empty or not set"},
		{"file:" + good, "redis://:pw@10.0.0.5:6379/0", ""},
		{"file:" + empty, "", "the file is empty"},
		{"file:" + filepath.Join(dir, "none"), "", "no such file"},
		{"http://h", "", "redis:// or rediss://"},
		{"redis://", "", "no host"},
	}
	for _, c := range cases {
		got, err := ResolveRedisURL(c.in, func(k string) string { return env[k] })
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %v, want an error with %q", c.in, err, c.err)
		}
		if err != nil && strings.Contains(err.Error(), ":pw@") {
			t.Errorf("%q: the error shows the password: %v", c.in, err)
		}
	}
}

func FuzzDecodeEntry(f *testing.F) {
	for _, s := range []string{
		`{"kind":"drain","server":"lobby","address":"x:1","drained":true,"v":{"ts":1,"proxy":"a"}}`,
		`{"kind":"ban","ban_type":"ip","ban_value":"1.2.3.4","ban":{"type":"ip","value":"1.2.3.4","reason":"","created_at":"2025-01-01T00:00:00Z","created_by":""},"v":{"ts":1,"proxy":"a"}}`,
		`{"kind":"ban","ban_type":"ip","ban_value":"1.2.3.4","ban":{"type":"uuid","value":"x"},"v":{"ts":1,"proxy":"a"}}`,
		`{"kind":"reset","server":"s","address":"a","v":{"ts":-1,"proxy":""}}`,
		`null`, `[]`, `{"kind":7}`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := decodeEntry(s, time.Now())
		if err != nil {
			return
		}
		// Whatever decodes is safe to act on and to store back.
		if err := e.check(); err != nil {
			t.Fatalf("decoded an entry that fails its check: %v", err)
		}
		again, err := decodeEntry(e.encode(), time.Now())
		if err != nil || again.Field() != e.Field() || again.V != e.V {
			t.Fatalf("round trip: %+v, %v", again, err)
		}
	})
}

// A server's maintenance reaches the other proxies, is stored for one that
// joins later, and its end reaches them too; one set before joining the fleet
// is offered to it.
func TestMaintenanceReachesOtherProxy(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	a, b := newMember(t, mr, "a", "", clk), newMember(t, mr, "b", "", clk)
	a.connect(t)
	b.connect(t)
	l := listen(t, mr)

	_ = a.local.SetMaintenance("survival", true)
	r := a.Maintenance("survival", true)
	a.pushNow(t)
	if d := r.Wait(context.Background()); d.State != Shared {
		t.Fatalf("delivery %+v, want shared", d)
	}
	msg := l.next(t)
	b.onMessage(msg)
	if !b.local.InMaintenance("survival") {
		t.Fatal("b did not apply the maintenance")
	}
	c := newMember(t, mr, "c", "", clk)
	c.connect(t)
	if !c.local.InMaintenance("survival") {
		t.Fatal("a proxy joining later did not get the maintenance")
	}

	clk.Advance(time.Second)
	_ = b.local.SetMaintenance("survival", false)
	b.Maintenance("survival", false)
	b.pushNow(t)
	msg = l.next(t)
	a.onMessage(msg)
	c.onMessage(msg)
	if a.local.InMaintenance("survival") || c.local.InMaintenance("survival") {
		t.Fatal("the end of the maintenance did not reach a and c")
	}

	// Set on its own before it joined: offered to the fleet.
	d := newMember(t, mr, "d", "", clk)
	_ = d.local.SetMaintenance("creative", true)
	d.reconcileAll()
	d.connect(t)
	e := newMember(t, mr, "e", "", clk)
	e.connect(t)
	if !e.local.InMaintenance("creative") {
		t.Fatal("a maintenance made before joining was not offered to the fleet")
	}
}
