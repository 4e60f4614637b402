package proxy

import (
	"errors"
	"fmt"
	"testing"
)

// A move's outcome for infrarust_moves_total comes from the error's kind,
// wrapped or not, never from its text.
func TestMoveOutcome(t *testing.T) {
	for err, want := range map[error]string{
		nil: "moved",
		fmt.Errorf("%w: no VPNs", errHandlerRefused): "refused",
		fmt.Errorf("moving: %w", ErrOtherNetwork):    "refused",
		&refusal{}: "refused",
		errors.New("survival: dial tcp: connection refused"): "failed",
	} {
		if got := moveOutcome(err); got != want {
			t.Errorf("moveOutcome(%v) = %s, want %s", err, got, want)
		}
	}
}
