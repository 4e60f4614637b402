package manager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

const (
	// maxLineLen bounds one logged output line; longer lines are cut, never buffered without limit.
	maxLineLen = 8 << 10
	// tailLines is how many recent output lines are kept to explain a crash.
	tailLines = 5
	// killWait bounds the wait for a process to disappear after SIGKILL.
	killWait = 5 * time.Second
)

// localProvider runs the server as a child process of the proxy.
type localProvider struct {
	id      string
	command string
	args    []string
	dir     string
	env     []string
	pattern *regexp.Regexp
	log     *slog.Logger
	notify  func()

	mu       sync.Mutex
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	done     chan struct{} // closed when the current process has exited
	running  bool
	matched  bool // ready_pattern seen in the current run
	stopping bool
	crash    string // why the last run ended on its own; "" when it was stopped
	tail     []string
}

// localProviders is the ProviderFunc of type "local"; log receives the server's output.
func localProviders(log *slog.Logger) ProviderFunc {
	return func(server string, sm *config.ServerManager, notify func()) (Provider, error) {
		p, err := newLocalProvider(server, sm, log, notify)
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return p, nil
	}
}

func newLocalProvider(id string, sm *config.ServerManager, log *slog.Logger, notify func()) (*localProvider, error) {
	if sm.Command == "" {
		return nil, errors.New(`type "local" needs command (the program that runs the server, e.g. "java")`)
	}
	p := &localProvider{
		id: id, command: sm.Command, args: slices.Clone(sm.Args), dir: sm.WorkingDir,
		log: log, notify: notify,
	}
	if sm.ReadyPattern != "" {
		re, err := regexp.Compile(sm.ReadyPattern)
		if err != nil {
			return nil, fmt.Errorf("ready_pattern %q is not a valid regular expression: %w", sm.ReadyPattern, err)
		}
		p.pattern = re
	}
	if len(sm.Env) > 0 {
		p.env = os.Environ()
		for _, k := range slices.Sorted(maps.Keys(sm.Env)) {
			p.env = append(p.env, k+"="+sm.Env[k])
		}
	}
	return p, nil
}

// Start spawns the process unless one is already running.
func (p *localProvider) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return nil
	}
	// Checked under the lock: a Stop that cancelled ctx first must never be
	// followed by a spawn it cannot see.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("start of %q cancelled: %w", p.id, err)
	}
	cmd := exec.Command(p.command, p.args...)
	cmd.Dir = p.dir
	cmd.Env = p.env // nil inherits the proxy's environment
	setProcAttr(cmd)
	cmd.Stdout = &lineWriter{p: p, stream: "stdout"}
	cmd.Stderr = &lineWriter{p: p, stream: "stderr"}
	// A grandchild holding the pipes open must not keep Wait (and the state) hanging.
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("prepare stdin for %q: %w", p.command, err)
	}
	if err := cmd.Start(); err != nil {
		_ = stdin.Close()
		return fmt.Errorf("run %q (working_dir %q): %w; check command and working_dir in [server_manager]", p.command, p.dir, err)
	}
	p.cmd, p.stdin, p.done = cmd, stdin, make(chan struct{})
	p.running, p.matched, p.stopping, p.crash, p.tail = true, false, false, "", nil
	p.log.Info("server process started", "server", p.id, "pid", cmd.Process.Pid, "command", p.command)
	go p.wait(cmd, p.done)
	return nil
}

func (p *localProvider) wait(cmd *exec.Cmd, done chan struct{}) {
	err := cmd.Wait()
	desc := "exited with status 0"
	if err != nil {
		desc = "exited: " + err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			desc = "exited with " + ee.String()
		}
	}
	p.mu.Lock()
	p.running = false
	if p.stopping {
		p.log.Info("server process stopped", "server", p.id, "how", desc)
	} else {
		p.crash = desc
		p.log.Warn("server process exited without being asked to stop", "server", p.id, "how", desc,
			"last_output", strings.Join(p.tail, " | "))
	}
	close(done)
	p.mu.Unlock()
	p.notify()
}

