package manager

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
)

// lockTable stands in for the fleet's Redis: one wake lock per server and the
// players the other proxies report.
type lockTable struct {
	mu      sync.Mutex
	holders map[string]string
	others  map[string]int
	err     error
	tries   int
}

func newLockTable() *lockTable {
	return &lockTable{holders: map[string]string{}, others: map[string]int{}}
}

// memberOf is one proxy's view of the lock table.
type memberOf struct {
	t  *lockTable
	id string
}

func (m memberOf) TryWake(_ context.Context, server string) (func(), bool, string, error) {
	m.t.mu.Lock()
	defer m.t.mu.Unlock()
	m.t.tries++
	if m.t.err != nil {
		return nil, false, "", m.t.err
	}
	if h, ok := m.t.holders[server]; ok {
		return nil, false, h, nil
	}
	m.t.holders[server] = m.id
	return func() {
		m.t.mu.Lock()
		defer m.t.mu.Unlock()
		if m.t.holders[server] == m.id {
			delete(m.t.holders, server)
		}
	}, true, m.id, nil
}

func (m memberOf) OtherPlayers(server string) int {
	m.t.mu.Lock()
	defer m.t.mu.Unlock()
	return m.t.others[server]
}

// fleetHarness is a harness whose manager is the member id of table.
func fleetHarness(t *testing.T, table *lockTable, id string, servers ...*config.Server) *harness {
	t.Helper()
	h := newHarness(t, nil)
	h.m.fleet = memberOf{table, id}
	h.configure(t, servers...)
	return h
}

