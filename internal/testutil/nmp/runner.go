package nmp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Client is a warm client.js process (--serve): logins and pings run on it, so node's
// start-up and nmp's protocol compilation (most of a run's CPU) are paid once per
// Client rather than once per login. Its methods may be called from several
// goroutines: the jobs then run side by side in the one process, each its own
// connection (a queue of players, a crowd to move).
type Client struct {
	// PID is the node process id (tests use it to prove no process outlives them).
	PID int

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailBuffer
	read   chan struct{} // closed when stdout has ended
	noise  *tailBuffer   // stdout lines that were not results

	mu      sync.Mutex // guards stdin writes, nextID and waiting
	nextID  int64
	waiting map[int64]chan string // result lines by job id; closed when the runner exits

	closeOnce sync.Once
}

// StartClient starts a client runner that is stopped when the test ends.
func (h *Harness) StartClient(t testing.TB) *Client {
	t.Helper()
	c, err := h.startClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Login runs one login on a client runner of its own (started and stopped here).
func (h *Harness) Login(ctx context.Context, o LoginOptions) (LoginResult, error) {
	c, err := h.startClient()
	if err != nil {
		return LoginResult{}, err
	}
	defer c.Close()
	return c.Login(ctx, o)
}

// Ping runs one status ping on a client runner of its own.
func (h *Harness) Ping(ctx context.Context, o PingOptions) (PingResult, error) {
	c, err := h.startClient()
	if err != nil {
		return PingResult{}, err
	}
	defer c.Close()
	return c.Ping(ctx, o)
}

func (h *Harness) startClient() (*Client, error) {
	cmd := exec.Command(h.Node, "client.js", "--serve")
	cmd.Dir = h.Dir
	c := &Client{
		cmd:     cmd,
		stderr:  newTailBuffer(64 << 10),
		noise:   newTailBuffer(16 << 10),
		read:    make(chan struct{}),
		waiting: map[int64]chan string{},
	}
	cmd.Stderr = c.stderr
	var err error
	// client.js --serve exits when this pipe closes, so a dead test leaves no node behind.
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("client.js stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("client.js stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s client.js --serve: %w", h.Node, err)
	}
	c.PID = cmd.Process.Pid
	go c.readResults(stdout)
	return c, nil
}

func (c *Client) readResults(stdout io.Reader) {
	defer close(c.read)
	defer func() {
		c.mu.Lock()
		for id, ch := range c.waiting {
			close(ch)
			delete(c.waiting, id)
		}
		c.waiting = nil
		c.mu.Unlock()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var head struct {
			ID *int64 `json:"id"`
		}
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &head) == nil && head.ID != nil {
			c.mu.Lock()
			ch := c.waiting[*head.ID]
			delete(c.waiting, *head.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- line // buffered: one result per job
				continue
			}
		}
		if line != "" {
			_, _ = c.noise.Write([]byte(line + "\n"))
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
}

// Close stops the runner: it closes stdin (node exits by itself) and kills it if it
// has not gone within a few seconds.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		_ = c.stdin.Close()
		select {
		case <-c.read:
		case <-time.After(5 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.read
		}
		_ = c.cmd.Wait()
	})
}

// Login runs one login on the runner and returns client.js's report. An error means no
// report came (the runner died, the job was rejected, or ctx ended first); a failed
// login is a report with OK false. A job that gets no report in time kills the runner,
// and with it the jobs running beside it.
func (c *Client) Login(ctx context.Context, o LoginOptions) (LoginResult, error) {
	job, timeout, err := o.job()
	if err != nil {
		return LoginResult{}, err
	}
	var r LoginResult
	r.Raw, err = c.do(ctx, job, timeout, &r)
	return r, err
}

// Ping runs one status ping on the runner.
func (c *Client) Ping(ctx context.Context, o PingOptions) (PingResult, error) {
	job, timeout, err := o.job()
	if err != nil {
		return PingResult{}, err
	}
	var r PingResult
	r.Raw, err = c.do(ctx, job, timeout, &r)
	return r, err
}

