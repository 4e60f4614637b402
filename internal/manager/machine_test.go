package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

// The state machine, driven through fake providers and a hand-moved clock: no
// subprocess, no sleeping. The local provider's own behaviour is in local_test.go.

// ensure runs EnsureStarted in the background and returns where its answer lands.
func ensure(m *Manager, server string) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- m.EnsureStarted(context.Background(), server) }()
	return ch
}

// answer waits for a background call's error.
func answer(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return")
		return nil
	}
}

func TestWakeOnLoginWaitsUntilReady(t *testing.T) {
	backend, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: "lobby", MOTD: "awake"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Close() })
	h := newHarness(t, nil)
	h.configure(t, fakeServer("lobby", "fakechild", "v1", backend.Addr()))

	if !h.m.Managed("lobby") || h.m.Managed("other") {
		t.Fatal("Managed should be true only for the configured server")
	}
	if got := h.m.State("lobby"); got != StateSleeping {
		t.Fatalf("initial state %q, want sleeping (a child's state is known without a poll)", got)
	}
	if got := h.m.State("other"); got != "" {
		t.Errorf("unmanaged server has state %q, want none", got)
	}
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatalf("EnsureStarted: %v", err)
	}
	if got := h.m.State("lobby"); got != StateOnline {
		t.Fatalf("state after EnsureStarted %q, want online", got)
	}
	if sc := h.waitState(t, "lobby", StateStarting); sc.From != string(StateSleeping) || sc.Reason != "a player is joining" {
		t.Errorf("starting event %+v", sc)
	}
	h.waitState(t, "lobby", StateOnline)
	if got, want := h.nextReady(t), "lobby@"+backend.Addr(); got != want {
		t.Errorf("OnReady call %s, want %s", got, want)
	}
	if n := h.fake(t, "lobby").startCount(); n != 1 {
		t.Errorf("provider started %d times, want 1", n)
	}
	// Online: the next login goes straight through.
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil || h.fake(t, "lobby").startCount() != 1 {
		t.Errorf("second login: %v, starts %d", err, h.fake(t, "lobby").startCount())
	}
	h.noMoreReady(t)
}

func TestRunningButNotAnsweringIsNotOnline(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	h.configure(t, fakeServer("lobby", "fakechild", "v1", testutil.RefusedAddr(t)))
	login := ensure(h.m, "lobby")
	h.waitState(t, "lobby", StateStarting)
	clock.waitTimers(t, 3) // the login's start_timeout, the start loop's start_timeout and its next look
	clock.Advance(500 * time.Millisecond)
	clock.waitTimers(t, 3) // looked again: still no answer
	if got := h.m.State("lobby"); got != StateStarting {
		t.Fatalf("a server whose address refuses connections is %s, want starting", got)
	}
	clock.Advance(time.Minute)
	if err := answer(t, login); !errors.Is(err, ErrStartTimeout) {
		t.Fatalf("login: %v, want ErrStartTimeout", err)
	}
}

func TestReadsAndPollsNeverStart(t *testing.T) {
	h := newHarness(t, nil)
	h.configure(t, fakeServer("panel", "fake", "v1"), fakeServer("child", "fakechild", "v1"))
	if got := h.m.State("panel"); got != StateOffline {
		t.Fatalf("a panel server before its first poll is %s, want offline", got)
	}
	for range 3 {
		h.firstPoll()
		_ = h.m.Snapshot()
		_ = h.m.State("panel")
	}
	for _, id := range []string{"panel", "child"} {
		if got := h.m.State(id); got != StateSleeping {
			t.Errorf("%s is %s after polls, want sleeping", id, got)
		}
		if n := h.fake(t, id).startCount(); n != 0 {
			t.Errorf("reads and polls started %s %d times", id, n)
		}
	}
}

func TestConcurrentLoginsShareOneStart(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	h.configure(t, fakeServer("survival", "fakechild", "v1"))
	gate := make(chan struct{})
	h.fake(t, "survival").configure(func(f *fakeProvider) { f.startGate = gate })

	const players = 20
	logins := make([]<-chan error, players)
	for i := range logins {
		logins[i] = ensure(h.m, "survival")
	}
	clock.waitTimers(t, players) // every login is waiting with its own start_timeout
	close(gate)
	for i, l := range logins {
		if err := answer(t, l); err != nil {
			t.Errorf("player %d: %v", i, err)
		}
	}
	if n := h.fake(t, "survival").startCount(); n != 1 {
		t.Fatalf("%d concurrent logins started the server %d times, want 1", players, n)
	}
}

