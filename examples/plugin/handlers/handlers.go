// Package handlers holds the example's event handlers, apart from main so that
// they can be tested without starting a proxy.
package handlers

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust"
)

// Config is what the handlers need from the operator.
type Config struct {
	// Blocked are player names refused at login (case-insensitive).
	Blocked []string
	// Fallback is the server a player is sent to when theirs cannot take them; "" turns it off.
	Fallback string
	// Log receives the session summaries.
	Log *slog.Logger
}

// Register puts the handlers in r.
func Register(r *infrarust.Registry, c Config) {
	blocked := map[string]bool{}
	for _, name := range c.Blocked {
		blocked[strings.ToLower(name)] = true
	}

	// Refuse blocked players once their final profile is known (after Mojang
	// authentication on client_only servers).
	infrarust.On(r, "blocklist", func(ctx context.Context, e *infrarust.Login) {
		if blocked[strings.ToLower(e.Profile.Name)] {
			e.Deny("§cYou are not allowed on this network")
		}
	})

	// A server that is down or full sends its players to the fallback instead of
	// disconnecting them; the fallback itself failing ends the login as usual.
	if c.Fallback != "" {
		infrarust.On(r, "fallback", func(ctx context.Context, e *infrarust.KickedFromServer) {
			if e.Server != c.Fallback && e.Cause != infrarust.CauseKicked {
				e.Redirect(c.Fallback)
			}
		}, infrarust.Timeout(100*time.Millisecond))
	}

	if c.Log != nil {
		infrarust.On(r, "session-log", func(ctx context.Context, e *infrarust.Disconnect) {
			c.Log.Info("session ended", "player", e.Profile.Name, "server", e.Server,
				"outcome", e.Outcome, "duration", e.Duration.Round(time.Second))
		})
	}
}
