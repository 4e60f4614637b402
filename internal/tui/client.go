// Package tui is the Bubble Tea dashboard behind `infrarust top`: a live view of
// the proxy's servers, backends and players fed by the admin API, with
// drain/enable/reset and send/kick actions on the keyboard. It talks to the proxy only through the small
// interfaces below, so tests drive it with fakes and the command wires in the
// admin client through adapter.go.
package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/events"
)

// Reader is the read-only part of the admin API, all that a one-shot snapshot
// (`top --once`) needs: one request, so a refresh costs one unit of the client's
// admin rate limit.
type Reader interface {
	Snapshot(ctx context.Context) (admin.Snapshot, error)
}

// Client is the admin API as the dashboard uses it; *admin.Client satisfies it
// directly, tests pass a fake.
type Client interface {
	Reader
	Act(ctx context.Context, action admin.Action, server, addr string) (admin.ActionResult, error)
	SendPlayer(ctx context.Context, name, server string, force bool) (admin.Player, error)
	KickPlayer(ctx context.Context, name, reason string) (admin.KickResult, error)
	// FleetPlayers lists the whole fleet's players with the proxy each is on
	// (GET /api/v1/players?fleet=true); the players pane's fleet mode (f) reads it.
	FleetPlayers(ctx context.Context, server string) ([]admin.FleetPlayer, error)
}

// Event is one entry of the admin event stream, kept independent of the admin
// package's stream type so a fake stream is a few lines.
type Event struct {
	Type events.Type
	Time time.Time
	Data json.RawMessage
}

// Stream yields live events until it fails or is closed.
type Stream interface {
	// Next blocks for the next event; any error ends the stream.
	Next() (Event, error)
	// Close releases the stream and unblocks a pending Next.
	Close()
}

// EventSource opens live event streams; the dashboard reopens one after each
// failure, so Subscribe is called again on every reconnect.
type EventSource interface {
	Subscribe(ctx context.Context) (Stream, error)
}

// Snapshot is everything the dashboard shows, fetched in one go; `--once` prints
// one and the live view refreshes one every interval.
type Snapshot struct {
	Stats    admin.Stats
	Servers  []admin.ServerInfo
	Backends map[string]admin.Backends
	// Players are everyone online, as GET /api/v1/players lists them.
	Players []admin.Player
	// At is when the snapshot was taken; the "secs ago" fields are relative to it.
	At time.Time
	// Fleet is the [fleet] the proxy belongs to, for the header (fleet.go); nil without one.
	Fleet *admin.FleetStatus
}

// Fetch takes a full snapshot through r in one request.
func Fetch(ctx context.Context, r Reader, now time.Time) (Snapshot, error) {
	s, err := r.Snapshot(ctx)
	var ae *admin.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return Snapshot{}, fmt.Errorf("snapshot: the proxy has no GET /api/v1/snapshot, so it is older than this CLI; upgrade it (%w)", err)
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	if s.Backends == nil {
		s.Backends = map[string]admin.Backends{}
	}
	return Snapshot{Stats: s.Stats, Servers: s.Servers, Backends: s.Backends, Players: s.Players, At: now, Fleet: s.Fleet}, nil
}
