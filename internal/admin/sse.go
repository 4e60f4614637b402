package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/events"
)

// handleEvents streams bus events as Server-Sent Events. Each client has its own
// bounded buffer on the bus, so a slow or stalled client loses events (and is told
// with a lagged event) instead of slowing Publish.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if s.opts.Bus == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "this proxy has no event bus attached to the admin API")
		return
	}
	var types []events.Type
	for _, name := range strings.Split(r.URL.Query().Get("types"), ",") {
		if strings.TrimSpace(name) == "" {
			continue
		}
		t, err := events.ParseType(name)
		if err != nil {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", "types=: "+err.Error())
			return
		}
		if t != events.Lagged { // lagged is always sent
			types = append(types, t)
		}
	}
	sub := s.opts.Bus.Subscribe(DefaultSubscriberBuffer, types...)
	defer sub.Close()
	s.stream(w, r, func(ctx context.Context) (string, any, error) {
		ev, err := sub.Next(ctx)
		return string(ev.Type), ev, err
	})
}

// handleRecentEvents answers the last events (the reference's 100, stats
// ticks and the player events' decided copies aside), oldest first: what a
// dashboard shows before its stream began.
func (s *Server) handleRecentEvents(w http.ResponseWriter, _ *http.Request) {
	list := []events.Event{}
	if r := s.recent.Load(); r != nil {
		list = r.List()
	}
	writeData(w, http.StatusOK, list)
}

// stream answers r with Server-Sent Events: each item next gives (its event
// name and what its data line carries, JSON-encoded) until next fails or the
// client goes; a comment every KeepAlive keeps proxies from closing it. A
// client that takes nothing for twice that is closed rather than left holding
// a goroutine.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, next func(ctx context.Context) (string, any, error)) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // the server's ReadTimeout must not end a long stream
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // nginx in front must not buffer the stream
	w.WriteHeader(http.StatusOK)

	writeTimeout := 2 * s.opts.KeepAlive
	if writeTimeout < 10*time.Second {
		writeTimeout = 10 * time.Second
	}
	send := func(chunk string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := fmt.Fprint(w, chunk); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(": connected\n\n") {
		return
	}

	type item struct {
		name string
		data any
	}
	items := make(chan item)
	go func() {
		for {
			name, data, err := next(ctx)
			if err != nil {
				return
			}
			select {
			case items <- item{name, data}:
			case <-ctx.Done():
				return
			}
		}
	}()

	ka := time.NewTicker(s.opts.KeepAlive)
	defer ka.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ka.C:
			if !send(": keep-alive\n\n") {
				return
			}
		case it := <-items:
			data, err := json.Marshal(it.data)
			if err != nil {
				s.log.Warn("admin stream: cannot encode an item", "event", it.name, "err", err)
				continue
			}
			if !send("event: " + it.name + "\ndata: " + string(data) + "\n\n") {
				return
			}
		}
	}
}
