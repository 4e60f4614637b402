// Package nmp drives real Minecraft clients and servers that none of us wrote —
// node-minecraft-protocol (npm "minecraft-protocol", pinned in test/nmp) — from Go tests:
// it finds node, installs test/nmp's npm packages once per test run, starts the
// backend script, runs the client script and parses their JSON results.
// Only tests import it.
package nmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// minNodeMajor is the oldest Node.js the scripts run on (util.parseArgs needs 18.3+;
// minecraft-protocol 1.54.0 is the newest release that still runs on Node 20).
const minNodeMajor = 18

// Harness is a checked node binary and an installed test/nmp; every script runs through it.
type Harness struct {
	// Node is the node executable.
	Node string
	// Dir is the absolute path of test/nmp.
	Dir string
}

// setup is shared by every test in the process: finding node and installing the npm
// packages happen once per test binary (and, under a file lock, once per machine run).
var setup struct {
	once      sync.Once
	h         *Harness
	installed bool // this process ran npm ci
	err       error
}

// Setup returns the harness, installing test/nmp's npm packages with `npm ci` first if
// they are missing or do not match package-lock.json. It fails the test, with what to
// install, when node or npm is missing.
func Setup(t testing.TB) *Harness {
	t.Helper()
	setup.once.Do(func() {
		setup.h, setup.installed, setup.err = newHarness()
		if setup.installed {
			t.Logf("ran npm ci in %s (node_modules was missing or stale)", setup.h.Dir)
		}
	})
	if setup.err != nil {
		t.Fatalf("real-client test harness: %v", setup.err)
	}
	return setup.h
}

func newHarness() (*Harness, bool, error) {
	dir, err := scriptsDir()
	if err != nil {
		return nil, false, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, false, fmt.Errorf("node is not on PATH: these tests run real Minecraft clients and servers on Node.js; install Node.js %d+ and npm (e.g. `apt-get install nodejs npm`) and run the tests again", minNodeMajor)
	}
	if err := checkNodeVersion(node); err != nil {
		return nil, false, err
	}
	installed, err := ensureInstalled(dir)
	if err != nil {
		return nil, false, err
	}
	return &Harness{Node: node, Dir: dir}, installed, nil
}

// scriptsDir finds test/nmp from the module root above the working directory (go test
// runs each package in its own directory).
func scriptsDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			dir := filepath.Join(d, "test", "nmp")
			if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err != nil {
				return "", fmt.Errorf("test/nmp/package-lock.json not found under the module root %s: %w", d, err)
			}
			return dir, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run the tests from inside the repository", wd)
		}
	}
}

var nodeVersionRE = regexp.MustCompile(`^v(\d+)\.`)

func checkNodeVersion(node string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", node, err)
	}
	v := strings.TrimSpace(string(out))
	m := nodeVersionRE.FindStringSubmatch(v)
	if m == nil {
		return fmt.Errorf("cannot read the Node.js version from %q", v)
	}
	if major, _ := strconv.Atoi(m[1]); major < minNodeMajor {
		return fmt.Errorf("node %s is too old: the real-client tests need Node.js %d+ (install a newer nodejs)", v, minNodeMajor)
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it: a child's stderr for failure
// messages, bounded however much the child prints.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > t.max {
		p = p[len(p)-t.max:]
	}
	if over := len(t.b) + len(p) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	t.b = append(t.b, p...)
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}

// ErrNoResult is wrapped by Login and Ping when the script printed no result line.
var ErrNoResult = errors.New("script printed no result line")
