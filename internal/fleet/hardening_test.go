package fleet

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

// Bad data in Redis never changes a proxy: an entry that does not parse is
// logged with its key (once a minute, however often the sync meets it) and
// ignored; "ban": null is not an unban; a version far in the future is refused,
// so it cannot push every proxy's clock past it; a heartbeat far ahead of
// Redis's clock does not make a proxy live.
func TestBadFleetDataIsIgnored(t *testing.T) {
	mr := startMiniredis(t)
	clk := testutil.NewClock(t0)
	m := newMember(t, mr, "a", "", clk)
	var logs testutil.SyncBuffer
	m.log = slog.New(slog.NewTextHandler(&logs, nil))
	ban := bans.Ban{Type: bans.TypeUsername, Value: "griefer", Reason: "x", CreatedAt: t0}
	if err := m.local.AddBan(ban); err != nil {
		t.Fatal(err)
	}
	m.connect(t)
	if !m.local.banned(bans.TypeUsername, "griefer") {
		t.Fatal("setup: the ban is not in force")
	}
	future := t0.Add(time.Hour).UnixMilli()
	mr.HSet("infrarust:state",
		"drain|lobby|x:1", `{"kind":"drain","server":"lobby"`, // cut short
		"ban|username|griefer", `{"kind":"ban","ban_type":"username","ban_value":"griefer","ban":null,"v":{"ts":`+itoa(t0.Add(time.Minute).UnixMilli())+`,"proxy":"z"}}`,
		"drain|lobby|y:1", `{"kind":"drain","server":"lobby","address":"y:1","drained":true,"v":{"ts":`+itoa(future)+`,"proxy":"z"}}`,
	)
	mr.ZAdd("infrarust:proxies", float64(time.Now().Add(365*24*time.Hour).UnixMilli()), "forged")
	for range 3 {
		m.connect(t)
	}
	if !m.local.banned(bans.TypeUsername, "griefer") {
		t.Fatal(`"ban": null lifted the ban`)
	}
	if m.local.Drained("lobby", "y:1") {
		t.Fatal("a far-future drain was applied")
	}
	if v := m.clk.next(clk.Now().UnixMilli(), "a"); v.TS >= future {
		t.Fatalf("the clock went to %d, past the far-future version %d", v.TS, future)
	}
	for _, p := range m.Status().Proxies {
		if p.ID == "forged" && p.Live {
			t.Fatal("a heartbeat far in the future made a proxy live")
		}
	}
	out := logs.String()
	for _, key := range []string{"drain|lobby|x:1", "ban|username|griefer", "drain|lobby|y:1", "heartbeat of forged"} {
		if n := strings.Count(out, key); n != 1 {
			t.Errorf("the bad entry %s was logged %d times in 4 syncs, want once (a minute apart):\n%s", key, n, out)
		}
	}
	clk.Advance(badEntryEvery)
	m.connect(t)
	if n := strings.Count(logs.String(), "drain|lobby|x:1"); n != 2 {
		t.Errorf("a minute later the bad entry is logged again: %d lines, want 2", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
