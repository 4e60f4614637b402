package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Syscalls is the system calls the proxy process made per login in one
// workload: the total from perf's raw_syscalls:sys_enter tracepoint (cheap, the
// proxy runs at full speed; the idle rate over the same time is subtracted)
// and the per-call breakdown from strace -c (exact counts, but under ptrace
// the proxy is slower, so wakeup-driven calls such as futex and epoll_pwait can
// differ from the perf run).
type Syscalls struct {
	Workload string `json:"workload"`
	Logins   int64  `json:"logins"`
	// PerLogin is perf's count per completed login; 0 when perf is unusable.
	PerLogin float64 `json:"per_login,omitempty"`
	// IdlePerSecond is what the idle proxy made per second in the same window (subtracted).
	IdlePerSecond float64 `json:"idle_per_second,omitempty"`
	// StracePerLogin is strace's total per login, Top its largest calls.
	StracePerLogin float64        `json:"strace_per_login,omitempty"`
	Top            []SyscallCount `json:"top,omitempty"`
	Note           string         `json:"note,omitempty"`
}

// SyscallCount is one system call's calls per login.
type SyscallCount struct {
	Name     string  `json:"name"`
	PerLogin float64 `json:"per_login"`
	// Errors are the calls that failed (strace's errors column): a read that
	// found nothing (EAGAIN), a connect still in progress (EINPROGRESS).
	Errors float64 `json:"errors_per_login,omitempty"`
}

// syscalls counts the proxy's system calls over a fixed number of logins in
// each login workload, through every proxy that runs as its own process
// (--binary, HAProxy): login-64 and passthrough through each, the intercepted
// modes through the first.
func (e *mcEnv) syscalls(r *runner) error {
	o := e.o
	type work struct {
		name  string
		pid   int
		cycle func(int, *bufio.Reader) error
	}
	var cases []work
	label := func(name string, u *underTest) string {
		if l := u.label(); l != "" {
			return name + " " + l
		}
		return name
	}
	for _, u := range r.plainTargets() {
		if u.t.Pid() != 0 {
			cases = append(cases, work{label(fmt.Sprintf("login-%d", o.Clients), u), u.t.Pid(), loginCycle(u.t.Addr())})
		}
	}
	for _, m := range e.modes() {
		for _, u := range r.modeTargets(m) {
			if u.t.Pid() != 0 {
				name := fmt.Sprintf("mclogin-%d %s", o.Clients, m)
				if u.named(m) {
					name = label(name, u) // the intercepted modes never reach the forwarder
				}
				cases = append(cases, work{name, u.t.Pid(), e.loginCycle(u.t.ModeAddr(m), hostOf(m))})
			}
		}
	}
	if len(cases) == 0 {
		e.o.logf("syscalls: skipped, the proxy must run as its own process (--binary)")
		return nil
	}
	_, perfErr := exec.LookPath("perf")
	_, straceErr := exec.LookPath("strace")
	if perfErr != nil && straceErr != nil {
		return errors.New("neither perf nor strace is installed")
	}
	for _, c := range cases {
		row := Syscalls{Workload: c.name}
		run := func() (int64, error) {
			m, err := storm(o.Clients, 5*time.Minute, int64(o.Syscalls), c.cycle)
			return int64(m.units), err
		}
		if perfErr == nil {
			total, idle, logins, err := perfCount(c.pid, run)
			if err != nil {
				row.Note = "perf: " + err.Error()
			} else if logins > 0 {
				row.Logins, row.PerLogin, row.IdlePerSecond = logins, (total-idle.calls)/float64(logins), idle.perSecond
			}
		}
		if straceErr == nil {
			counts, logins, err := straceCount(c.pid, run)
			if err != nil {
				row.Note += " strace: " + err.Error()
			} else if logins > 0 {
				if row.Logins == 0 {
					row.Logins = logins
				}
				for _, sc := range counts {
					if sc.Name == "total" {
						row.StracePerLogin = sc.PerLogin / float64(logins)
						continue
					}
					row.Top = append(row.Top, SyscallCount{Name: sc.Name, PerLogin: sc.PerLogin / float64(logins), Errors: sc.Errors / float64(logins)})
				}
				sort.Slice(row.Top, func(i, j int) bool { return row.Top[i].PerLogin > row.Top[j].PerLogin })
				row.Top = row.Top[:min(len(row.Top), 16)]
			}
		}
		r.res.Syscalls = append(r.res.Syscalls, row)
		o.logf("syscalls %-24s %d logins: perf %.1f per login (idle %.0f/s), strace %.1f per login",
			row.Workload, row.Logins, row.PerLogin, row.IdlePerSecond, row.StracePerLogin)
	}
	return nil
}

type idleRate struct{ calls, perSecond float64 }

// perfCount counts raw_syscalls:sys_enter in pid while run works, then for the
// same time while nothing runs, and returns both counts and the logins done.
func perfCount(pid int, run func() (int64, error)) (float64, idleRate, int64, error) {
	var logins int64
	var runErr error
	var took time.Duration
	busy, err := perfWhile(pid, func() {
		start := time.Now()
		logins, runErr = run()
		took = time.Since(start)
	})
	if err != nil {
		return 0, idleRate{}, 0, err
	}
	if runErr != nil {
		return 0, idleRate{}, 0, runErr
	}
	idle, err := perfWhile(pid, func() { time.Sleep(took) })
	if err != nil {
		return 0, idleRate{}, 0, err
	}
	return busy, idleRate{calls: idle, perSecond: idle / took.Seconds()}, logins, nil
}

