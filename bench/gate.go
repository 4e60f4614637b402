package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// gateTarget is Gate (github.com/minekube/gate) in full mode in front of the
// Minecraft-faithful backend: the peer the intercepted modes are read against.
// One Gate process serves one mode (Gate's online mode is proxy-wide): offline
// (onlineMode false) or client_only (onlineMode true, authenticating against
// the run's stand-in session server). Both forward nothing to the backend and
// compress at the run's threshold, as Infrarust's routes do; the per-IP quotas
// are off (every bench client is 127.0.0.1) and the read timeout is an hour
// (idle players send nothing).
type gateTarget struct {
	mode string
	cmd  *exec.Cmd
	addr string
	dir  string
	done chan struct{}
}

// gateConfig is Gate's config.yml for one mode.
func gateConfig(addr, backend, mode, sessionServer string, threshold int) string {
	online := mode == modeClientOnly
	c := fmt.Sprintf(`config:
  bind: %q
  onlineMode: %t
  servers:
    mc: %q
  try:
    - mc
  compression:
    threshold: %d
    level: -1
  connectionTimeout: 5s
  readTimeout: 1h
  forwarding:
    mode: none
  quota:
    connections:
      enabled: false
    logins:
      enabled: false
`, addr, online, backend, threshold)
	if online {
		c += fmt.Sprintf("  auth:\n    sessionServerUrl: %q\n", sessionServer+"/session/minecraft/hasJoined")
	}
	return c + "api:\n  enabled: false\n"
}

func startGate(path, mode string, spec proxySpec) (*gateTarget, error) {
	backend := ""
	for _, r := range spec.routes {
		if r.mode == mode {
			backend = r.backend
		}
	}
	if backend == "" {
		return nil, fmt.Errorf("gate: no %s route in the run", mode)
	}
	dir, err := os.MkdirTemp("", "mcbench-gate-")
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cfg := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfg, []byte(gateConfig(addr, backend, mode, spec.sessionServer, spec.threshold)), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Gate logs every login at its default verbosity: to a file, so the run's
	// own output stays readable (kept on failure to start).
	logf, err := os.Create(filepath.Join(dir, "gate.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(path, "--config", cfg)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	g := &gateTarget{mode: mode, cmd: cmd, addr: addr, dir: dir, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(g.done) }()
	if err := waitListening(addr, g.done); err != nil {
		_ = g.cmd.Process.Kill()
		<-g.done
		return nil, fmt.Errorf("%s: %w (its log: %s)", path, err, filepath.Join(dir, "gate.log"))
	}
	return g, nil
}

// Addr is empty: Gate's full mode speaks Minecraft to the backend, so it cannot
// relay the plain workloads' fakemc bytes.
func (g *gateTarget) Addr() string { return "" }
func (g *gateTarget) ModeAddr(mode string) string {
	if mode == g.mode {
		return g.addr
	}
	return ""
}
func (g *gateTarget) RSS() (int64, bool) {
	v, err := rssOf(strconv.Itoa(g.cmd.Process.Pid))
	return v, err == nil
}
func (g *gateTarget) FDs() (all, pipes int) { return procFDs(g.cmd.Process.Pid) }
func (g *gateTarget) Active() int64         { return -1 }
func (g *gateTarget) CPU() (time.Duration, bool) {
	d, err := procCPU(g.cmd.Process.Pid)
	return d, err == nil
}
func (g *gateTarget) Goroutines() int { return -1 }
func (g *gateTarget) Pid() int        { return g.cmd.Process.Pid }
func (g *gateTarget) Close() {
	_ = g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
	if os.Getenv("MCBENCH_KEEP_GATE") == "" {
		os.RemoveAll(g.dir)
	}
}
