package docker_test

import (
	"bytes"
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery/docker"
	"github.com/infrarust-go/infrarust/internal/discovery/docker/dockertest"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// timers is a hand-fired clock for the source: every After is recorded, and the
// test fires the one it means.
type timers struct {
	mu      sync.Mutex
	pending map[time.Duration][]chan time.Time
	asked   []time.Duration
	changed chan struct{}
}

func newTimers() *timers {
	return &timers{pending: map[time.Duration][]chan time.Time{}, changed: make(chan struct{}, 1)}
}

func (tm *timers) after(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	tm.mu.Lock()
	tm.pending[d] = append(tm.pending[d], ch)
	tm.asked = append(tm.asked, d)
	tm.mu.Unlock()
	select {
	case tm.changed <- struct{}{}:
	default:
	}
	return ch
}

// fire waits until a timer of d is pending and fires the newest one.
func (tm *timers) fire(t *testing.T, d time.Duration) {
	t.Helper()
	tm.waitPending(t, d)
	tm.mu.Lock()
	chs := tm.pending[d]
	ch := chs[len(chs)-1]
	tm.pending[d] = chs[:len(chs)-1]
	tm.mu.Unlock()
	ch <- time.Now()
}

// waitPending waits until the source has started a timer of d: for a reconnect
// delay, that means the attempt before it failed.
func (tm *timers) waitPending(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		tm.mu.Lock()
		n := len(tm.pending[d])
		tm.mu.Unlock()
		if n > 0 {
			return
		}
		select {
		case <-tm.changed:
		case <-deadline:
			t.Fatalf("no %s timer was started; asked so far: %v", d, tm.askedCopy())
		}
	}
}

func (tm *timers) askedCopy() []time.Duration {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return append([]time.Duration(nil), tm.asked...)
}

// snapshots collects what the source reports.
type snapshots chan []*config.Server

func (s snapshots) next(t *testing.T, why string) map[string][]string {
	t.Helper()
	select {
	case servers := <-s:
		out := map[string][]string{}
		for _, srv := range servers {
			for _, a := range srv.Addresses {
				out[srv.ID] = append(out[srv.ID], a.Address)
			}
			sort.Strings(out[srv.ID])
		}
		return out
	case <-time.After(10 * time.Second):
		t.Fatalf("no snapshot after %s", why)
		return nil
	}
}

func (s snapshots) none(t *testing.T, why string) {
	t.Helper()
	select {
	case servers := <-s:
		t.Fatalf("unexpected snapshot after %s: %d servers", why, len(servers))
	default:
	}
}

func lobby(n int, ip string) dockertest.Container {
	return dockertest.Container{
		Name:     "mc-lobby-" + string(rune('0'+n)),
		Labels:   map[string]string{"infrarust.enable": "true", "infrarust.domains": "lobby.example.com", "com.docker.compose.project": "mc", "com.docker.compose.service": "lobby"},
		Networks: map[string]string{"mc_default": ip},
	}
}

