package app

// PENDING (issue 14, the lead's part): a compile shim so serve builds while the
// proxy does not yet implement admin.PlayerRuntime. It lists no players and
// refuses every move and kick with errPlayersPending (the admin API answers
// 500 with that text). Delete this file when runtime.go implements the four
// methods.

import (
	"context"
	"errors"

	"github.com/infrarust-go/infrarust/internal/admin"
)

var errPlayersPending = errors.New("this build of the proxy cannot list, move or kick players yet")

// Players implements admin.PlayerRuntime (shim: none listed).
func (r *runtime) Players(string) []admin.Player { return nil }

// SendPlayer implements admin.PlayerRuntime (shim: refused).
func (r *runtime) SendPlayer(context.Context, string, string) (admin.Player, error) {
	return admin.Player{}, errPlayersPending
}

// KickPlayer implements admin.PlayerRuntime (shim: refused).
func (r *runtime) KickPlayer(string, string) error { return errPlayersPending }

// MovePlayers implements admin.PlayerRuntime (shim: refused).
func (r *runtime) MovePlayers(context.Context, string, string) (admin.MoveResult, error) {
	return admin.MoveResult{}, errPlayersPending
}
