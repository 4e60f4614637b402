package bench

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// haproxyTarget is HAProxy in plain TCP mode in front of the same backends: the
// reference the passthrough figures are read against (it forwards bytes and
// parses nothing, so it is the floor of what a TCP proxy costs on this machine).
// One frontend relays to the fakemc backend (the plain workloads), a second to
// the Minecraft-faithful backend (the passthrough rows of relay-* and mclogin-*).
type haproxyTarget struct {
	*child
	addr   string // → fakemc
	mcAddr string // → the Minecraft-faithful backend
}

// haproxyConfig is HAProxy's configuration for the two relays. maxconn is sized
// to the file limit HAProxy inherits (2 fds per session); no splicing, HAProxy's
// default in TCP mode.
func haproxyConfig(addr, backend, mcAddr, mcBackend string, maxconn int) string {
	return fmt.Sprintf(`global
    maxconn %[5]d

defaults
    mode tcp
    maxconn %[5]d
    timeout connect 5s
    timeout client 1h
    timeout server 1h

frontend fakemc
    bind %[1]s
    default_backend fakemc

backend fakemc
    server s1 %[2]s

frontend mc
    bind %[3]s
    default_backend mc

backend mc
    server s1 %[4]s
`, addr, backend, mcAddr, mcBackend, maxconn)
}

func startHAProxy(path string, spec proxySpec, fileLimit uint64) (*haproxyTarget, error) {
	mcBackend := spec.routeBackend(modePassthrough)
	if mcBackend == "" {
		mcBackend = spec.backend
	}
	maxconn := max(int(fileLimit)/2-64, 256)
	// Two addresses: fakemc's frontend and the Minecraft one.
	dir, addrs, err := childDir("mcbench-haproxy-", 2, func(dir string, addrs []string) error {
		cfg := haproxyConfig(addrs[0], spec.backend, addrs[1], mcBackend, maxconn)
		return os.WriteFile(filepath.Join(dir, "haproxy.cfg"), []byte(cfg), 0o644)
	})
	if err != nil {
		return nil, err
	}
	c, err := startChild(dir, os.Stderr, addrs, path, "-db", "-f", filepath.Join(dir, "haproxy.cfg"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &haproxyTarget{child: c, addr: addrs[0], mcAddr: addrs[1]}, nil
}

// waitListening waits up to 10 s until addr takes connections, or the process ends.
func waitListening(addr string, exited <-chan struct{}) error {
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before listening on %s", addr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after 10s", addr)
		}
	}
}

func (h *haproxyTarget) Addr() string { return h.addr }

// ModeAddr: HAProxy routes nothing by hostname; only passthrough has a relay.
func (h *haproxyTarget) ModeAddr(mode string) string {
	if mode == modePassthrough {
		return h.mcAddr
	}
	return ""
}
func (h *haproxyTarget) Goroutines() int { return -1 }
