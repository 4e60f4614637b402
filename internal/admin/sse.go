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
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // the server's ReadTimeout must not end a long stream

	sub := s.opts.Bus.Subscribe(DefaultSubscriberBuffer, types...)
	defer sub.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // nginx in front must not buffer the stream
	w.WriteHeader(http.StatusOK)

	// A stalled client gets its connection closed rather than a goroutine stuck forever.
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

	evc := make(chan events.Event)
	go func() {
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			select {
			case evc <- ev:
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
		case ev := <-evc:
			data, err := json.Marshal(ev)
			if err != nil {
				s.log.Warn("admin events: cannot encode event", "type", ev.Type, "err", err)
				continue
			}
			if !send("event: " + string(ev.Type) + "\ndata: " + string(data) + "\n\n") {
				return
			}
		}
	}
}
