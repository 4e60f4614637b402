// Package hookstest helps tests of code that fires player events (the proxy's, the
// extension API's): a Recorder that registers a handler on every event, records
// them in order and takes scripted decisions; a WebhookServer that checks
// signatures, records deliveries and answers by script, or hangs, or fails; and
// CheckOrder, the ordering guarantees of docs/events.md as code.
package hookstest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/infrarust-go/infrarust/internal/hooks"
)

// Record is one event a Recorder saw.
type Record struct {
	Kind   hooks.Kind
	Conn   uint64 // Connection.ID
	Player string // the username, or the profile's name
	Server string
	// Event is a copy of the event as the handler saw it.
	Event hooks.Event
}

// Recorder records every event and applies scripted decisions by player name.
type Recorder struct {
	mu      sync.Mutex
	records []Record
	script  map[scriptKey]func(hooks.Event)
	changed chan struct{} // closed and replaced on every record, for Wait
}

type scriptKey struct {
	kind   hooks.Kind
	player string
}

// NewRecorder makes a recorder; Register puts its handlers in a registry.
func NewRecorder() *Recorder {
	return &Recorder{script: map[scriptKey]func(hooks.Event){}, changed: make(chan struct{})}
}

// Register adds one handler per event kind to reg, named "hookstest.Recorder".
func (r *Recorder) Register(reg *hooks.Registry) {
	hooks.On(reg, "hookstest.Recorder", func(_ context.Context, e *hooks.PreLogin) { r.record(e, e.Connection.ID, e.Username, e.Server) })
	hooks.On(reg, "hookstest.Recorder", func(_ context.Context, e *hooks.GameProfileRequest) {
		r.record(e, e.Connection.ID, e.Profile.Name, e.Server)
	})
	hooks.On(reg, "hookstest.Recorder", func(_ context.Context, e *hooks.Login) { r.record(e, e.Connection.ID, e.Profile.Name, e.Server) })
	hooks.On(reg, "hookstest.Recorder", func(_ context.Context, e *hooks.PostLogin) { r.record(e, e.Connection.ID, e.Profile.Name, e.Server) })
	hooks.On(reg, "hookstest.Recorder", func(_ context.Context, e *hooks.ChooseInitialServer) {
		r.record(e, e.Connection.ID, e.Profile.Name, e.Server)
	})
	hooks.On(reg, "hookstest.Recorder", func(_ context.Context, e *hooks.ServerPreConnect) {
		r.record(e, e.Connection.ID, e.Profile.Name, e.Server)
	})
	hooks.On(reg, "hookstest.Recorder", func(_ context.Context, e *hooks.KickedFromServer) {
		r.record(e, e.Connection.ID, e.Profile.Name, e.Server)
	})
	hooks.On(reg, "hookstest.Recorder", func(_ context.Context, e *hooks.ServerConnected) {
		r.record(e, e.Connection.ID, e.Profile.Name, e.Server)
	})
	hooks.On(reg, "hookstest.Recorder", func(_ context.Context, e *hooks.Disconnect) { r.record(e, e.Connection.ID, e.Profile.Name, e.Server) })
}

// On scripts a decision: when player's event of kind fires, do runs on it (for
// example func(e hooks.Event) { e.(*hooks.PreLogin).Deny("no") }).
func (r *Recorder) On(kind hooks.Kind, player string, do func(hooks.Event)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.script[scriptKey{kind, player}] = do
}

// Deny scripts a denial of player's event of kind (PreLogin, Login, ServerPreConnect,
// KickedFromServer).
func (r *Recorder) Deny(kind hooks.Kind, player, reason string) {
	r.On(kind, player, func(e hooks.Event) {
		switch e := e.(type) {
		case *hooks.PreLogin:
			e.Deny(reason)
		case *hooks.Login:
			e.Deny(reason)
		case *hooks.ServerPreConnect:
			e.Deny(reason)
		case *hooks.KickedFromServer:
			e.Disconnect(reason)
		default:
			panic(fmt.Sprintf("hookstest: %s cannot be denied", kind))
		}
	})
}

// Redirect scripts a redirect of player's event of kind (ChooseInitialServer,
// ServerPreConnect, KickedFromServer).
func (r *Recorder) Redirect(kind hooks.Kind, player, server string) {
	r.On(kind, player, func(e hooks.Event) {
		switch e := e.(type) {
		case *hooks.ChooseInitialServer:
			e.Redirect(server)
		case *hooks.ServerPreConnect:
			e.Redirect(server)
		case *hooks.KickedFromServer:
			e.Redirect(server)
		default:
			panic(fmt.Sprintf("hookstest: %s cannot be redirected", kind))
		}
	})
}

func (r *Recorder) record(e hooks.Event, conn uint64, player, server string) {
	r.mu.Lock()
	do := r.script[scriptKey{e.Kind(), player}]
	r.mu.Unlock()
	if do != nil {
		do(e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, Record{Kind: e.Kind(), Conn: conn, Player: player, Server: server, Event: e})
	close(r.changed)
	r.changed = make(chan struct{})
}

// Records returns everything recorded so far, in firing order.
func (r *Recorder) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records)
}

// Kinds returns the events recorded for player, in order.
func (r *Recorder) Kinds(player string) []hooks.Kind {
	var out []hooks.Kind
	for _, rec := range r.Records() {
		if rec.Player == player {
			out = append(out, rec.Kind)
		}
	}
	return out
}

// Wait blocks until player's event of kind has been recorded or ctx ends (the
// Disconnect of a session fires when the session ends, after the test's client
// has gone).
func (r *Recorder) Wait(ctx context.Context, player string, kind hooks.Kind) error {
	for {
		r.mu.Lock()
		ch := r.changed
		found := slices.ContainsFunc(r.records, func(rec Record) bool { return rec.Player == player && rec.Kind == kind })
		r.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("no %s event for %q: %w (recorded: %v)", kind, player, ctx.Err(), r.Kinds(player))
		}
	}
}

// New builds a dispatcher for a test and closes it when the test ends.
func New(t testing.TB, opts hooks.Options) *hooks.Dispatcher {
	t.Helper()
	d, err := hooks.New(opts)
	if err != nil {
		t.Fatalf("hooks.New: %v", err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}