// perfWhile counts raw_syscalls:sys_enter in every thread of pid exactly
// while work runs: perf starts with the counter disabled and is told over its
// control pipe to enable and disable it, acknowledging each.
func perfWhile(pid int, work func()) (float64, error) {
	out, err := os.CreateTemp("", "mcbench-perf-")
	if err != nil {
		return 0, err
	}
	out.Close()
	defer os.Remove(out.Name())
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer ctlW.Close()
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		return 0, err
	}
	defer ackR.Close()
	cmd := exec.Command("perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-D", "-1", "--control", "fd:3,4",
		"-p", strconv.Itoa(pid), "-o", out.Name())
	cmd.ExtraFiles = []*os.File{ctlR, ackW} // fds 3 and 4 in perf
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Start()
	ctlR.Close()
	ackW.Close()
	if err != nil {
		return 0, err
	}
	acks := bufio.NewReader(ackR)
	command := func(c string) error {
		if _, err := ctlW.WriteString(c + "\n"); err != nil {
			return fmt.Errorf("perf control %s: %w", c, err)
		}
		got := make(chan error, 1)
		go func() {
			line, err := acks.ReadString('\n')
			// perf ends each "ack\n" with a NUL, which the next read starts with.
			if err == nil && strings.Trim(line, "\x00 \n") != "ack" {
				err = fmt.Errorf("perf answered %q to %s", line, c)
			}
			got <- err
		}()
		select {
		case err := <-got:
			return err
		case <-time.After(10 * time.Second):
			return fmt.Errorf("perf did not acknowledge %s in 10s", c)
		}
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait() // perf exits non-zero on SIGINT; the file says whether it counted
	}
	if err := command("enable"); err != nil {
		_ = cmd.Process.Kill()
		stop()
		return 0, fmt.Errorf("%w (%s)", err, strings.TrimSpace(stderr.String()))
	}
	work()
	err = command("disable")
	stop()
	if err != nil {
		return 0, fmt.Errorf("%w (%s)", err, strings.TrimSpace(stderr.String()))
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		return 0, err
	}
	v, err := parsePerfCount(string(b))
	if err != nil {
		return 0, fmt.Errorf("%w (%s)", err, strings.TrimSpace(stderr.String()))
	}
	return v, nil
}

// parsePerfCount reads the raw_syscalls:sys_enter count from perf stat -x, output.
// perf says "<not counted>" when the counter never ran, i.e. no thread of the
// process was scheduled in the window: that is zero calls.
func parsePerfCount(s string) (float64, error) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Split(line, ",")
		if len(f) >= 3 && strings.HasPrefix(f[2], "raw_syscalls:sys_enter") {
			if f[0] == "<not counted>" {
				return 0, nil // no thread of the process ran in the window: an idle Go process makes no calls
			}
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				return 0, fmt.Errorf("perf counted %q", f[0])
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("no raw_syscalls:sys_enter count in perf's output %q", s)
}

// straceCount runs run with strace -c attached to every thread of pid and
// returns the calls per system call ("total" included) and the logins done.
func straceCount(pid int, run func() (int64, error)) ([]SyscallCount, int64, error) {
	out, err := os.CreateTemp("", "mcbench-strace-")
	if err != nil {
		return nil, 0, err
	}
	out.Close()
	defer os.Remove(out.Name())
	cmd := exec.Command("strace", "-f", "-c", "-p", strconv.Itoa(pid), "-o", out.Name())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, 0, err
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	// strace says "Process N attached" per thread; the first line means it is in.
	attached := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "attached") {
				once = true
				close(attached)
			}
		}
		if !once {
			close(attached)
		}
	}()
	select {
	case <-attached:
	case <-time.After(5 * time.Second):
	}
	time.Sleep(200 * time.Millisecond) // the other threads
	logins, runErr := run()
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	if runErr != nil {
		return nil, 0, runErr
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		return nil, 0, err
	}
	counts := parseStraceSummary(string(b))
	if len(counts) == 0 {
		return nil, 0, fmt.Errorf("no summary in strace's output %q", b)
	}
	return counts, logins, nil
}

// parseStraceSummary reads strace -c's table: a header naming the columns
// ("% time seconds usecs/call calls errors syscall"), rows right-aligned under
// it with blanks where a row has no errors (or, on the total row of some
// versions, no usecs/call), and the "total" row. The calls and errors columns
// are found by where the header's "calls" and "errors" end.
func parseStraceSummary(s string) []SyscallCount {
	var out []SyscallCount
	callsEnd, errorsEnd := -1, -1
	column := func(line string, end int) (float64, bool) {
		if end < 0 || len(line) < end {
			return 0, false
		}
		head := line[:end]
		v, err := strconv.ParseFloat(strings.TrimSpace(head[strings.LastIndexByte(head, ' ')+1:]), 64)
		return v, err == nil
	}
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, " calls"); strings.HasPrefix(line, "%") && i >= 0 {
			callsEnd = i + len(" calls")
			if j := strings.Index(line, " errors"); j >= 0 {
				errorsEnd = j + len(" errors")
			}
			continue
		}
		f := strings.Fields(line)
		if callsEnd < 0 || len(f) < 3 || strings.HasPrefix(f[0], "-") {
			continue
		}
		calls, ok := column(line, callsEnd)
		if !ok {
			continue
		}
		errs, _ := column(line, errorsEnd)
		out = append(out, SyscallCount{Name: f[len(f)-1], PerLogin: calls, Errors: errs})
	}
	return out
}