func TestStartTimeoutTellsPlayerToReconnectAndKeepsStarting(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	h.configure(t, fakeServer("modded", "fakechild", "v1"))
	f := h.fake(t, "modded")
	f.configure(func(f *fakeProvider) { f.onStart = PhaseStarting }) // boots for minutes

	login := ensure(h.m, "modded")
	clock.waitTimers(t, 3)
	clock.Advance(59 * time.Second)
	clock.waitTimers(t, 3)
	select {
	case err := <-login:
		t.Fatalf("login answered before start_timeout: %v", err)
	default:
	}
	clock.Advance(time.Second)
	err := answer(t, login)
	if !errors.Is(err, ErrStartTimeout) || err.Error() != "Server is starting, please reconnect in a moment" {
		t.Fatalf("player sees %q, want ErrStartTimeout's text", err)
	}
	if got := h.m.State("modded"); got != StateStarting {
		t.Fatalf("a slow server should keep starting, state %q", got)
	}
	// The start goes on: once the server is up, the next login lands.
	f.set(PhaseRunning, "")
	h.waitState(t, "modded", StateOnline)
	if err := h.m.EnsureStarted(context.Background(), "modded"); err != nil || f.startCount() != 1 {
		t.Errorf("login after the slow start: %v, starts %d", err, f.startCount())
	}
	if !strings.Contains(h.logs.String(), "still not ready after start_timeout") {
		t.Error("the operator was not told the server is slow")
	}
}

func TestStartThatNeverComesUpIsACrash(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	h.configure(t, fakeServer("smp", "fake", "v1"))
	h.firstPoll()
	f := h.fake(t, "smp")
	f.configure(func(f *fakeProvider) { f.onStart = PhaseStopped }) // the panel accepts and does nothing

	if err := h.m.Start(context.Background(), "smp"); err != nil {
		t.Fatal(err)
	}
	if sc := h.waitState(t, "smp", StateStarting); sc.Reason != "started by an operator" {
		t.Errorf("starting reason %q", sc.Reason)
	}
	clock.waitTimers(t, 2)
	clock.Advance(time.Minute)
	sc := h.waitState(t, "smp", StateCrashed)
	if want := "the provider still reports it stopped 1m0s after the start request (start_timeout)"; sc.Reason != want {
		t.Errorf("crash reason %q, want %q", sc.Reason, want)
	}
}

func TestCrashWhileStartingGivesThePlayerTheReason(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	h.configure(t, fakeServer("broken", "fakechild", "v1"))
	f := h.fake(t, "broken")
	f.configure(func(f *fakeProvider) {
		f.onStart = PhaseStarting
		f.output = []string{"java.lang.OutOfMemoryError: boom"}
	})

	login := ensure(h.m, "broken")
	clock.waitTimers(t, 3)
	f.set(PhaseCrashed, "exited with exit status 3")
	err := answer(t, login)
	var se *StartError
	if !errors.As(err, &se) || err.Error() != "Server could not start: exited with exit status 3" {
		t.Fatalf("player sees %v, want the exit reason", err)
	}
	if sc := h.waitState(t, "broken", StateCrashed); sc.From != string(StateStarting) || sc.Reason != "exited with exit status 3" {
		t.Errorf("crash event %+v", sc)
	}
	snap := h.m.Snapshot()
	if len(snap) != 1 || snap[0].State != StateCrashed || snap[0].Reason != "exited with exit status 3" ||
		!slices.Equal(snap[0].LastOutput, []string{"java.lang.OutOfMemoryError: boom"}) {
		t.Errorf("snapshot %+v should keep the reason and the last output", snap)
	}
	// The next login tries again.
	f.configure(func(f *fakeProvider) { f.onStart = PhaseRunning })
	if err := h.m.EnsureStarted(context.Background(), "broken"); err != nil || f.startCount() != 2 {
		t.Errorf("login after a crash: %v, starts %d (want a second start)", err, f.startCount())
	}
}

