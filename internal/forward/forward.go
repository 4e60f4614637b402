// Package forward moves the bytes of a passthrough session between a player and its
// backend once the proxy has finished the handshake and login exchange.
//
// Two forwarders do the same job: the goroutine forwarder (portable: two io.Copy
// goroutines per session, splice(2) on Linux) and the epoll forwarder (Linux: an idle
// session is only its two sockets in an epoll set and a small record, and a burst of
// traffic is moved by one of a few shard goroutines). Both keep the same contract:
//
//   - each direction is forwarded until its source reaches EOF; then its destination
//     gets a half-close (shutdown SHUT_WR) and the other direction keeps going (the
//     direction that ends last sends its FIN with the close, not a shutdown first);
//   - any error (RST, EPIPE, ...) on either side tears both sides down;
//   - done is called exactly once, after both sockets are closed, with the byte counts
//     and the first error;
//   - the forwarder owns both connections from Forward on: the caller must not read,
//     write or close them (end sessions with Close). Socket options set before, such
//     as keepalive and TCP_NODELAY, stay in force. The epoll forwarder closes the
//     caller's *net.TCPConn values at once and keeps the sockets under fds of its
//     own, so a late Close on them does nothing; under the goroutine forwarder it
//     would end the session with an error. A socket that can give its fd away (an
//     FDTaker, one Go's netpoller never held) is taken as it is, with no dup.
//
// New picks the forwarder a setting names; Auto is epoll on Linux, goroutine elsewhere.
package forward

import (
	"errors"
	"fmt"
	"github.com/infrarust-go/infrarust/internal/config"
	"net"
	"os"
)

// Result is what a finished session reports to its done callback.
type Result struct {
	Up   int64 // bytes written to the backend (client → backend)
	Down int64 // bytes written to the client (backend → client)
	Err  error // nil when both directions ended with a clean EOF; ErrClosed when Close ended it
}

// Forwarder forwards sessions whose handshake and login bytes were already exchanged.
type Forwarder interface {
	// Forward starts moving bytes both ways between client and backend and returns
	// at once. done runs exactly once, when both directions are over and both
	// connections are closed; it may run on any goroutine, even before Forward
	// returns, must be short, and must not call Close.
	// client and backend are each a *net.TCPConn or an FDTaker.
	// end ends the session early (an operator's kick, a duplicate login): both
	// connections are closed and done gets ErrEnded. It may be called from any
	// goroutine, any number of times, also after the session is over.
	Forward(client, backend net.Conn, done func(Result)) (end func())
	// Close ends every session (their done gets ErrClosed), refuses new ones the
	// same way, and returns once every done has run and every goroutine is gone.
	Close() error
}

// FDTaker is a socket that can give its fd away (a *rawtcp.Conn): the forwarder
// owns the fd from then on and the connection is closed without touching it.
type FDTaker interface {
	net.Conn
	TakeFD() (int, error)
}

// Takes says whether Forward can take c: a TCP socket of Go's net or an FDTaker.
// Anything else (a test's pipe, a wrapper) must be copied by its owner.
func Takes(c net.Conn) bool {
	switch c.(type) {
	case *net.TCPConn, FDTaker:
		return true
	}
	return false
}

// errNotSocket is the Result.Err of a session whose connections are not sockets.
var errNotSocket = errors.New("forward: not a TCP socket")

// ErrClosed is the Result.Err of sessions ended by Close or handed over after it.
var ErrClosed = errors.New("forwarder closed")

// ErrEnded is the Result.Err of a session its end func ended.
var ErrEnded = errors.New("session ended by the proxy")

func noEnd() {}

// ErrUnavailable says a forwarder kind does not exist on this platform.
var ErrUnavailable = errors.New("forwarder not available on this platform")

// Kind names a forwarder implementation, as a setting spells it (the
// configuration owns the vocabulary).
type Kind = config.ForwarderKind

// The forwarder kinds a setting may name.
const (
	Auto      = config.ForwarderAuto
	Goroutine = config.ForwarderGoroutine
	Epoll     = config.ForwarderEpoll
)

// ParseKind checks a setting's value; the empty string means Auto.
func ParseKind(s string) (Kind, error) { return config.ParseForwarderKind(s) }

// EnvKind names the forwarder that "auto" means when it is set: CI runs the
// suites a second time with INFRARUST_FORWARDER=goroutine, the forwarder of
// every platform without epoll.
const EnvKind = "INFRARUST_FORWARDER"

// New builds the forwarder of kind k; Auto is $INFRARUST_FORWARDER when set,
// else epoll where it is available and the goroutine forwarder elsewhere; an
// explicit Epoll where it is unavailable is an error wrapping ErrUnavailable.
func New(k Kind) (Forwarder, error) {
	if k == Auto || k == "" {
		if env, err := ParseKind(os.Getenv(EnvKind)); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvKind, err)
		} else if env != Auto {
			k = env
		}
	}
	switch k {
	case Goroutine:
		return NewGoroutine(), nil
	case Epoll:
		return NewEpoll(EpollOptions{})
	case Auto, "":
		if f, err := NewEpoll(EpollOptions{}); err == nil {
			return f, nil
		} else if !errors.Is(err, ErrUnavailable) {
			return nil, err
		}
		return NewGoroutine(), nil
	}
	return nil, fmt.Errorf("unknown forwarder %q: use %q, %q or %q", k, Auto, Goroutine, Epoll)
}

// EpollOptions tunes the epoll forwarder; the zero value is the default.
type EpollOptions struct {
	// Shards is the number of event loops (each one goroutine and one epoll set);
	// 0 means GOMAXPROCS.
	Shards int
	// MaxPipes caps the splice pipes alive at once (two fds each), shared by all
	// sessions; 0 means 64. When none is free a chunk goes through a buffer instead.
	MaxPipes int

	move moveMode // how bytes move; tests and benchmarks compare the choices
}

// moveMode is how the epoll forwarder moves a chunk.
type moveMode uint8

const (
	moveAdaptive moveMode = iota // read into a buffer; splice once a read fills it
	moveBuffer                   // always read/write through the buffer
	moveSplice                   // always splice through a pipe
)
