package manager

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"

	"github.com/infrarust-go/infrarust/internal/config"
)

func TestWakeOnFirstLoginWaitsUntilReady(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "lobby", "-delay", "300ms")
	f.srv.ServerManager.ReadyPattern = `Done \(`
	h.configure(t, f.srv)

	if !h.m.Managed("lobby") || h.m.Managed("other") {
		t.Fatal("Managed should be true only for the configured server")
	}
	if got := h.m.State("lobby"); got != StateSleeping {
		t.Fatalf("initial state %q, want sleeping", got)
	}
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatalf("EnsureStarted: %v", err)
	}
	if got := h.m.State("lobby"); got != StateOnline {
		t.Fatalf("state after EnsureStarted %q, want online", got)
	}
	if !f.answers() {
		t.Fatal("EnsureStarted returned but the server does not answer a status ping")
	}
	if sc := h.waitState(t, "lobby", StateStarting); sc.From != StateSleeping {
		t.Errorf("starting came from %q, want sleeping", sc.From)
	}
	h.waitState(t, "lobby", StateOnline)
	h.mu.Lock()
	readys := slices.Clone(h.readys)
	h.mu.Unlock()
	if want := []string{"lobby@" + f.addr}; !slices.Equal(readys, want) {
		t.Errorf("OnReady calls %v, want %v", readys, want)
	}
	if n := f.startCount(t); n != 1 {
		t.Errorf("process started %d times, want 1", n)
	}
	if !strings.Contains(h.logs.String(), "Done (1.234s)") {
		t.Error("the server's stdout did not reach the log")
	}
}

func TestConcurrentLoginsShareOneStart(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "survival", "-delay", "300ms")
	h.configure(t, f.srv)

	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Go(func() { errs[i] = h.m.EnsureStarted(context.Background(), "survival") })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("player %d: %v", i, err)
		}
	}
	if n := f.startCount(t); n != 1 {
		t.Fatalf("five concurrent logins started the process %d times, want 1", n)
	}
}

func TestStateReadsAndPollsNeverStart(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "lobby")
	h.configure(t, f.srv)

	for range 100 {
		if !h.m.Managed("lobby") || h.m.State("lobby") != StateSleeping {
			t.Fatalf("state %q, want sleeping", h.m.State("lobby"))
		}
	}
	// Background polling must not start it either.
	for range 3 {
		h.m.check()
		h.m.wg.Wait()
	}
	_ = h.m.Snapshot()
	if n := f.startCount(t); n != 0 {
		t.Fatalf("reads and polls started the process %d times", n)
	}
	if f.answers() || h.m.State("lobby") != StateSleeping {
		t.Fatalf("server woke without a login (state %s)", h.m.State("lobby"))
	}
}

func TestStartTimeoutTellsPlayerToReconnect(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "modded", "-delay", "20s")
	f.srv.ServerManager.StartTimeout = config.Duration(300 * time.Millisecond)
	h.configure(t, f.srv)

	err := h.m.EnsureStarted(context.Background(), "modded")
	if !errors.Is(err, ErrStartTimeout) {
		t.Fatalf("err = %v, want ErrStartTimeout", err)
	}
	if err.Error() != "Server is starting, please reconnect in a moment" {
		t.Errorf("player sees %q", err.Error())
	}
	if got := h.m.State("modded"); got != StateStarting {
		t.Errorf("a slow server should keep starting, state %q", got)
	}
}

func TestCallerCancelIsNotReportedAsTimeout(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "slow", "-delay", "20s")
	h.configure(t, f.srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := h.m.EnsureStarted(ctx, "slow")
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrStartTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCrashWhileStartingKeepsReason(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "broken", "-delay", "20s", "-crash-after", "100ms")
	h.configure(t, f.srv)

	err := h.m.EnsureStarted(context.Background(), "broken")
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *StartError", err)
	}
	if !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("player sees %q, want the exit reason", err)
	}
	if got := h.m.State("broken"); got != StateCrashed {
		t.Fatalf("state %q, want crashed", got)
	}
	sc := h.waitState(t, "broken", StateCrashed)
	if sc.From != StateStarting || !strings.Contains(sc.Reason, "exit status 3") {
		t.Errorf("crash event %+v", sc)
	}
	snap := h.m.Snapshot()
	if len(snap) != 1 || !strings.Contains(snap[0].Reason, "exit status 3") ||
		!slices.ContainsFunc(snap[0].LastOutput, func(l string) bool { return strings.Contains(l, "boom") }) {
		t.Errorf("snapshot %+v should keep the reason and the last output", snap)
	}
}

func TestCrashWhileOnline(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "flaky", "-crash-after", "1s")
	h.configure(t, f.srv)
	if err := h.m.EnsureStarted(context.Background(), "flaky"); err != nil {
		t.Fatal(err)
	}
	sc := h.waitState(t, "flaky", StateCrashed)
	if sc.From != StateOnline || !strings.Contains(sc.Reason, "exit status 3") {
		t.Errorf("crash event %+v", sc)
	}
	// The next login starts it again.
	_ = h.m.EnsureStarted(context.Background(), "flaky")
	if n := f.startCount(t); n != 2 {
		t.Errorf("a login after a crash should start it again; starts = %d", n)
	}
}