func TestCrashWhileOnline(t *testing.T) {
	h := newHarness(t, nil)
	h.configure(t, fakeServer("flaky", "fakechild", "v1"))
	if err := h.m.EnsureStarted(context.Background(), "flaky"); err != nil {
		t.Fatal(err)
	}
	h.fake(t, "flaky").set(PhaseCrashed, "exited with signal: killed")
	sc := h.waitState(t, "flaky", StateCrashed)
	if sc.From != string(StateOnline) || sc.Reason != "exited with signal: killed" {
		t.Errorf("crash event %+v", sc)
	}
}

func TestIdleStopAfterShutdownAfter(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	srv := fakeServer("lobby", "fakechild", "v1")
	srv.ServerManager.ShutdownAfter = config.Duration(10 * time.Minute)
	h.configure(t, srv)
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}

	h.m.PlayerJoined("lobby")
	clock.Advance(time.Hour)
	h.m.check()
	if got := h.m.State("lobby"); got != StateOnline {
		t.Fatalf("stopped with a player on it: %s", got)
	}
	h.m.PlayerLeft("lobby")
	clock.Advance(9*time.Minute + 59*time.Second)
	h.m.check()
	if got := h.m.State("lobby"); got != StateOnline {
		t.Fatalf("stopped before shutdown_after: %s", got)
	}
	if s := h.m.Snapshot()[0]; s.IdleSecs == nil || *s.IdleSecs != 599 || s.ShutdownAfterSecs != 600 {
		t.Errorf("idle_secs = %v, shutdown_after_secs = %v, want 599 and 600", s.IdleSecs, s.ShutdownAfterSecs)
	}
	// A login is activity: it restarts the idle clock.
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	h.m.check()
	if got := h.m.State("lobby"); got != StateOnline {
		t.Fatalf("stopped right after a login: %s", got)
	}
	clock.Advance(10 * time.Minute)
	h.m.check()
	sc := h.waitState(t, "lobby", StateSleeping)
	if want := "no players for 10m0s (shutdown_after); stopped cleanly"; sc.Reason != want {
		t.Errorf("sleeping reason %q, want %q", sc.Reason, want)
	}
	if got := h.fake(t, "lobby").stopGraces(); !slices.Equal(got, []time.Duration{30 * time.Second}) {
		t.Errorf("stop graces %v, want the server's shutdown_timeout once", got)
	}
}

func TestLoginDuringStopWaitsThenStarts(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	h.configure(t, fakeServer("lobby", "fakechild", "v1"))
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	f := h.fake(t, "lobby")
	gate := make(chan struct{})
	f.configure(func(f *fakeProvider) { f.stopGate = gate })
	stopped := make(chan error, 1)
	go func() { stopped <- h.m.Stop(context.Background(), "lobby") }()
	h.waitState(t, "lobby", StateStopping)

	login := ensure(h.m, "lobby")
	clock.waitTimers(t, 1) // the login waits with its start_timeout
	close(gate)
	if err := answer(t, login); err != nil {
		t.Fatalf("login during stop: %v", err)
	}
	if err := answer(t, stopped); err != nil {
		t.Errorf("Stop: %v", err)
	}
	h.waitState(t, "lobby", StateSleeping)
	if sc := h.waitState(t, "lobby", StateStarting); sc.From != string(StateSleeping) {
		t.Errorf("restart came from %q, want sleeping (the stop must finish first)", sc.From)
	}
	if n := f.startCount(); n != 2 || h.m.State("lobby") != StateOnline {
		t.Errorf("starts = %d, state %s; want 2 and online", n, h.m.State("lobby"))
	}
}

func TestStopDuringJoinTellsThePlayer(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	h.configure(t, fakeServer("lobby", "fakechild", "v1"))
	gate := make(chan struct{})
	h.fake(t, "lobby").configure(func(f *fakeProvider) { f.onStart, f.stopGate = PhaseStarting, gate })
	login := ensure(h.m, "lobby")
	clock.waitTimers(t, 3)

	stopped := make(chan error, 1)
	go func() { stopped <- h.m.Stop(context.Background(), "lobby") }()
	err := answer(t, login)
	if want := "Server could not start: it is being stopped (stopped by an operator)"; err == nil || err.Error() != want {
		t.Fatalf("player sees %v, want %q", err, want)
	}
	close(gate)
	if err := answer(t, stopped); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if got := h.m.State("lobby"); got != StateSleeping {
		t.Errorf("state %s after the stop, want sleeping", got)
	}
}

