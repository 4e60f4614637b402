//go:build unix

package fleet

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// fakeServerEnv, set to 1, makes this test binary a managed Minecraft server for
// the proxies' local provider (see fakeServerMain).
const fakeServerEnv = "INFRARUST_FLEET_TEST_FAKESERVER"

// testBinary is this test binary, which the proxies run as their managed server.
var testBinary string

func TestMain(m *testing.M) {
	if os.Getenv(fakeServerEnv) == "1" {
		fakeServerMain(os.Args[1:])
		return
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "finding the test binary:", err)
		os.Exit(1)
	}
	testBinary = exe
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// fakeServerMain is a managed server's whole life: it appends "pid ppid" to
// -starts, then (unless -hang-first and it is the first start) listens on -addr
// answering pings and logins like fakemc, until "stop" or the end of stdin.
func fakeServerMain(args []string) {
	var addr, starts, name string
	hangFirst := false
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-addr":
			i++
			addr = args[i]
		case "-starts":
			i++
			starts = args[i]
		case "-name":
			i++
			name = args[i]
		case "-hang-first":
			hangFirst = true
		}
	}
	f, err := os.OpenFile(starts, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starts file:", err)
		os.Exit(2)
	}
	st, _ := f.Stat()
	first := st.Size() == 0
	fmt.Fprintf(f, "%d %d\n", os.Getpid(), os.Getppid())
	f.Close()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "stop" {
				break
			}
		}
		os.Exit(0) // "stop", or the proxy is gone
	}()
	if hangFirst && first {
		fmt.Println("Loading a very large world...")
		select {}
	}
	srv, err := fakemc.Start(addr, fakemc.Options{Name: name})
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(2)
	}
	defer srv.Close()
	fmt.Println(`Done (0.042s)! For help, type "help"`)
	select {}
}

// binDir holds the infrarust binary built once for the whole run.
var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// infrarust builds ./cmd/infrarust once, so the proxies run as operators run them.
func infrarust(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "infrarust-fleet-bin")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "infrarust")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/infrarust-go/infrarust/cmd/infrarust").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/infrarust: %v", buildErr)
	}
	return binPath
}

