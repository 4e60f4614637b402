package manager

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// The local provider's own behaviour, with a real child process (testdata/fakeserver):
// spawning, the ready line, the console, crashes, and the stop command's grace.
// The state machine around it is tested with fakes in machine_test.go.

// fakeLocal configures a local server running the fakeserver helper.
type fakeLocal struct {
	addr   string
	starts string // one line per process start
	record string // what the process went through: stop, saved, term
	srv    *config.Server
}

func newFakeLocal(t *testing.T, id string, args ...string) *fakeLocal {
	t.Helper()
	dir := t.TempDir()
	f := &fakeLocal{addr: freeAddr(t), starts: filepath.Join(dir, "starts"), record: filepath.Join(dir, "record")}
	f.srv = &config.Server{
		ID:        id,
		Addresses: []config.Address{{Address: f.addr, Weight: 1}},
		ServerManager: &config.ServerManager{
			Type:            "local",
			Command:         fakeServerBin,
			Args:            append([]string{"-addr", f.addr, "-starts-file", f.starts, "-record", f.record}, args...),
			StartTimeout:    config.Duration(10 * time.Second),
			PollInterval:    config.Duration(50 * time.Millisecond),
			ShutdownTimeout: config.Duration(5 * time.Second),
			// Under -race, the race runtime sleeps 1 s before every exit by default.
			Env: map[string]string{fakeServerEnv: "1", "GORACE": "atexit_sleep_ms=0"},
		},
	}
	return f
}

// freeAddr reserves a loopback port for a fake server to listen on later.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startCount is how many times the helper process was started.
func (f *fakeLocal) startCount(t *testing.T) int {
	t.Helper()
	return len(readLines(t, f.starts))
}

// events lists what the process recorded, without the times.
func (f *fakeLocal) events(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, l := range readLines(t, f.record) {
		out = append(out, strings.Fields(l)[0])
	}
	return out
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// answers reports whether something answers a status ping at the address.
func (f *fakeLocal) answers() bool {
	return pingStatus(context.Background(), f.addr, time.Second) == nil
}

func TestLocalWakeWaitsForReadyLineAndPing(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "lobby", "-delay", "100ms")
	f.srv.ServerManager.ReadyPattern = `Done \(`
	h.configure(t, f.srv)

	if got := h.m.State("lobby"); got != StateSleeping {
		t.Fatalf("initial state %q, want sleeping", got)
	}
	if err := h.m.EnsureStarted(context.Background(), "lobby"); err != nil {
		t.Fatalf("EnsureStarted: %v", err)
	}
	if !f.answers() {
		t.Fatal("EnsureStarted returned but the server does not answer a status ping")
	}
	if got, want := h.nextReady(t), "lobby@"+f.addr; got != want {
		t.Errorf("OnReady call %s, want %s", got, want)
	}
	if n := f.startCount(t); n != 1 {
		t.Errorf("process started %d times, want 1", n)
	}
	if !strings.Contains(h.logs.String(), "Done (1.234s)") {
		t.Error("the server's stdout did not reach the log")
	}
}

func TestLocalCrashKeepsReasonAndOutput(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "broken", "-delay", "20s", "-crash-after", "100ms")
	h.configure(t, f.srv)

	err := h.m.EnsureStarted(context.Background(), "broken")
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("player sees %v, want the exit reason", err)
	}
	snap := h.m.Snapshot()
	if len(snap) != 1 || snap[0].State != StateCrashed ||
		!slices.ContainsFunc(snap[0].LastOutput, func(l string) bool { return strings.Contains(l, "boom") }) {
		t.Errorf("snapshot %+v should keep the reason and the last output", snap)
	}
}