// runSource runs a source on d's endpoint until the test ends; the lists it
// hands over arrive on the snapshots. logger may be nil.
func runSource(t *testing.T, d *dockertest.Daemon, tm *timers, logger *slog.Logger) (snapshots, config.Docker) {
	t.Helper()
	conn := config.DefaultDocker()
	conn.Endpoint = d.Endpoint()
	src, err := docker.NewSource(conn, config.Default(), docker.Options{After: tm.after, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	got := make(snapshots, 16)
	go func() {
		defer close(done)
		src.Run(ctx, func(s []*config.Server) { got <- s })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return got, conn
}

func TestSourceFollowsTheDaemon(t *testing.T) {
	d, err := dockertest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Add(lobby(1, "172.18.0.2"))
	d.Add(lobby(2, "172.18.0.3"))
	d.Add(dockertest.Container{Name: "survival", Labels: map[string]string{"infrarust.enable": "true", "infrarust.domains": "survival.example.com", "infrarust.port": "25570"}, Networks: map[string]string{"mc_default": "172.18.0.9"}})
	d.Add(dockertest.Container{Name: "postgres", Labels: map[string]string{"com.docker.compose.service": "db"}, Networks: map[string]string{"mc_default": "172.18.0.20"}})

	tm := newTimers()
	logs := &testutil.SyncBuffer{}
	got, conn := runSource(t, d, tm, slog.New(slog.NewTextHandler(logs, nil)))

	want := func(step string, snap map[string][]string, expect map[string][]string) {
		t.Helper()
		if len(snap) != len(expect) {
			t.Fatalf("%s: servers %v, want %v", step, snap, expect)
		}
		for id, addrs := range expect {
			if strings.Join(snap[id], " ") != strings.Join(addrs, " ") {
				t.Fatalf("%s: %s has %v, want %v (all: %v)", step, id, snap[id], addrs, snap)
			}
		}
	}
	want("first list", got.next(t, "start"), map[string][]string{
		"docker@mc-lobby": {"172.18.0.2:25565", "172.18.0.3:25565"},
		"docker@survival": {"172.18.0.9:25570"},
	})

	// docker compose up --scale lobby=3: the start event adds a replica at once.
	d.Add(lobby(3, "172.18.0.4"))
	want("a third replica", got.next(t, "start event"), map[string][]string{
		"docker@mc-lobby": {"172.18.0.2:25565", "172.18.0.3:25565", "172.18.0.4:25565"},
		"docker@survival": {"172.18.0.9:25570"},
	})

	// A replica dies, a server is paused.
	if err := d.SetState("mc-lobby-1", "exited", false); err != nil {
		t.Fatal(err)
	}
	want("a replica died", got.next(t, "die event"), map[string][]string{
		"docker@mc-lobby": {"172.18.0.3:25565", "172.18.0.4:25565"},
		"docker@survival": {"172.18.0.9:25570"},
	})
	if err := d.SetState("survival", "paused", false); err != nil {
		t.Fatal(err)
	}
	want("survival paused", got.next(t, "pause event"), map[string][]string{
		"docker@mc-lobby": {"172.18.0.3:25565", "172.18.0.4:25565"},
	})

	// The poll catches what no event told: a lost event.
	if err := d.SetState("survival", "running", true); err != nil {
		t.Fatal(err)
	}
	got.none(t, "a change without an event")
	tm.fire(t, conn.PollInterval.D())
	want("poll", got.next(t, "poll"), map[string][]string{
		"docker@mc-lobby": {"172.18.0.3:25565", "172.18.0.4:25565"},
		"docker@survival": {"172.18.0.9:25570"},
	})
	// A poll that finds nothing new reports nothing.
	lists := d.Count("GET", "/containers/json")
	tm.fire(t, conn.PollInterval.D())
	for d.Count("GET", "/containers/json") == lists {
		time.Sleep(time.Millisecond) // waiting for the poll's list to be served, not for a window
	}
	got.none(t, "an unchanged poll")

	// The daemon goes away: the last servers stay (no snapshot), the source retries
	// with a doubling delay, and re-lists when the daemon is back.
	d.Down()
	tm.fire(t, conn.ReconnectDelay.D()) // first retry: still down
	tm.fire(t, 2*conn.ReconnectDelay.D())
	tm.waitPending(t, 4*conn.ReconnectDelay.D()) // the second retry failed too
	got.none(t, "the daemon went away")
	d.Remove("survival")
	d.Add(lobby(5, "172.18.0.6"))
	if err := d.Up(); err != nil {
		t.Fatal(err)
	}
	tm.fire(t, 4*conn.ReconnectDelay.D())
	want("resync after the daemon came back", got.next(t, "reconnect"), map[string][]string{
		"docker@mc-lobby": {"172.18.0.3:25565", "172.18.0.4:25565", "172.18.0.6:25565"},
	})
	// Events flow again on the new stream, and the backoff starts over.
	d.Add(dockertest.Container{Name: "creative", Labels: map[string]string{"infrarust.enable": "true"}, Networks: map[string]string{"mc_default": "172.18.0.30"}})
	want("event after reconnect", got.next(t, "start event on the new stream"), map[string][]string{
		"docker@mc-lobby": {"172.18.0.3:25565", "172.18.0.4:25565", "172.18.0.6:25565"},
		"docker@creative": {"172.18.0.30:25565"},
	})
	d.Down()
	tm.fire(t, conn.ReconnectDelay.D()) // the delay started over at reconnect_delay
	tm.waitPending(t, 2*conn.ReconnectDelay.D())
	if err := d.Up(); err != nil {
		t.Fatal(err)
	}
	tm.fire(t, 2*conn.ReconnectDelay.D())
	for deadline := time.Now().Add(10 * time.Second); strings.Count(logs.String(), "reachable again") < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("the second reconnect was not logged:\n%s", logs)
		}
		time.Sleep(time.Millisecond) // waiting for the reconnect's log line, not for a window
	}
	got.none(t, "a reconnect that found the same servers")

	out := logs.String()
	if strings.Count(out, "cannot reach the daemon") != 2 || strings.Count(out, "reachable again") != 2 {
		t.Errorf("each outage must be logged once at warn and its end once at info:\n%s", out)
	}
}

func TestSourceReportsWhenTheDaemonRefuses(t *testing.T) {
	d, err := dockertest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Refuse(403)
	tm := newTimers()
	logs := &bytes.Buffer{}
	var mu sync.Mutex
	conn := config.DefaultDocker()
	conn.Endpoint = d.Endpoint()
	src, err := docker.NewSource(conn, config.Default(), docker.Options{After: tm.after, Logger: slog.New(slog.NewTextHandler(&lockedWriter{&mu, logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	got := make(snapshots, 4)
	go func() {
		defer close(done)
		src.Run(ctx, func(s []*config.Server) { got <- s })
	}()
	tm.fire(t, conn.ReconnectDelay.D())
	tm.waitPending(t, 2*conn.ReconnectDelay.D())
	d.Refuse(0)
	tm.fire(t, 2*conn.ReconnectDelay.D())
	if snap := got.next(t, "the daemon stopped refusing"); len(snap) != 0 {
		t.Fatalf("no container: %v", snap)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "a socket proxy in front of the daemon must allow this call") {
		t.Errorf("a 403 must say what to allow:\n%s", logs)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A container's own event decides: after its die the daemon may still list it
// running for a moment, and the source drops it at once instead of waiting for
// the daemon to catch up (or the next poll); a start brings it back.
func TestSourceDropsADeadContainerAtItsEvent(t *testing.T) {
	d, err := dockertest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Add(lobby(1, "172.18.0.2"))
	d.Add(lobby(2, "172.18.0.3"))
	tm := newTimers()
	got, conn := runSource(t, d, tm, nil)
	addrs := func(snap map[string][]string) string { return strings.Join(snap["docker@mc-lobby"], " ") }
	if a := addrs(got.next(t, "first list")); a != "172.18.0.2:25565 172.18.0.3:25565" {
		t.Fatalf("first list: %s", a)
	}
	// die, while the daemon still lists the container running.
	if err := d.Announce("mc-lobby-1", "die"); err != nil {
		t.Fatal(err)
	}
	if d.State("mc-lobby-1") != "running" {
		t.Fatal("setup: the daemon must still list it running")
	}
	if a := addrs(got.next(t, "die event")); a != "172.18.0.3:25565" {
		t.Fatalf("after its die event: %s, want the dead replica gone at once", a)
	}
	// The daemon catches up: nothing changes; then it starts again.
	if err := d.SetState("mc-lobby-1", "exited", true); err != nil {
		t.Fatal(err)
	}
	tm.fire(t, conn.PollInterval.D())
	got.none(t, "the daemon caught up")
	if err := d.SetState("mc-lobby-1", "running", false); err != nil {
		t.Fatal(err)
	}
	if a := addrs(got.next(t, "start event")); a != "172.18.0.2:25565 172.18.0.3:25565" {
		t.Fatalf("after its start: %s", a)
	}
}
