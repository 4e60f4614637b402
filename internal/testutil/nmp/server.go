package nmp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// startTimeout bounds node's start-up to the "listening" event; it is generous
	// because the machine running CI may be busy.
	startTimeout = 60 * time.Second
	// maxEvents bounds what a Server keeps; a test never needs more.
	maxEvents = 10000
	// maxLine bounds one stdout line of a script.
	maxLine = 1 << 20
)

// ServerOptions configure a test/nmp/server.js backend.
type ServerOptions struct {
	// Version is the Minecraft version, e.g. "1.21.4" (one node-minecraft-protocol speaks).
	Version string
	// MOTD is the status description; "" means "nmp backend".
	MOTD string
	// MaxPlayers is shown in status; 0 means 20.
	MaxPlayers int
	// CompressionThreshold is sent in Set Compression: 0 keeps nmp's 256, -1 sends no
	// Set Compression. (Use 1 to compress every packet: no packet is empty.)
	CompressionThreshold int
	// KeepAlive is the keep-alive interval in play; 0 means 1 s.
	KeepAlive time.Duration
	// OnlineMode makes the server encrypt and verify players with SessionServer.
	OnlineMode bool
	// SessionServer is the session server base URL for OnlineMode ("" means Mojang's).
	SessionServer string
	// Kick, if set, disconnects players with this text once they are spawned.
	Kick string
	// KickUsers limits Kick to these usernames; empty means everyone.
	KickUsers []string
	// Refuse, if set, answers Login Start with a Login Disconnect carrying this text.
	Refuse string
	// MaxOnline refuses logins with "The server is full!" while that many players
	// are on; 0 means no limit.
	MaxOnline int
	// RefuseUsers limits Refuse to these usernames; empty means everyone.
	RefuseUsers []string
	// ReportAlive adds an "alive" event for each tick a client.js player sends (see
	// LoginOptions.Tick), carrying what the client says it has received since it
	// entered its current world: a test waits on it to know the client gets this
	// server's packets.
	ReportAlive bool
	// Commands declares a small vanilla-like command tree (say <message>, tp) on
	// join, answers pre-1.13 tab completion, and reports every "command" and
	// "chat" a player sends.
	Commands bool
	// Port is the port to listen on; 0 means any free port (StartServer). A server
	// another program starts (ServerCommand) needs one chosen in advance (FreePort).
	Port int
	// Delay makes it a slow start: it listens only this long after starting.
	Delay time.Duration
}

func (o ServerOptions) args() []string {
	a := []string{"server.js", "--exit-with-stdin", "--version", o.Version, "--port", strconv.Itoa(o.Port)}
	if o.ReportAlive {
		a = append(a, "--report-alive")
	}
	if o.Commands {
		a = append(a, "--commands")
	}
	if o.Delay > 0 {
		a = append(a, "--delay-ms", strconv.FormatInt(max(1, o.Delay.Milliseconds()), 10))
	}
	if o.MOTD != "" {
		a = append(a, "--motd", o.MOTD)
	}
	if o.MaxOnline != 0 {
		a = append(a, "--max-online", strconv.Itoa(o.MaxOnline))
	}
	if o.MaxPlayers != 0 {
		a = append(a, "--max-players", strconv.Itoa(o.MaxPlayers))
	}
	if o.CompressionThreshold != 0 {
		// "=" form: node's parseArgs takes a separate "-1" for a flag.
		a = append(a, "--compression-threshold="+strconv.Itoa(o.CompressionThreshold))
	}
	if o.KeepAlive > 0 {
		a = append(a, "--keepalive-ms", strconv.FormatInt(max(1, o.KeepAlive.Milliseconds()), 10))
	}
	if o.OnlineMode {
		a = append(a, "--online-mode")
		if o.SessionServer != "" {
			a = append(a, "--session-server", o.SessionServer)
		}
	}
	if o.Kick != "" {
		a = append(a, "--kick", o.Kick)
		if len(o.KickUsers) > 0 {
			a = append(a, "--kick-users", strings.Join(o.KickUsers, ","))
		}
	}
	if o.Refuse != "" {
		a = append(a, "--refuse", o.Refuse)
		if len(o.RefuseUsers) > 0 {
			a = append(a, "--refuse-users", strings.Join(o.RefuseUsers, ","))
		}
	}
	return a
}