// do sends one job, tagged with an id of its own so it runs beside any others, and
// decodes its result line into result.
func (c *Client) do(ctx context.Context, job map[string]any, timeout time.Duration, result any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout+processSlack)
	defer cancel()
	c.mu.Lock()
	if c.waiting == nil {
		c.mu.Unlock()
		return "", fmt.Errorf("client.js: %w (the runner exited)\n%s", ErrNoResult, c.report())
	}
	c.nextID++
	id := c.nextID
	job["id"] = id
	b, err := json.Marshal(job)
	if err != nil {
		c.mu.Unlock()
		return "", fmt.Errorf("encode client.js job: %w", err)
	}
	lines := make(chan string, 1)
	c.waiting[id] = lines
	_, err = c.stdin.Write(append(b, '\n'))
	c.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("send job %s to client.js: %w\n%s", b, err, c.report())
	}
	select {
	case line, ok := <-lines:
		if !ok {
			return "", fmt.Errorf("client.js job %s: %w (the runner exited)\n%s", b, ErrNoResult, c.report())
		}
		var head struct {
			Mode  string `json:"mode"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &head); err != nil {
			return line, fmt.Errorf("client.js job %s: result line %q: %w", b, line, err)
		}
		if head.Mode == "" {
			return line, fmt.Errorf("client.js rejected job %s: %s", b, head.Error)
		}
		if err := json.Unmarshal([]byte(line), result); err != nil {
			return line, fmt.Errorf("client.js job %s: result line %q: %w", b, line, err)
		}
		return line, nil
	case <-ctx.Done():
		// The runner is stuck (or ctx was cancelled): it cannot be trusted with another job.
		_ = c.cmd.Process.Kill()
		return "", fmt.Errorf("client.js job %s: no result: %w\n%s", b, ctx.Err(), c.report())
	}
}

func (c *Client) report() string {
	var b strings.Builder
	if n := c.noise.String(); n != "" {
		b.WriteString("  stdout:\n" + n + "\n")
	}
	if e := c.stderr.String(); e != "" {
		b.WriteString("  stderr:\n" + e + "\n")
	}
	return b.String()
}

// job is the login as a client.js --serve job (its keys are client.js's flag names).
func (o LoginOptions) job() (map[string]any, time.Duration, error) {
	job, timeout, err := baseJob(o.Addr, o.ServerHost, o.Version, o.Timeout)
	if err != nil {
		return nil, 0, err
	}
	if o.Username != "" {
		job["username"] = o.Username
	}
	if o.Online != nil {
		if o.Online.SessionServer == "" {
			return nil, 0, errors.New("nmp: OnlineLogin.SessionServer is required")
		}
		job["online"] = true
		job["session-server"] = o.Online.SessionServer
		if o.Online.AccessToken != "" {
			job["access-token"] = o.Online.AccessToken
		}
		if o.Online.ProfileID != "" {
			job["profile-id"] = o.Online.ProfileID
		}
	}
	if o.Channel != "" {
		job["channel"] = o.Channel
	}
	if len(o.Sizes) > 0 {
		s := make([]string, len(o.Sizes))
		for i, n := range o.Sizes {
			s[i] = strconv.Itoa(n)
		}
		job["sizes"] = strings.Join(s, ",")
	}
	if o.Fill != "" {
		job["fill"] = o.Fill
	}
	if o.KeepAlives > 0 {
		job["keepalives"] = o.KeepAlives
	}
	if o.Stay > 0 {
		job["stay-ms"] = o.Stay.Milliseconds()
	}
	if o.Tick > 0 {
		job["tick-ms"] = o.Tick.Milliseconds()
	}
	if o.UntilKicked {
		job["until-kicked"] = true
	}
	if o.KeepAliveTimeout > 0 {
		job["keepalive-timeout-ms"] = max(1, o.KeepAliveTimeout.Milliseconds())
	}
	if len(o.Commands) > 0 {
		job["commands"] = strings.Join(o.Commands, "\n")
	}
	if len(o.Tab) > 0 {
		job["tab"] = strings.Join(o.Tab, "\n")
	}
	if o.CommandGap > 0 {
		job["command-gap-ms"] = max(1, o.CommandGap.Milliseconds())
	}
	if o.ClientInfo {
		job["client-info"] = true
	}
	return job, timeout, nil
}

// job is the ping as a client.js --serve job.
func (o PingOptions) job() (map[string]any, time.Duration, error) {
	job, timeout, err := baseJob(o.Addr, o.ServerHost, o.Version, o.Timeout)
	if err != nil {
		return nil, 0, err
	}
	job["ping"] = true
	return job, timeout, nil
}

func baseJob(addr, serverHost, version string, timeout time.Duration) (map[string]any, time.Duration, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, 0, fmt.Errorf("nmp: Addr %q: %w", addr, err)
	}
	if version == "" {
		return nil, 0, errors.New("nmp: Version is required")
	}
	if timeout <= 0 {
		timeout = defaultClientTimeout
	}
	job := map[string]any{"host": host, "port": port, "version": version, "timeout-ms": max(1, timeout.Milliseconds())}
	if serverHost != "" {
		job["server-host"] = serverHost
	}
	return job, timeout, nil
}
