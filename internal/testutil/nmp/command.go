package nmp

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// followPoll is how often an events file is looked at for new lines.
const followPoll = 20 * time.Millisecond

// ServerCommand is a server.js that another program starts and stops, such as the
// proxy's local server manager: it runs Command with Args, and the test reads what
// the server reports through Events, from the file the server appends its events to.
type ServerCommand struct {
	// Command and Args are the command line ([server_manager] command and args).
	Command string
	Args    []string
	// Events follows the server's events from the moment it writes them; its Addr is
	// 127.0.0.1 and the chosen port. It never sees the process itself: PID is 0.
	Events *Server
}

// ServerCommand prepares a server.js run by someone else. opts.Port is required
// (use FreePort): the other program's configuration names the address before the
// server exists. The events file lives in the test's temp dir and is followed until
// the test ends. The server exits when its stdin closes or reads "stop".
func (h *Harness) ServerCommand(t testing.TB, opts ServerOptions) ServerCommand {
	t.Helper()
	if opts.Version == "" || opts.Port == 0 {
		t.Fatal("nmp.ServerCommand: ServerOptions.Version and Port are required")
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		t.Fatalf("nmp.ServerCommand: create the events file: %v", err)
	}
	args := opts.args()
	args[0] = filepath.Join(h.Dir, args[0])
	args = append(args, "--events-file", path)
	s := &Server{
		Addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)),
		Version: opts.Version,
		stderr:  newTailBuffer(1),
		changed: make(chan struct{}),
	}
	fr := &follower{f: f, stop: make(chan struct{})}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.read(fr)
	}()
	t.Cleanup(func() {
		close(fr.stop)
		<-readDone
		_ = f.Close()
		if t.Failed() {
			t.Logf("server.js %s (run by another program):\n%s", strings.Join(args[1:], " "), s.report())
		}
	})
	return ServerCommand{Command: h.Node, Args: args, Events: s}
}

// follower reads a file that another process appends to, waiting at its end for
// more until stop is closed; then it returns what is left and io.EOF.
type follower struct {
	f    *os.File
	stop chan struct{}
}

func (r *follower) Read(p []byte) (int, error) {
	for {
		n, err := r.f.Read(p)
		if n > 0 {
			return n, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		select {
		case <-r.stop:
			return 0, io.EOF
		case <-time.After(followPoll):
		}
	}
}

// FreePort returns a port free on 127.0.0.1 now, for a server that starts listening
// later. It is taken below the kernel's ephemeral range, so no outgoing connection is
// given it meanwhile (a port from 127.0.0.1:0 could be).
func FreePort(t testing.TB) int {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		port := 10000 + rand.IntN(low-10000)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		_ = l.Close()
		return port
	}
	t.Fatalf("nmp.FreePort: no free port found between 10000 and %d", low)
	return 0
}

// ephemeralLow is the first port the kernel hands out to outgoing connections
// (Linux's ip_local_port_range; 32768 where it cannot be read, which is below the
// range of the other systems' defaults).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		var low, high int
		if _, err := fmt.Sscan(string(b), &low, &high); err == nil && low > 11000 {
			return low
		}
	}
	return 32768
}