func TestStopAndStartByOperator(t *testing.T) {
	h := newHarness(t, nil)
	h.configure(t, fakeServer("lobby", "fakechild", "v1"))
	if err := h.m.Stop(context.Background(), "lobby"); err != nil {
		t.Errorf("stopping a sleeping server: %v", err)
	}
	if err := h.m.Start(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	h.waitState(t, "lobby", StateOnline)
	if err := h.m.Start(context.Background(), "lobby"); err != nil || h.fake(t, "lobby").startCount() != 1 {
		t.Errorf("starting an online server: %v, starts %d", err, h.fake(t, "lobby").startCount())
	}
	if err := h.m.Stop(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	if s := h.m.Snapshot()[0]; s.State != StateSleeping || s.Reason != "stopped by an operator; stopped cleanly" {
		t.Errorf("after stop: %s (%s)", s.State, s.Reason)
	}
	for _, call := range []func(context.Context, string) error{h.m.Start, h.m.Stop, h.m.EnsureStarted} {
		if err := call(context.Background(), "nope"); !errors.Is(err, ErrNotManaged) {
			t.Errorf("unmanaged server: %v, want ErrNotManaged", err)
		}
	}
}

func TestOperatorStopThatRunsPastItsContextGoesOn(t *testing.T) {
	h := newHarness(t, nil)
	h.configure(t, fakeServer("lobby", "fakechild", "v1"))
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	h.fake(t, "lobby").configure(func(f *fakeProvider) { f.stopGate = gate })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := h.m.Stop(ctx, "lobby")
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "continues in the background") {
		t.Fatalf("Stop with an ended context: %v", err)
	}
	close(gate)
	h.waitState(t, "lobby", StateSleeping)
}

func TestReconfigure(t *testing.T) {
	h := newHarness(t, nil)
	h.configure(t, fakeServer("lobby", "fakechild", "v1"), fakeServer("gone", "fakechild", "v1"),
		fakeServer("panel", "fake", "v1"))
	for _, id := range []string{"lobby", "gone", "panel"} {
		if err := h.m.EnsureStarted(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	oldLobby, gone, panel := h.fake(t, "lobby"), h.fake(t, "gone"), h.fake(t, "panel")

	// lobby gets a new command and a new shutdown_timeout while it runs; gone and panel are removed.
	lobby2 := fakeServer("lobby", "fakechild", "v2")
	lobby2.ServerManager.ShutdownTimeout = config.Duration(7 * time.Second)
	h.configure(t, lobby2)

	if h.m.State("lobby") != StateOnline || oldLobby.startCount() != 1 {
		t.Fatalf("reload restarted lobby: state %s, starts %d", h.m.State("lobby"), oldLobby.startCount())
	}
	if h.m.Managed("gone") || h.m.Managed("panel") || len(h.m.Snapshot()) != 1 {
		t.Fatal("removed servers are still managed")
	}
	h.waitState(t, "gone", StateSleeping)
	if len(gone.stopGraces()) != 1 {
		t.Error("the removed child's process was left running")
	}
	if len(panel.stopGraces()) != 0 {
		t.Error("a removed panel server was stopped; it is not the proxy's to stop")
	}
	// New timings apply at once, the new command once lobby is down.
	if err := h.m.Stop(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	if got := oldLobby.stopGraces(); !slices.Equal(got, []time.Duration{7 * time.Second}) {
		t.Errorf("stop grace %v, want the reloaded 7s", got)
	}
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	if newLobby := h.fake(t, "lobby"); newLobby == oldLobby || newLobby.startCount() != 1 || oldLobby.startCount() != 1 {
		t.Error("the reloaded command was not used for the next start")
	}
}

func TestBadConfigShowsReason(t *testing.T) {
	h := newHarness(t, nil)
	srv := &config.Server{ID: "x", ServerManager: &config.ServerManager{Type: "local"}}
	odd := &config.Server{ID: "y", ServerManager: &config.ServerManager{Type: "docker"}}
	err := h.m.Configure([]*config.Server{srv, odd})
	if err == nil || !strings.Contains(err.Error(), "needs command") || !strings.Contains(err.Error(), `type "docker" is not one of`) {
		t.Fatalf("Configure error %v should name both problems", err)
	}
	if !h.m.Managed("x") || h.m.State("x") != StateOffline {
		t.Errorf("misconfigured server should stay listed as offline, got %q", h.m.State("x"))
	}
	if err := h.m.EnsureStarted(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "needs command") {
		t.Errorf("login error %v should carry the config problem", err)
	}
}

// TestPlayerNeverReadsGoContextErrors: whatever ends a wait or a start, the text
// the proxy shows in the Login Disconnect is words, never "context canceled".
func TestPlayerNeverReadsGoContextErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now())
	defer cancel2()
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		startErr error
		want     string
		is       error
	}{
		{"caller cancelled", cancelled, nil, "Server is starting, please reconnect in a moment", context.Canceled},
		{"caller deadline", expired, nil, "Server is starting, please reconnect in a moment", context.DeadlineExceeded},
		{"start request timed out", context.Background(), fmt.Errorf("panel unreachable: %w", context.DeadlineExceeded),
			"Server could not start: the start failed: it did not answer in time", nil},
		{"start request cancelled", context.Background(), fmt.Errorf("start: %w", context.Canceled),
			"Server could not start: the start failed: the request was interrupted", nil},
		{"start refused", context.Background(), errors.New("HTTP 403: This action is unauthorized"),
			"Server could not start: the start failed: HTTP 403: This action is unauthorized", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, newManualClock())
			h.configure(t, fakeServer("s", "fakechild", "v1"))
			h.fake(t, "s").configure(func(f *fakeProvider) {
				f.startErr = tc.startErr
				f.onStart = PhaseStarting
			})
			err := h.m.EnsureStarted(tc.ctx, "s")
			if err == nil || err.Error() != tc.want {
				t.Fatalf("player sees %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "context") {
				t.Errorf("player sees Go's words: %q", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false; logs and callers lose the cause", err, tc.is)
			}
			if tc.is != nil && errors.Is(err, ErrStartTimeout) {
				t.Error("a caller's own cancel is not the server's start timeout")
			}
		})
	}
}

func TestShutdownStopsChildrenWithTheirOwnGraceAndLeavesPanels(t *testing.T) {
	clock := newManualClock()
	h := newHarness(t, clock)
	child := fakeServer("child", "fakechild", "v1")
	child.ServerManager.ShutdownTimeout = config.Duration(45 * time.Second)
	h.configure(t, child, fakeServer("booting", "fakechild", "v1"), fakeServer("asleep", "fakechild", "v1"),
		fakeServer("panel", "fake", "v1"))
	for _, id := range []string{"child", "panel"} {
		if err := h.m.EnsureStarted(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	h.fake(t, "booting").configure(func(f *fakeProvider) { f.onStart = PhaseStarting })
	login := ensure(h.m, "booting")
	clock.waitTimers(t, 3)

	if err := h.m.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := answer(t, login); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("waiting login: %v, want ErrShuttingDown", err)
	}
	for id, want := range map[string][]time.Duration{
		"child":   {45 * time.Second}, // its own shutdown_timeout, not what is left of anyone's budget
		"booting": {30 * time.Second}, // a child still starting is ours too
		"asleep":  nil,                // nothing runs
		"panel":   nil,                // the panel keeps it; the next proxy finds it running
	} {
		if got := h.fake(t, id).stopGraces(); !slices.Equal(got, want) {
			t.Errorf("%s: stop graces %v, want %v", id, got, want)
		}
	}
	if err := h.m.EnsureStarted(context.Background(), "asleep"); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("login after Shutdown: %v", err)
	}
	if err := h.m.Start(context.Background(), "asleep"); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("start after Shutdown: %v", err)
	}
}