// Players arrive at three proxies at once for one sleeping server: exactly one
// proxy starts it, the other two wait for it to answer and let their players in.
func TestFleetOneStartForConcurrentWakes(t *testing.T) {
	table := newLockTable()
	addr := freeAddr(t)
	var hs []*harness
	for _, id := range []string{"a", "b", "c"} {
		hs = append(hs, fleetHarness(t, table, id, fakeServer("survival", "fakechild", "v1", addr)))
	}
	for _, h := range hs {
		if got := h.m.State("survival"); got != StateSleeping {
			t.Fatalf("before: %s", got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make(chan error, len(hs))
	for _, h := range hs {
		go func() { errs <- h.m.EnsureStarted(ctx, "survival") }()
	}
	// The server comes up once some proxy asked for it, the way a real one binds its port.
	var starter *harness
	for starter == nil {
		for _, h := range hs {
			if h.fake(t, "survival").startCount() > 0 {
				starter = h
			}
		}
		if ctx.Err() != nil {
			t.Fatal("no proxy started the server")
		}
		time.Sleep(5 * time.Millisecond)
	}
	srv, err := fakemc.Start(addr, fakemc.Options{Name: "survival"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for range hs {
		if err := <-errs; err != nil {
			t.Fatalf("a waiting login failed: %v", err)
		}
	}
	total := 0
	for _, h := range hs {
		total += h.fake(t, "survival").startCount()
		if got := h.m.State("survival"); got != StateOnline {
			t.Errorf("a proxy sees %s, want online", got)
		}
	}
	if total != 1 {
		t.Fatalf("%d starts across the fleet, want exactly 1", total)
	}
	// The starter releases the lock right after its start ended.
	for {
		table.mu.Lock()
		n := len(table.holders)
		table.mu.Unlock()
		if n == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the wake lock was never released after the start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, h := range hs {
		if h == starter {
			continue
		}
		if !strings.Contains(h.logs.String(), "another proxy of the fleet is starting the server") {
			t.Errorf("a waiting proxy did not say who starts the server")
		}
	}
}

// A proxy that died holding the lock delays the next start only until its lock
// is gone; then a waiting proxy takes it and starts the server itself.
func TestFleetDeadHolderIsReplaced(t *testing.T) {
	table := newLockTable()
	table.holders["survival"] = "dead"
	addr := freeAddr(t)
	h := fleetHarness(t, table, "b", fakeServer("survival", "fakechild", "v1", addr))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.m.EnsureStarted(ctx, "survival") }()
	h.waitState(t, "survival", StateStarting)
	for !strings.Contains(h.stateReason(), "being started by proxy dead") {
		time.Sleep(5 * time.Millisecond)
	}
	if n := h.fake(t, "survival").startCount(); n != 0 {
		t.Fatalf("b started the server while the lock was held (%d starts)", n)
	}
	table.mu.Lock()
	delete(table.holders, "survival") // the dead proxy's lock expires
	table.mu.Unlock()
	for h.fake(t, "survival").startCount() == 0 {
		if ctx.Err() != nil {
			t.Fatal("b never took over the start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	srv, err := fakemc.Start(addr, fakemc.Options{Name: "survival"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// With the fleet unreachable a proxy starts the server itself: a double start
// beats a server nobody starts.
func TestFleetUnreachableStartsHere(t *testing.T) {
	table := newLockTable()
	table.err = errors.New("the fleet's Redis is unreachable")
	h := fleetHarness(t, table, "a", fakeServer("lobby", "fake", "v1"))
	h.firstPoll()
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	if n := h.fake(t, "lobby").startCount(); n != 1 {
		t.Fatalf("%d starts, want 1", n)
	}
	if !strings.Contains(h.logs.String(), "starting it here") {
		t.Error("the log does not say the fleet could not be asked")
	}
}

// A proxy that holds the lock but finds the server already answering (another
// proxy started it and released the lock) does not start it again.
func TestFleetNoStartWhenAlreadyAnswering(t *testing.T) {
	table := newLockTable()
	srv, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: "lobby"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := fleetHarness(t, table, "a", fakeServer("lobby", "fake", "v1", srv.Addr()))
	h.firstPoll()
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	if n := h.fake(t, "lobby").startCount(); n != 0 {
		t.Fatalf("%d starts of a server that already answered", n)
	}
}

// Players elsewhere in the fleet hold off the idle stop; once the whole fleet has
// left, shutdown_after counts from then.
func TestFleetIdleCountsTheWholeFleet(t *testing.T) {
	clock := newManualClock()
	table := newLockTable()
	h := newHarness(t, clock)
	h.m.fleet = memberOf{table, "a"}
	srv := fakeServer("lobby", "fake", "v1")
	srv.ServerManager.ShutdownAfter = config.Duration(10 * time.Minute)
	h.configure(t, srv)
	h.firstPoll()
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	table.mu.Lock()
	table.others["lobby"] = 3
	table.mu.Unlock()
	clock.Advance(time.Hour)
	h.m.check()
	if got := h.m.State("lobby"); got != StateOnline {
		t.Fatalf("stopped while the fleet had players on it: %s", got)
	}
	table.mu.Lock()
	table.others["lobby"] = 0
	table.mu.Unlock()
	clock.Advance(9 * time.Minute)
	h.m.check()
	if got := h.m.State("lobby"); got != StateOnline {
		t.Fatalf("stopped before shutdown_after counted from the fleet's last player: %s", got)
	}
	clock.Advance(time.Minute)
	h.m.check()
	h.waitState(t, "lobby", StateSleeping)
}

// A local server run by another proxy is online on this one too, instead of
// flapping to sleeping at every poll.
func TestFleetLocalServerRunningElsewhere(t *testing.T) {
	srv, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: "lobby"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := fleetHarness(t, newLockTable(), "b", fakeServer("lobby", "fakechild", "v1", srv.Addr()))
	h.firstPoll()
	h.waitState(t, "lobby", StateOnline)
	h.firstPoll()
	if got := h.m.State("lobby"); got != StateOnline {
		t.Fatalf("after another poll: %s", got)
	}
}

// stateReason is the server's reason as the admin API shows it.
func (h *harness) stateReason() string {
	for _, s := range h.m.Snapshot() {
		return s.Reason
	}
	return ""
}
