package manager

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// fakeServerBin is the fakeserver helper, built once for the whole package.
var fakeServerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "infrarust-manager-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeServerBin = filepath.Join(dir, "fakeserver")
	out, err := exec.Command("go", "build", "-o", fakeServerBin, "./testdata/fakeserver").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building testdata/fakeserver: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
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

type harness struct {
	m      *Manager
	bus    *events.Bus
	sub    *events.Sub
	logs   *testutil.SyncBuffer
	mu     sync.Mutex
	readys []string
}

func newHarness(t *testing.T, now func() time.Time) *harness {
	t.Helper()
	h := &harness{bus: events.NewBus(), logs: &testutil.SyncBuffer{}}
	h.sub = h.bus.Subscribe(256, events.ServerStateChange)
	h.m = New(Options{
		Bus:    h.bus,
		Logger: slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    now,
		OnReady: func(server, addr string) {
			h.mu.Lock()
			h.readys = append(h.readys, server+"@"+addr)
			h.mu.Unlock()
		},
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.m.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		h.sub.Close()
		if t.Failed() {
			t.Logf("manager log:\n%s", h.logs.String())
		}
	})
	return h
}

// waitState reads server.state_change events until one reaches want, and returns it.
func (h *harness) waitState(t *testing.T, server, want string) StateChange {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ev, err := h.sub.Next(ctx)
		if err != nil {
			t.Fatalf("no %s event for %s: %v (state now %s)", want, server, err, h.m.State(server))
		}
		if sc, ok := ev.Data.(StateChange); ok && sc.Server == server && sc.To == want {
			return sc
		}
	}
}

// fakeLocal configures a local server running the fakeserver helper.
type fakeLocal struct {
	addr   string
	starts string
	srv    *config.Server
}

func newFakeLocal(t *testing.T, id string, args ...string) *fakeLocal {
	t.Helper()
	f := &fakeLocal{addr: freeAddr(t), starts: filepath.Join(t.TempDir(), "starts")}
	f.srv = &config.Server{
		ID:        id,
		Addresses: []config.Address{{Address: f.addr, Weight: 1}},
		ServerManager: &config.ServerManager{
			Type:            "local",
			Command:         fakeServerBin,
			Args:            append([]string{"-addr", f.addr, "-starts-file", f.starts}, args...),
			StartTimeout:    config.Duration(10 * time.Second),
			PollInterval:    config.Duration(50 * time.Millisecond),
			ShutdownTimeout: config.Duration(3 * time.Second),
		},
	}
	return f
}

// startCount is how many times the helper process was started.
func (f *fakeLocal) startCount(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(f.starts)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// answers reports whether something answers a status ping at the address.
func (f *fakeLocal) answers() bool {
	return pingStatus(context.Background(), f.addr, time.Second) == nil
}

func (h *harness) configure(t *testing.T, servers ...*config.Server) {
	t.Helper()
	if err := h.m.Configure(servers); err != nil {
		t.Fatalf("Configure: %v", err)
	}
}
