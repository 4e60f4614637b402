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
	"path/filepath"
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

	output  string   // "file", "log" or "off" ([server_manager] output)
	logPath string   // output "file": where the console goes
	logFile *os.File // open while a process runs
	logSize int64
}

// maxConsoleLog is the size past which a server's console file is rotated
// (one previous file, .1, is kept), so a chatty server cannot fill the disk.
const maxConsoleLog = 32 << 20

// localProviders is the ProviderFunc of type "local"; a server's output goes to
// a file in logDir, to log, or nowhere, as its [server_manager] output says.
func localProviders(log *slog.Logger, logDir string) ProviderFunc {
	return func(server string, sm *config.ServerManager, notify func()) (Provider, error) {
		p, err := newLocalProvider(server, sm, log, notify)
		if err == nil && p.output == "file" {
			if logDir == "" {
				p.output = "log" // no folder to write to (tests, embedding)
			} else {
				p.logPath = filepath.Join(logDir, server+".log")
			}
		}
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
		log: log, notify: notify, output: sm.WithDefaults().Output,
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
	if err := p.openConsoleLocked(); err != nil {
		_ = stdin.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		_ = stdin.Close()
		p.closeConsoleLocked()
		return fmt.Errorf("run %q (working_dir %q): %w; check command and working_dir in [server_manager]", p.command, p.dir, err)
	}
	p.cmd, p.stdin, p.done = cmd, stdin, make(chan struct{})
	p.running, p.matched, p.stopping, p.crash, p.tail = true, false, false, "", nil
	attrs := []any{"server", p.id, "pid", cmd.Process.Pid, "command", p.command, "output", p.output}
	if p.logFile != nil {
		attrs = append(attrs, "file", p.logPath)
	}
	p.log.Info("server process started", attrs...)
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
	p.closeConsoleLocked() // Wait returned: the output is all copied
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
	toLog := p.output == "log"
	if p.logFile != nil {
		p.writeConsoleLocked(stream, line)
	}
	p.mu.Unlock()
	if toLog {
		lvl := slog.LevelInfo
		if stream == "stderr" {
			lvl = slog.LevelWarn
		}
		p.log.Log(context.Background(), lvl, line, "server", p.id, "stream", stream)
	}
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

// openConsoleLocked opens the console file of output "file" for a new run,
// rotating it first when it is past maxConsoleLog.
func (p *localProvider) openConsoleLocked() error {
	if p.output != "file" || p.logPath == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p.logPath), 0o750); err != nil {
		return fmt.Errorf("server %q console file: %w; set [server_manager] output = \"log\" or make data_dir writable", p.id, err)
	}
	if st, err := os.Stat(p.logPath); err == nil && st.Size() > maxConsoleLog {
		_ = os.Rename(p.logPath, p.logPath+".1")
	}
	f, err := os.OpenFile(p.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("server %q console file: %w; set [server_manager] output = \"log\" or make data_dir writable", p.id, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("server %q console file: %w", p.id, err)
	}
	p.logFile, p.logSize = f, st.Size()
	return nil
}

// writeConsoleLocked appends one line (stderr's marked), rotating on the way.
func (p *localProvider) writeConsoleLocked(stream, line string) {
	if stream == "stderr" {
		line = "[stderr] " + line
	}
	n, err := p.logFile.WriteString(line + "\n")
	p.logSize += int64(n)
	if err != nil {
		p.log.Warn("server console file: write failed; its output now goes to this log", "server", p.id, "file", p.logPath, "err", err)
		p.closeConsoleLocked()
		p.output = "log"
		return
	}
	if p.logSize > maxConsoleLog {
		p.closeConsoleLocked()
		_ = os.Rename(p.logPath, p.logPath+".1")
		_ = p.openConsoleLocked()
	}
}

func (p *localProvider) closeConsoleLocked() {
	if p.logFile != nil {
		_ = p.logFile.Close()
		p.logFile = nil
	}
}
