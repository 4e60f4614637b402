// Package sdnotify tells systemd what a Type=notify service is doing: ready,
// reloading, stopping. It speaks the sd_notify protocol itself (one datagram of
// "KEY=VALUE" lines to the unix socket named by $NOTIFY_SOCKET), which is a few
// lines and needs no library. Outside systemd ($NOTIFY_SOCKET unset) every call
// does nothing.
package sdnotify

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// EnvSocket is the variable systemd sets to the socket a Type=notify service reports to.
const EnvSocket = "NOTIFY_SOCKET"

// writeTimeout bounds one notification: systemd reads its socket at once, and a
// stuck manager must not stall a reload or a shutdown.
const writeTimeout = time.Second

// Notifier sends state notifications to one systemd notify socket. The zero value
// and a nil *Notifier are valid and do nothing, so callers need no "under
// systemd?" branches. It is safe for concurrent use.
type Notifier struct {
	addr *net.UnixAddr // nil: not under systemd
	log  *slog.Logger
	// monotonic reads CLOCK_MONOTONIC, the clock MONOTONIC_USEC is measured on;
	// ok is false where the platform has none.
	monotonic func() (d time.Duration, ok bool)

	warnOnce sync.Once
}

// New returns a Notifier for socket, the value of $NOTIFY_SOCKET: an absolute
// path, or "@name" for a socket in the abstract namespace (what systemd uses).
// An empty socket gives a Notifier that does nothing. Send failures are logged
// once on log (nil: not logged) and returned by every call.
func New(socket string, log *slog.Logger) (*Notifier, error) {
	n := &Notifier{log: log, monotonic: monotonicNow}
	switch {
	case socket == "":
		return n, nil
	case socket[0] == '@' && len(socket) > 1, socket[0] == '/':
		// Go maps a leading '@' to the abstract namespace's leading NUL byte.
		n.addr = &net.UnixAddr{Name: socket, Net: "unixgram"}
		return n, nil
	}
	return n, fmt.Errorf("%s=%q: want an absolute path or @name (is the service started by systemd?)", EnvSocket, socket)
}

// FromEnv is New($NOTIFY_SOCKET), and removes the variable from the environment
// so the processes serve starts (the local server manager's Java servers) do not
// inherit it: systemd would reject their messages and log a warning for each.
func FromEnv(log *slog.Logger) *Notifier {
	socket := os.Getenv(EnvSocket)
	_ = os.Unsetenv(EnvSocket)
	n, err := New(socket, log)
	if err != nil && log != nil {
		log.Warn("not telling systemd about readiness", "err", err)
	}
	return n
}

// Enabled reports whether notifications go anywhere (the service runs under
// systemd with Type=notify).
func (n *Notifier) Enabled() bool { return n != nil && n.addr != nil }

// Ready says the service is up: the configuration is loaded and the listener
// accepts players. status, when not empty, is shown by `systemctl status`.
func (n *Notifier) Ready(status string) error {
	return n.Send(withStatus([]string{"READY=1"}, status)...)
}

// Reloading says a reload has begun; Ready must follow when it ends, whatever
// its outcome. MONOTONIC_USEC is the reload's start on CLOCK_MONOTONIC, which
// systemd 253 and later require with RELOADING=1.
func (n *Notifier) Reloading(status string) error {
	lines := []string{"RELOADING=1"}
	if n.Enabled() {
		if d, ok := n.monotonic(); ok {
			lines = append(lines, "MONOTONIC_USEC="+strconv.FormatInt(d.Microseconds(), 10))
		}
	}
	return n.Send(withStatus(lines, status)...)
}

// Stopping says shutdown has begun, so systemd reports "deactivating" while live
// sessions and managed servers finish instead of treating the wait as a hang.
func (n *Notifier) Stopping(status string) error {
	return n.Send(withStatus([]string{"STOPPING=1"}, status)...)
}

// Send writes one notification made of the given KEY=VALUE lines. A line may
// not contain a newline (it would be read as two assignments).
func (n *Notifier) Send(lines ...string) error {
	if !n.Enabled() || len(lines) == 0 {
		return nil
	}
	for _, l := range lines {
		if !strings.Contains(l, "=") || strings.ContainsRune(l, '\n') {
			return fmt.Errorf("sd_notify: %q is not one KEY=VALUE line", l)
		}
	}
	err := n.write(strings.Join(lines, "\n") + "\n")
	if err != nil {
		err = fmt.Errorf("sd_notify to %s: %w (systemd will not see the service's state; check NotifyAccess= in the unit)", n.addr.Name, err)
		n.warnOnce.Do(func() {
			if n.log != nil {
				n.log.Warn("telling systemd about the service state failed", "err", err)
			}
		})
	}
	return err
}

func (n *Notifier) write(msg string) error {
	c, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
	w, err := c.Write([]byte(msg))
	if err == nil && w != len(msg) {
		err = errors.New("short write")
	}
	return err
}

func withStatus(lines []string, status string) []string {
	if status == "" {
		return lines
	}
	// STATUS is one line; a newline would start a bogus assignment.
	return append(lines, "STATUS="+strings.ReplaceAll(status, "\n", " "))
}
