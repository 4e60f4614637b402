package bench

import (
	"fmt"
	"os"
	"path/filepath"
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
	*child
	mode string
	addr string
	log  *os.File
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
	backend := spec.routeBackend(mode)
	if backend == "" {
		return nil, fmt.Errorf("gate: no %s route in the run", mode)
	}
	// Gate logs every login at its default verbosity: to a file, so the run's
	// own output stays readable.
	var log *os.File
	dir, addrs, err := childDir("mcbench-gate-", 1, func(dir string, addrs []string) error {
		cfg := gateConfig(addrs[0], backend, mode, spec.sessionServer, spec.threshold)
		if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(cfg), 0o644); err != nil {
			return err
		}
		var err error
		log, err = os.Create(filepath.Join(dir, "gate.log"))
		return err
	})
	if err != nil {
		return nil, err
	}
	addr := addrs[0]
	c, err := startChild(dir, log, addrs, path, "--config", filepath.Join(dir, "config.yml"))
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("%w (its log: %s)", err, log.Name())
	}
	return &gateTarget{child: c, mode: mode, addr: addr, log: log}, nil
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
func (g *gateTarget) Goroutines() int { return -1 }
func (g *gateTarget) Close() {
	g.child.Close()
	g.log.Close()
}
