package app

import (
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/sdnotify"
)

// Under systemd (Type=notify) serve says READY=1 once it listens, RELOADING=1
// (with MONOTONIC_USEC) then READY=1 around a servers_dir reload, and STOPPING=1
// when shutdown begins, on a real unixgram socket standing in for systemd's.
func TestSystemdNotifications(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	recv := func() string {
		t.Helper()
		buf := make([]byte, 4096)
		_ = sock.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _, err := sock.ReadFromUnix(buf)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		return string(buf[:n])
	}
	// Registered before startApp, so it runs after startApp's cleanup has stopped the app.
	t.Cleanup(func() {
		defer sock.Close()
		if got := recv(); !strings.HasPrefix(got, "STOPPING=1\n") {
			t.Errorf("at shutdown: %q, want STOPPING=1", got)
		}
	})
	t.Setenv(sdnotify.EnvSocket, path)

	a := startBackend(t, "a")
	ta := startApp(t, map[string]string{"lobby.toml": serverFile(a.Addr(), "lobby.com")})
	if got := recv(); !strings.HasPrefix(got, "READY=1\nSTATUS=listening on "+ta.proxyAddr+", 1 server(s)") {
		t.Fatalf("after start: %q", got)
	}

	ta.reload <- syscall.SIGHUP
	if got := recv(); !strings.HasPrefix(got, "RELOADING=1\nMONOTONIC_USEC=") || !strings.Contains(got, "STATUS=reloading servers_dir") {
		t.Fatalf("reload start: %q", got)
	}
	if got := recv(); !strings.HasPrefix(got, "READY=1\n") {
		t.Fatalf("reload end: %q", got)
	}
}
