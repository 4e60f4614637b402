package sdnotify

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listen opens a real unixgram socket at name (a path, or @abstract) playing systemd.
func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// recv reads one datagram.
func recv(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := c.ReadFromUnix(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	return string(buf[:n])
}

func TestNotificationsReachTheSocket(t *testing.T) {
	for _, tc := range []struct{ name, socket string }{
		{"path", filepath.Join(t.TempDir(), "notify")},
		{"abstract", fmt.Sprintf("@infrarust-sdnotify-test-%d-%d", os.Getpid(), time.Now().UnixNano())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := listen(t, tc.socket)
			if _, err := os.Stat(tc.socket); (err == nil) != (tc.name == "path") {
				t.Fatalf("stat %s: %v (an abstract socket has no file)", tc.socket, err)
			}
			n, err := New(tc.socket, nil)
			if err != nil || !n.Enabled() {
				t.Fatalf("New(%q) = %v, enabled %v", tc.socket, err, n.Enabled())
			}
			if err := n.Ready("listening on 0.0.0.0:25565, 3 servers"); err != nil {
				t.Fatal(err)
			}
			if got, want := recv(t, sock), "READY=1\nSTATUS=listening on 0.0.0.0:25565, 3 servers\n"; got != want {
				t.Errorf("ready = %q, want %q", got, want)
			}

			before, _ := monotonicNow()
			if err := n.Reloading("reloading servers_dir"); err != nil {
				t.Fatal(err)
			}
			after, _ := monotonicNow()
			lines := strings.Split(strings.TrimSuffix(recv(t, sock), "\n"), "\n")
			if len(lines) != 3 || lines[0] != "RELOADING=1" || lines[2] != "STATUS=reloading servers_dir" {
				t.Fatalf("reloading = %q", lines)
			}
			v, ok := strings.CutPrefix(lines[1], "MONOTONIC_USEC=")
			usec, err := strconv.ParseInt(v, 10, 64)
			if !ok || err != nil || usec < before.Microseconds() || usec > after.Microseconds() {
				t.Errorf("%q is not CLOCK_MONOTONIC between %d and %d µs", lines[1], before.Microseconds(), after.Microseconds())
			}

			if err := n.Stopping(""); err != nil {
				t.Fatal(err)
			}
			if got := recv(t, sock); got != "STOPPING=1\n" {
				t.Errorf("stopping = %q", got)
			}
		})
	}
}

// Outside systemd nothing is sent and nothing fails; a nil Notifier is the same.
func TestWithoutSystemdNothingHappens(t *testing.T) {
	n, err := New("", nil)
	if err != nil || n.Enabled() {
		t.Fatalf("New(\"\") = %v, enabled %v", err, n.Enabled())
	}
	var none *Notifier
	for _, nn := range []*Notifier{n, none, {}} {
		if err := nn.Ready("x"); err != nil {
			t.Error(err)
		}
		if err := nn.Reloading(""); err != nil {
			t.Error(err)
		}
		if err := nn.Stopping(""); err != nil {
			t.Error(err)
		}
	}
}

func TestBadSocketsAndLines(t *testing.T) {
	for _, s := range []string{"relative/path", "@", "notify"} {
		if n, err := New(s, nil); err == nil || n.Enabled() {
			t.Errorf("New(%q) accepted: %v", s, err)
		}
	}
	// A socket nobody listens on: every call reports it, the log gets one warning.
	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	n, err := New(filepath.Join(t.TempDir(), "gone"), log)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := n.Ready(""); err == nil || !strings.Contains(err.Error(), "NotifyAccess") {
			t.Errorf("Ready to a missing socket = %v", err)
		}
	}
	if c := strings.Count(logBuf.String(), "level=WARN"); c != 1 {
		t.Errorf("%d warnings logged, want 1:\n%s", c, logBuf.String())
	}
	// A status with a newline stays one assignment; a line without '=' or with a
	// newline is refused before anything is sent.
	sockPath := filepath.Join(t.TempDir(), "notify")
	sock := listen(t, sockPath)
	n, _ = New(sockPath, nil)
	if err := n.Ready("two\nlines"); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, sock); got != "READY=1\nSTATUS=two lines\n" {
		t.Errorf("got %q", got)
	}
	for _, bad := range []string{"READY", "STATUS=a\nREADY=1"} {
		if err := n.Send(bad); err == nil {
			t.Errorf("Send(%q) accepted", bad)
		}
	}
}

// FromEnv takes the socket and removes the variable, so child processes (the
// local server manager's Java servers) do not inherit it.
func TestFromEnvUnsetsTheVariable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	sock := listen(t, path)
	t.Setenv(EnvSocket, path)
	n := FromEnv(nil)
	if _, still := os.LookupEnv(EnvSocket); still {
		t.Error("NOTIFY_SOCKET is still set for child processes")
	}
	if err := n.Ready(""); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, sock); got != "READY=1\n" {
		t.Errorf("got %q", got)
	}
}