// freePort is a loopback port nothing listens on right now, and one this test
// binary has not handed out before: the kernel may give a just-closed port
// again at once, and a proxy's bind and admin port must differ.
func freePort(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatal("no loopback port not handed out before in 100 tries")
	return 0
}

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// redisServer is a real redis-server the test owns: its own port and folder,
// append-only persistence, never a system service.
type redisServer struct {
	t    testing.TB
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

func (r *redisServer) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// startRedis runs redis-server on a free port; it fails the test (never skips)
// when redis-server is missing, saying how to install it.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed; the fleet's end-to-end tests need a real one: apt-get install -y redis-server (.ci/run does this)")
	}
	r := &redisServer{t: t, port: freePort(t), dir: t.TempDir()}
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *redisServer) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no", "--protected-mode", "no",
		"--logfile", filepath.Join(r.dir, "redis.log"))
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("redis-server: %v", err)
	}
	r.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(r.cmd, r.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-r.done:
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			r.t.Fatalf("redis-server exited at start:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatal("redis-server did not listen within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill stops redis-server at once (SIGKILL), as a crash would.
func (r *redisServer) kill() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// restart starts it again on the same port with the same data.
func (r *redisServer) restart() { r.start() }

const (
	adminKey   = "fleet-e2e-admin-key-0123456789"
	playHost   = "play.test"
	wakeHost   = "survival.test"
	redisEnvVa = "INFRARUST_TEST_REDIS_URL"
)

// proxyOpts shapes one proxy of a test fleet.
type proxyOpts struct {
	id      string
	redis   *redisServer
	servers map[string]string // servers/<name>.toml contents
	// heartbeat is [fleet] heartbeat_interval ("200ms", timeout "2s", when empty;
	// else the timeout is 10h).
	heartbeat string
	// noFleet leaves [fleet] out: a proxy on its own, the baseline of the benchmarks.
	noFleet bool
	// extra is appended to infrarust.toml (tables of its own).
	extra string
	// top goes first in infrarust.toml (top-level keys, e.g. duplicate_login).
	top string
	// noSecret runs the fleet without [fleet] secret (INFRARUST_FLEET_SECRET).
	noSecret bool
}

// fleetSecret is the fleet's secret of the test proxies (INFRARUST_FLEET_SECRET).
const fleetSecret = "fleet-e2e-secret-0123456789"

// proxyProc is one running `infrarust serve` process.
type proxyProc struct {
	t         testing.TB
	id        string
	dir       string
	config    string
	proxyAddr string
	adminURL  string
	client    *admin.Client
	cmd       *exec.Cmd
	done      chan struct{}
	log       string
	secret    string // INFRARUST_FLEET_SECRET
}

// startProxy runs `infrarust serve` with its own config folder and waits until
// its admin API answers.
func startProxy(t testing.TB, o proxyOpts) *proxyProc {
	t.Helper()
	dir := t.TempDir()
	p := &proxyProc{t: t, id: o.id, dir: dir, config: filepath.Join(dir, "infrarust.toml"), log: filepath.Join(dir, "serve.log"),
		proxyAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), adminURL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}
	servers := filepath.Join(dir, "servers")
	if err := os.MkdirAll(servers, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range o.servers {
		if err := os.WriteFile(filepath.Join(servers, name+".toml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := o.top + fmt.Sprintf(`
bind = %q
shutdown_timeout = "2s"
connect_timeout = "2s"

[status_cache]
ttl = "0s"

[web]
bind = %q
api_key = %q
data_dir = "data"
requests_per_minute = 0

[active_health]
enabled = false
`, p.proxyAddr, strings.TrimPrefix(p.adminURL, "http://"), adminKey)
	if !o.noFleet {
		hb, hbTimeout := o.heartbeat, "10h"
		if hb == "" {
			hb, hbTimeout = "200ms", "2s"
		}
		cfg += fmt.Sprintf(`
[fleet]
redis = "env:%s"
id = %q
heartbeat_interval = %q
heartbeat_timeout = %q
wake_lock_ttl = "3s"
timeout = "500ms"
`, redisEnvVa, o.id, hb, hbTimeout)
	}
	cfg += o.extra
	if err := os.WriteFile(p.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p.client = admin.NewClient(p.adminURL, adminKey)
	if !o.noFleet && !o.noSecret {
		p.secret = fleetSecret
	}
	p.start(o.redis)
	t.Cleanup(p.stop)
	return p
}

func (p *proxyProc) start(r *redisServer) {
	p.t.Helper()
	logf, err := os.OpenFile(p.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	p.cmd = exec.Command(infrarust(p.t), "serve", "--config", p.config)
	p.cmd.Env = append(os.Environ(), "INFRARUST_API_KEY=")
	if r != nil {
		p.cmd.Env = append(p.cmd.Env, redisEnvVa+"="+r.url())
	}
	if p.secret != "" {
		p.cmd.Env = append(p.cmd.Env, "INFRARUST_FLEET_SECRET="+p.secret)
	}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func(c *exec.Cmd, f *os.File, done chan struct{}) { _ = c.Wait(); f.Close(); close(done) }(p.cmd, logf, p.done)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := p.client.Health(ctx)
		cancel()
		if err == nil {
			return
		}
		select {
		case <-p.done:
			p.t.Fatalf("proxy %s exited at start:\n%s", p.id, p.logText())
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("proxy %s: admin API not up within 20s (%v):\n%s", p.id, err, p.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the proxy as an operator would (SIGTERM), then makes sure it is gone.
func (p *proxyProc) stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	if tt, ok := p.t.(*testing.T); ok && tt.Failed() {
		tt.Logf("proxy %s log:\n%s", p.id, p.logText())
	}
	p.cmd = nil
}

// kill ends the proxy at once (SIGKILL), as a crash or a lost machine would.
func (p *proxyProc) kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	p.cmd = nil
}

func (p *proxyProc) pid() int { return p.cmd.Process.Pid }

func (p *proxyProc) logText() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 60000 {
		b = b[len(b)-60000:]
	}
	return string(b)
}

// cli runs the infrarust binary against this proxy's admin API.
func (p *proxyProc) cli(t testing.TB, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	args = append(args, "--admin-url", p.adminURL, "--api-key", adminKey)
	cmd := exec.Command(infrarust(t), args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// metric reads one sample of the proxy's /metrics.
func (p *proxyProc) metric(t testing.TB, name string) (float64, bool) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.adminURL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// login sends a handshake and login start for host through proxyAddr and returns
// the first frame the player gets, with the connection (closed by the caller).
func login(ctx context.Context, proxyAddr, host, name string) (net.Conn, mc.Frame, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", proxyAddr)
	if err != nil {
		return nil, mc.Frame{}, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	out := mc.Handshake{ProtocolVersion: 767, ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	out = append(out, mc.LoginStart{Name: name, HasUUID: true}.Encode(767)...)
	if _, err := c.Write(out); err != nil {
		c.Close()
		return nil, mc.Frame{}, err
	}
	f, err := mc.ReadFrame(bufio.NewReader(c), mc.MaxFrameSize)
	if err != nil {
		c.Close()
		return nil, mc.Frame{}, fmt.Errorf("login %s via %s: %w", name, proxyAddr, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, f, nil
}

// loginText logs in and returns the disconnect text the player is shown.
func loginText(ctx context.Context, proxyAddr, host, name string) (string, error) {
	c, f, err := login(ctx, proxyAddr, host, name)
	if err != nil {
		return "", err
	}
	defer c.Close()
	text, ok := mc.ParseLoginDisconnect(f)
	if !ok {
		return "", fmt.Errorf("login %s: packet 0x%02x, want a Login Disconnect", name, f.ID)
	}
	return text, nil
}

// eventually polls cond every few milliseconds until it holds or d passes, and
// returns how long it took.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// backendState is one address's state as a proxy's admin API shows it.
func backendState(p *proxyProc, server, addr string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b, err := p.client.Backends(ctx, server)
	if err != nil {
		return "error: " + err.Error()
	}
	for _, be := range b.Backends {
		if be.Address == addr {
			return be.State
		}
	}
	return "absent"
}

// holdingBackend answers a login with a non-disconnect frame and echoes, so the
// player stays online.
func holdingBackend(t testing.TB, name string) *fakemc.Server {
	t.Helper()
	b, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: name, OnLogin: func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		if _, err := c.Write(mc.AppendFrame(nil, 0x02, make([]byte, 17))); err != nil {
			return
		}
		_, _ = io.Copy(c, br)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func plainBackend(t testing.TB, name string) *fakemc.Server {
	t.Helper()
	b, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// lobbyFile is a passthrough server on playHost over addrs, first_available.
func lobbyFile(addrs ...string) string {
	q := make([]string, len(addrs))
	for i, a := range addrs {
		q[i] = strconv.Quote(a)
	}
	return fmt.Sprintf("domains = [%q]\naddresses = [%s]\n", playHost, strings.Join(q, ", "))
}
