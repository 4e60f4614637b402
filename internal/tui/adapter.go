package tui

import (
	"context"
	"errors"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// The admin client is the dashboard's Client as is; only the stream needs adapting.
var _ Client = (*admin.Client)(nil)

// AdminEvents makes the admin client's SSE stream an EventSource for the model.
type AdminEvents struct {
	// C is the admin API client the stream is opened with.
	C *admin.Client
}

// Subscribe opens /api/v1/events for the types the dashboard shows.
func (a AdminEvents) Subscribe(ctx context.Context) (Stream, error) {
	s, err := a.C.Events(ctx, subscribedTypes()...)
	if err != nil {
		return nil, err
	}
	return adminStream{s}, nil
}

type adminStream struct{ s *admin.EventStream }

func (a adminStream) Next() (Event, error) {
	ev, err := a.s.Next()
	if err != nil {
		return Event{}, err
	}
	return Event(ev), nil
}

func (a adminStream) Close() { _ = a.s.Close() }

// apiErrorText shows an API error as its code and message, e.g.
// "NOT_FOUND: unknown address".
func apiErrorText(err error) (string, bool) {
	var ae *admin.APIError
	if !errors.As(err, &ae) {
		return "", false
	}
	if ae.Code == "" {
		return ae.Message, true
	}
	return ae.Code + ": " + ae.Message, true
}