// TestLocalShutdownGivesTheServerItsOwnGrace is issue 18's first fault: serve
// used to hand the manager what was left of the proxy's shutdown deadline; when
// players had kept their sessions open until the end, nothing was left and the
// server was SIGKILLed without saving its world. Shutdown now takes no deadline:
// each child gets the stop command and its own shutdown_timeout.
func TestLocalShutdownGivesTheServerItsOwnGrace(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "survival", "-stop-delay", "200ms") // saving the world takes a while
	h.configure(t, f.srv)
	if err := h.m.EnsureStarted(context.Background(), "survival"); err != nil {
		t.Fatal(err)
	}
	h.m.PlayerJoined("survival") // players stayed until the proxy's own budget ran out

	if err := h.m.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got, want := f.events(t), []string{"stop", "saved"}; !slices.Equal(got, want) {
		t.Fatalf("the server went through %v, want %v (the stop command, then time to save)", got, want)
	}
	if s := h.m.Snapshot()[0]; s.State != StateSleeping || s.Reason != "the proxy is shutting down; stopped cleanly" {
		t.Errorf("after Shutdown: %s (%s)", s.State, s.Reason)
	}
	if f.answers() {
		t.Error("the server still runs after Shutdown")
	}
}

// TestLocalShutdownEscalatesOnTheServersOwnBudget: a server that ignores the stop
// command gets SIGTERM at half its shutdown_timeout and SIGKILL at the end of it.
func TestLocalShutdownEscalatesOnTheServersOwnBudget(t *testing.T) {
	h := newHarness(t, nil)
	f := newFakeLocal(t, "stubborn", "-ignore-stop", "-ignore-term")
	f.srv.ServerManager.ShutdownTimeout = config.Duration(400 * time.Millisecond)
	h.configure(t, f.srv)
	if err := h.m.EnsureStarted(context.Background(), "stubborn"); err != nil {
		t.Fatal(err)
	}
	if err := h.m.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got, want := f.events(t), []string{"stop", "term"}; !slices.Equal(got, want) {
		t.Errorf("the server went through %v, want %v before SIGKILL", got, want)
	}
	if s := h.m.Snapshot()[0]; s.Reason != "the proxy is shutting down; killed (SIGKILL) after shutdown_timeout 400ms" {
		t.Errorf("after Shutdown: %s (%s)", s.State, s.Reason)
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

func TestLineWriterSplitsAndBoundsLines(t *testing.T) {
	h := newHarness(t, nil)
	p, err := newLocalProvider("x", &config.ServerManager{Command: "true", ReadyPattern: "^Done"}, h.m.log, func() {})
	if err != nil {
		t.Fatal(err)
	}
	w := &lineWriter{p: p, stream: "stdout"}
	_, _ = w.Write([]byte("first\r\nDo"))
	_, _ = w.Write([]byte("ne!\n" + strings.Repeat("x", maxLineLen+100) + "\nlast\n"))
	out := p.LastOutput()
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

// output "file" appends the console to <dir>/<id>.log and keeps it out of the
// proxy's log; "off" writes nowhere; both still keep the tail for a crash.
func TestConsoleOutputGoesToAFile(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for _, output := range []string{"file", "off"} {
		sm := &config.ServerManager{Command: fakeServerBin, Output: output, Env: map[string]string{fakeServerEnv: "1", "GORACE": "atexit_sleep_ms=0"},
			Args: []string{"-addr", freeAddr(t), "-starts-file", filepath.Join(dir, "starts-"+output), "-record", filepath.Join(dir, "record-"+output)}}
		pf, err := localProviders(log, filepath.Join(dir, "server-logs"))("srv-"+output, sm, func() {})
		if err != nil {
			t.Fatal(err)
		}
		p := pf.(*localProvider)
		if err := p.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(p.LastOutput()) < 2 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := p.Stop(context.Background(), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if got := p.LastOutput(); len(got) == 0 || got[0] != "Starting minecraft server" {
			t.Fatalf("%s: tail %q", output, got)
		}
		data, err := os.ReadFile(filepath.Join(dir, "server-logs", "srv-"+output+".log"))
		switch output {
		case "file":
			if err != nil || !strings.HasPrefix(string(data), "Starting minecraft server\n") {
				t.Fatalf("console file: %q, %v", data, err)
			}
		case "off":
			if err == nil {
				t.Fatalf("output off wrote a file: %q", data)
			}
		}
	}
	if strings.Contains(logs.String(), "Starting minecraft server") {
		t.Fatalf("the console reached the proxy's log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "file="+filepath.Join(dir, "server-logs", "srv-file.log")) {
		t.Fatalf("the start does not say where the console goes:\n%s", logs.String())
	}
}