func TestShutdownLetsAStopInProgressFinish(t *testing.T) {
	h := newHarness(t, nil)
	h.configure(t, fakeServer("lobby", "fakechild", "v1"))
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	f := h.fake(t, "lobby")
	gate, entered := make(chan struct{}), make(chan struct{})
	f.configure(func(f *fakeProvider) { f.stopGate, f.stopEntered = gate, entered })
	stopped := make(chan error, 1)
	go func() { stopped <- h.m.Stop(context.Background(), "lobby") }()
	<-entered // the operator's stop is under way, with its own grace

	var phaseAtReturn Phase
	done := make(chan error, 1)
	go func() {
		err := h.m.Shutdown()
		phaseAtReturn = f.phaseNow()
		done <- err
	}()
	<-h.m.base.Done() // Shutdown has begun
	close(gate)
	if err := answer(t, done); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if phaseAtReturn != PhaseStopped {
		t.Errorf("Shutdown returned while the child was %s; it must wait for the stop", phaseAtReturn)
	}
	if err := answer(t, stopped); err != nil {
		t.Errorf("the operator's stop: %v", err)
	}
	if n := len(f.stopGraces()); n != 1 {
		t.Errorf("Stop called %d times; Shutdown must let the running stop keep its grace", n)
	}
}

func TestShutdownWithoutRunningChildrenReturnsAtOnce(t *testing.T) {
	h := newHarness(t, nil)
	if err := h.m.Shutdown(); err != nil {
		t.Errorf("Shutdown with no server: %v", err)
	}
	h2 := newHarness(t, nil)
	h2.configure(t, fakeServer("panel", "fake", "v1"))
	if err := h2.m.EnsureStarted(context.Background(), "panel"); err != nil {
		t.Fatal(err)
	}
	if err := h2.m.Shutdown(); err != nil {
		t.Errorf("Shutdown with only a panel server: %v", err)
	}
	if strings.Contains(h.logs.String()+h2.logs.String(), "gave up") {
		t.Error("Shutdown warned about giving up")
	}
}