func TestIdleStopAfterShutdownAfter(t *testing.T) {
	clock := testutil.NewClock(time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC))
	h := newHarness(t, clock.Now)
	f := newFakeLocal(t, "lobby")
	f.srv.ServerManager.ShutdownAfter = config.Duration(10 * time.Minute)
	h.configure(t, f.srv)
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
	if s := h.m.Snapshot()[0]; s.IdleSecs == nil || *s.IdleSecs != 599 {
		t.Errorf("idle_secs = %v, want 599", s.IdleSecs)
	}
	clock.Advance(time.Second)
	h.m.check()
	sc := h.waitState(t, "lobby", StateSleeping)
	if !strings.Contains(sc.Reason, "no players for 10m0s") || !strings.Contains(sc.Reason, "stopped cleanly") {
		t.Errorf("sleeping reason %q", sc.Reason)
	}
	if f.answers() {
		t.Error("server still answers after the idle stop")
	}
}

func TestLoginDuringStopWaitsThenStarts(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "lobby", "-stop-delay", "400ms")
	h.configure(t, f.srv)
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- h.m.Stop(context.Background(), "lobby") }()
	h.waitState(t, "lobby", StateStopping)

	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatalf("login during stop: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Stop: %v", err)
	}
	h.waitState(t, "lobby", StateSleeping)
	if sc := h.waitState(t, "lobby", StateStarting); sc.From != StateSleeping {
		t.Errorf("restart came from %q, want sleeping (the stop must finish first)", sc.From)
	}
	if n := f.startCount(t); n != 2 {
		t.Errorf("starts = %d, want 2", n)
	}
	if h.m.State("lobby") != StateOnline || !f.answers() {
		t.Errorf("state %s after the restart", h.m.State("lobby"))
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "stubborn", "-ignore-stop", "-ignore-term")
	f.srv.ServerManager.ShutdownTimeout = config.Duration(300 * time.Millisecond)
	h.configure(t, f.srv)
	if err := h.m.EnsureStarted(context.Background(), "stubborn"); err != nil {
		t.Fatal(err)
	}
	if err := h.m.Stop(context.Background(), "stubborn"); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	snap := h.m.Snapshot()[0]
	if snap.State != StateSleeping || !strings.Contains(snap.Reason, "killed (SIGKILL) after shutdown_timeout 300ms") {
		t.Errorf("after stop: %s (%s)", snap.State, snap.Reason)
	}
	logs := h.logs.String()
	for _, want := range []string{"ignoring stop", "sending SIGTERM", "sending SIGKILL"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if f.answers() {
		t.Error("process still answers after SIGKILL")
	}
}

func TestShutdownStopsLocalProcessesAndRefusesLogins(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "lobby")
	h.configure(t, f.srv)
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.m.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if f.answers() {
		t.Error("local server still runs after Shutdown")
	}
	if err := h.m.EnsureStarted(context.Background(), "lobby"); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("login after Shutdown: %v", err)
	}
}

func TestConfigureReloadKeepsRunningProcess(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "lobby")
	g := newFakeLocal(t, "gone")
	h.configure(t, f.srv, g.srv)
	for _, id := range []string{"lobby", "gone"} {
		if err := h.m.EnsureStarted(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}

	// New args for lobby while it runs, gone removed.
	changed := *f.srv.ServerManager
	changed.Args = append(slices.Clone(changed.Args), "-stop-delay", "1ms")
	reloaded := *f.srv
	reloaded.ServerManager = &changed
	h.configure(t, &reloaded)

	if h.m.State("lobby") != StateOnline || f.startCount(t) != 1 {
		t.Fatalf("reload restarted lobby: state %s, starts %d", h.m.State("lobby"), f.startCount(t))
	}
	if h.m.Managed("gone") {
		t.Fatal("removed server is still managed")
	}
	h.waitState(t, "gone", StateSleeping)
	if g.answers() {
		t.Error("removed server's process was left running")
	}
	// The new command is used once lobby is down.
	if err := h.m.Stop(context.Background(), "lobby"); err != nil {
		t.Fatal(err)
	}
	h.m.mu.Lock()
	key, pending := h.m.servers["lobby"].provKey, h.m.servers["lobby"].pending
	h.m.mu.Unlock()
	if key != providerKey(&changed) || pending != nil {
		t.Error("reloaded command not swapped in after the stop")
	}
}

func TestLineWriterSplitsAndBoundsLines(t *testing.T) {
	h := newHarness(t, nil)
	p, err := newLocalProvider("x", &config.ServerManager{Command: "true", ReadyPattern: "^Done"}, h.m.log, func() {})
	if err != nil {
		t.Fatal(err)
	}
	w := &lineWriter{p: p, stream: "stdout"}
	_, _ = w.Write([]byte("first\r\nDo"))
	_, _ = w.Write([]byte("ne!\n" + strings.Repeat("x", maxLineLen+100) + "\nlast\n"))
	out := p.lastOutput()
	if len(out) != 4 || out[0] != "first" || out[1] != "Done!" || out[3] != "last" {
		t.Fatalf("lines %q", out)
	}
	if len(out[2]) > maxLineLen+20 || !strings.HasSuffix(out[2], "(cut)") {
		t.Errorf("long line not cut: %d bytes", len(out[2]))
	}
	if !p.matched {
		t.Error("ready_pattern did not match a line split across writes")
	}
}

func TestBadConfigShowsReason(t *testing.T) {
	h := newHarness(t, nil)
	srv := &config.Server{ID: "x", ServerManager: &config.ServerManager{Type: "local", StartTimeout: config.Duration(time.Second)}}
	if err := h.m.Configure([]*config.Server{srv}); err == nil || !strings.Contains(err.Error(), "needs command") {
		t.Fatalf("Configure error %v", err)
	}
	err := h.m.EnsureStarted(context.Background(), "x")
	if !strings.Contains(err.Error(), "needs command") {
		t.Errorf("login error %q should carry the config problem", err)
	}
	if err := h.m.EnsureStarted(context.Background(), "nope"); !errors.Is(err, ErrNotManaged) {
		t.Errorf("unmanaged: %v", err)
	}
}
