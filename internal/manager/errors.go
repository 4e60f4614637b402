package manager

import (
	"context"
	"errors"
)

// Errors EnsureStarted returns; their text is shown to the player as a Login Disconnect.
var (
	// ErrStartTimeout means the server was not ready within start_timeout; it keeps starting.
	ErrStartTimeout = errors.New(textStarting)
	// ErrShuttingDown means the proxy is exiting and will not start anything.
	ErrShuttingDown = errors.New("Proxy is shutting down, please reconnect in a moment") //nolint:staticcheck // shown to players
	// ErrNotManaged means the server has no [server_manager], so there is nothing to start or stop.
	ErrNotManaged = errors.New("server has no [server_manager] block")
)

// textStarting is what a player reads when the server is (still) starting without them.
const textStarting = "Server is starting, please reconnect in a moment"

// StartError says why a start failed (crash, failed start, stopped meanwhile), so the player sees the cause.
type StartError struct {
	Server string // the server id, for logs
	Reason string // why, as recorded in the state ("exited with exit status 1")
}

// Error is the player-facing disconnect text.
func (e *StartError) Error() string { return "Server could not start: " + e.Reason }

// stoppedWaiting is EnsureStarted's answer when its caller's context ended first
// (the proxy shutting down, the player gone). The player reads that the server is
// starting, which stays true: the start goes on. errors.Is still finds the context's
// error for logs and callers.
type stoppedWaiting struct{ cause error }

func (e stoppedWaiting) Error() string { return textStarting }
func (e stoppedWaiting) Unwrap() error { return e.cause }

// reasonFrom turns a provider's error into a reason a player may read in a
// StartError. Go's context phrases ("context canceled", "context deadline
// exceeded") mean nothing to a player, so they become words; the operator gets the
// full error in the log and in ServerState.LastError.
func reasonFrom(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "it did not answer in time"
	case errors.Is(err, context.Canceled):
		return "the request was interrupted"
	}
	return err.Error()
}