func TestShutdownReportsAChildThatWouldNotStop(t *testing.T) {
	h := newHarness(t, nil)
	h.configure(t, fakeServer("stuck", "fakechild", "v1"))
	if err := h.m.EnsureStarted(context.Background(), "stuck"); err != nil {
		t.Fatal(err)
	}
	// A process in D state survives even SIGKILL.
	h.fake(t, "stuck").configure(func(f *fakeProvider) { f.stopErr = errors.New("process 42 still running after SIGKILL") })
	err := h.m.Shutdown()
	if err == nil || !strings.Contains(err.Error(), `server "stuck"`) || !strings.Contains(err.Error(), "still running after SIGKILL") {
		t.Errorf("Shutdown: %v, want the server that did not stop", err)
	}
	h.fake(t, "stuck").configure(func(f *fakeProvider) { f.stopErr = nil })
}

func TestStateMachineTable(t *testing.T) {
	for _, s := range States {
		if _, ok := transitions[s]; !ok {
			t.Errorf("state %s has no row in the transition table", s)
		}
		if slices.Contains(transitions[s], s) {
			t.Errorf("state %s lists itself; staying is always allowed", s)
		}
		if !canMove("", s) {
			t.Errorf("a new server cannot enter %s", s)
		}
		if s != StateStarting && canMove(s, StateOnline) && s != StateOnline {
			t.Errorf("%s -> online allowed: a server is online only after a start was followed to the end", s)
		}
	}
	if canMove(StateSleeping, StateOnline) || canMove(StateOnline, StateStarting) || canMove(StateStarting, StateSleeping) {
		t.Error("the table allows a move that skips the start or the stop")
	}

	// A move outside the table is reported (on a manager of its own: the harness
	// fails any test where that happens).
	var logs testutil.SyncBuffer
	m := New(Options{
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
		Providers: map[string]ProviderFunc{"fakechild": (&harness{fakes: map[string][]*fakeProvider{}}).newFake(true)},
	})
	defer m.Shutdown()
	if err := m.Configure([]*config.Server{fakeServer("s", "fakechild", "v1")}); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.setState(m.servers["s"], StateOnline, "bug")
	m.unlock()
	if !strings.Contains(logs.String(), "outside the state machine") || m.State("s") != StateOnline {
		t.Errorf("sleeping -> online was not reported (or not applied): %s", logs.String())
	}
}