// Event is one JSON line server.js printed. Which fields are set depends on Event:
//
//	listening  Host, Port, Version, Protocol, OnlineMode
//	handshake  Host, Port (as the client wrote them), Protocol, NextState, Remote
//	login      Username, UUID, LoginUUID, Host, Port, Protocol, Online, Compression, Remote
//	starting   DelayMS (a slow start: it listens that much later)
//	join       Username, UUID, Protocol (the player is spawned)
//	alive      Username, Tick, Worlds, SeenEchoes, SeenKeepAlives (a client tick; ReportAlive)
//	command    Username, Command (without its '/'; Commands)
//	chat       Username, Message (Commands)
//	kick       Stage ("play" or "login"), Username, Text
//	leave      Username, UUID, Reason, Payloads, PayloadBytes, PayloadSHA256, KeepAlives
//	error      Username, Error
type Event struct {
	Event         string `json:"event"`
	Host          string `json:"host"`
	Port          int    `json:"port"`
	Version       string `json:"version"`
	Protocol      int    `json:"protocol"`
	OnlineMode    bool   `json:"online_mode"`
	NextState     int    `json:"next_state"`
	Remote        string `json:"remote"`
	Username      string `json:"username"`
	UUID          string `json:"uuid"`
	LoginUUID     string `json:"login_uuid"`
	Online        bool   `json:"online"`
	Compression   int    `json:"compression"`
	Stage         string `json:"stage"`
	Text          string `json:"text"`
	Reason        string `json:"reason"`
	Payloads      int    `json:"payloads"`
	PayloadBytes  int64  `json:"payload_bytes"`
	PayloadSHA256 string `json:"payload_sha256"`
	KeepAlives    int    `json:"keepalives"`
	Error         string `json:"error"`
	DelayMS       int    `json:"delay_ms"`
	Command       string `json:"command"`
	Message       string `json:"message"`
	// Tick is the client's tick number, Worlds the worlds it says it entered so far
	// (LoginResult.Worlds), SeenEchoes and SeenKeepAlives the tick echoes and
	// keep-alives it says it received since it entered the last.
	Tick           int `json:"tick"`
	Worlds         int `json:"worlds"`
	SeenEchoes     int `json:"seen_echoes"`
	SeenKeepAlives int `json:"seen_keepalives"`
	// Raw is the line as printed.
	Raw string `json:"-"`
}

// Match returns a predicate for Server.Wait: events of this kind, for this username
// unless username is "".
func Match(kind, username string) func(Event) bool {
	return func(e Event) bool {
		return e.Event == kind && (username == "" || e.Username == username)
	}
}

// Server is a running server.js; it is killed when the test ends.
type Server struct {
	// Addr is where it listens (127.0.0.1:port).
	Addr string
	// Version and Protocol are the Minecraft version it speaks.
	Version  string
	Protocol int
	// PID is the node process id (tests use it to prove no process outlives them).
	PID int

	cmd    *exec.Cmd
	stderr *tailBuffer

	mu      sync.Mutex
	events  []Event
	noise   []string      // stdout lines that were not events
	changed chan struct{} // closed and replaced whenever events or exited change
	exited  bool
}

// StartServer starts server.js and waits until it listens. The process is killed at
// the end of the test; if the test failed, its events and stderr are logged.
func (h *Harness) StartServer(t testing.TB, opts ServerOptions) *Server {
	t.Helper()
	if opts.Version == "" {
		t.Fatal("nmp.StartServer: ServerOptions.Version is required")
	}
	args := opts.args()
	cmd := exec.Command(h.Node, args...)
	cmd.Dir = h.Dir
	s := &Server{cmd: cmd, stderr: newTailBuffer(64 << 10), changed: make(chan struct{})}
	cmd.Stderr = s.stderr
	// The pipe stays open while we live; server.js exits when it closes.
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatalf("server.js stdin: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("server.js stdout: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s %s: %v", h.Node, strings.Join(args, " "), err)
	}
	s.PID = cmd.Process.Pid
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.read(stdout)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-readDone
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server.js %s:\n%s", strings.Join(args[1:], " "), s.report())
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	ev, err := s.Wait(ctx, Match("listening", ""))
	if err != nil {
		t.Fatalf("server.js %s did not start: %v", strings.Join(args[1:], " "), err)
	}
	s.Addr = net.JoinHostPort(ev.Host, strconv.Itoa(ev.Port))
	s.Version, s.Protocol = ev.Version, ev.Protocol
	return s
}

func (s *Server) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := sc.Text()
		var ev Event
		s.mu.Lock()
		if err := json.Unmarshal([]byte(line), &ev); err == nil && ev.Event != "" {
			ev.Raw = line
			if len(s.events) < maxEvents {
				s.events = append(s.events, ev)
			}
		} else if len(s.noise) < 100 {
			s.noise = append(s.noise, line)
		}
		s.notifyLocked()
		s.mu.Unlock()
	}
	// A line longer than maxLine ends the scan; drain so the child never blocks on us.
	_, _ = io.Copy(io.Discard, stdout)
	s.mu.Lock()
	s.exited = true
	s.notifyLocked()
	s.mu.Unlock()
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait returns the first event (already seen or still to come) that match accepts. It
// fails when ctx ends or the server exits first, saying what the server printed.
func (s *Server) Wait(ctx context.Context, match func(Event) bool) (Event, error) {
	seen := 0
	for {
		s.mu.Lock()
		for ; seen < len(s.events); seen++ {
			if match(s.events[seen]) {
				ev := s.events[seen]
				s.mu.Unlock()
				return ev, nil
			}
		}
		exited, changed := s.exited, s.changed
		s.mu.Unlock()
		if exited {
			return Event{}, fmt.Errorf("server.js exited without that event:\n%s", s.report())
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("waiting for a server.js event: %w\n%s", ctx.Err(), s.report())
		}
	}
}

// Events returns every event so far.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Stderr is the tail of what the server wrote to stderr.
func (s *Server) Stderr() string { return s.stderr.String() }

// report is everything the server said, for failure messages.
func (s *Server) report() string {
	s.mu.Lock()
	var b strings.Builder
	for _, e := range s.events {
		b.WriteString("  event: " + e.Raw + "\n")
	}
	for _, l := range s.noise {
		b.WriteString("  stdout: " + l + "\n")
	}
	s.mu.Unlock()
	if e := s.stderr.String(); e != "" {
		b.WriteString("  stderr:\n" + e + "\n")
	}
	return b.String()
}