// Stop writes "stop" to stdin, then SIGTERMs the group at grace/2 and SIGKILLs it at grace.
func (p *localProvider) Stop(ctx context.Context, grace time.Duration) (string, error) {
	p.mu.Lock()
	if !p.running {
		p.mu.Unlock()
		return "not running", nil
	}
	p.stopping = true
	cmd, stdin, done := p.cmd, p.stdin, p.done
	p.mu.Unlock()

	term := time.NewTimer(grace / 2)
	defer term.Stop()
	kill := time.NewTimer(grace)
	defer kill.Stop()
	how := "stopped cleanly"
	if _, err := io.WriteString(stdin, "stop\n"); err != nil {
		// The console is gone; go straight to SIGTERM.
		p.log.Debug("could not write stop to the server console", "server", p.id, "err", err)
		term.Reset(0)
	}
	for {
		select {
		case <-done:
			return how, nil
		case <-term.C:
			how = "stopped after SIGTERM"
			p.log.Info("server did not stop on the stop command; sending SIGTERM", "server", p.id)
			signalGroup(cmd.Process, sigTerm)
		case <-kill.C:
			return p.kill(cmd, done, fmt.Sprintf("killed (SIGKILL) after shutdown_timeout %s", grace))
		case <-ctx.Done():
			return p.kill(cmd, done, "killed (SIGKILL): the proxy could not wait any longer")
		}
	}
}

func (p *localProvider) kill(cmd *exec.Cmd, done chan struct{}, how string) (string, error) {
	p.log.Warn("server did not stop in time; sending SIGKILL", "server", p.id, "pid", cmd.Process.Pid)
	signalGroup(cmd.Process, sigKill)
	select {
	case <-done:
		return how, nil
	case <-time.After(killWait):
		return how, fmt.Errorf("process %d of server %q still running %s after SIGKILL", cmd.Process.Pid, p.id, killWait)
	}
}

// Status reads the in-memory process state; it never does I/O.
func (p *localProvider) Status(context.Context) (Observation, error) { return p.StatusNow(), nil }

// StatusNow implements InstantStatus: the process state is known without asking anyone.
func (p *localProvider) StatusNow() Observation {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.running && p.stopping:
		return Observation{Phase: PhaseStopping}
	case p.running && p.pattern != nil && !p.matched:
		return Observation{Phase: PhaseStarting}
	case p.running:
		return Observation{Phase: PhaseRunning}
	case p.crash != "":
		return Observation{Phase: PhaseCrashed, Reason: p.crash}
	}
	return Observation{Phase: PhaseStopped}
}

// Alive implements ChildProcess: the server is the proxy's child, so the proxy stops it.
func (p *localProvider) Alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running
}

// LastOutput implements ConsoleOutput: the most recent lines usually say why a server died.
func (p *localProvider) LastOutput() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tail)
}

func (p *localProvider) line(stream, line string) {
	p.mu.Lock()
	if len(p.tail) == tailLines {
		p.tail = slices.Delete(p.tail, 0, 1)
	}
	p.tail = append(p.tail, line)
	hit := stream == "stdout" && p.pattern != nil && !p.matched && p.pattern.MatchString(line)
	if hit {
		p.matched = true
	}
	p.mu.Unlock()
	lvl := slog.LevelInfo
	if stream == "stderr" {
		lvl = slog.LevelWarn
	}
	p.log.Log(context.Background(), lvl, line, "server", p.id, "stream", stream)
	if hit {
		p.notify()
	}
}

// lineWriter splits a child's output into lines for the log; one per stream,
// written by exec's single copying goroutine.
type lineWriter struct {
	p      *localProvider
	stream string
	buf    []byte
	cut    bool // the current line was already emitted truncated
}

func (w *lineWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.add(b)
			break
		}
		w.add(b[:i])
		if !w.cut {
			w.p.line(w.stream, strings.TrimRight(string(w.buf), "\r"))
		}
		w.buf, w.cut = w.buf[:0], false
		b = b[i+1:]
	}
	return n, nil
}

func (w *lineWriter) add(b []byte) {
	if w.cut {
		return
	}
	room := maxLineLen - len(w.buf)
	if len(b) <= room {
		w.buf = append(w.buf, b...)
		return
	}
	w.buf = append(w.buf, b[:room]...)
	w.p.line(w.stream, string(w.buf)+" …(cut)")
	w.buf, w.cut = w.buf[:0], true
}
