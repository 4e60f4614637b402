package manager

import (
	"context"
	"errors"
	"regexp"
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

// startFailed begins the reason of a start the provider failed; what follows
// is the provider's error.
const startFailed = "the start failed"

// addressLike matches what a provider's error may say of the operator's
// network: a URL, an IPv4 or bracketed IPv6 address with or without a port.
var addressLike = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"']+|\[[0-9a-fA-F:.]+\](:\d+)?|\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b`)

// playerSafe is a state's reason as a player may read it: the provider's
// words stay (they tell the operator on his own join what is wrong), its
// addresses and URLs do not (the log and the API's state keep them whole).
func playerSafe(reason string) string {
	return addressLike.ReplaceAllString(reason, "(address hidden)")
}

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
