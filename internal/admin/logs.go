package admin

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/logtap"
)

// The log routes (the reference's paths): the recent lines, and the live
// ones as Server-Sent Events, both filtered by level, server and player.

// MaxLogHistory is the most lines GET /api/v1/logs/history answers.
const MaxLogHistory = logtap.DefaultHistory

// logFilter reads ?level=&server=&player= (and, for the history, n), answering
// 400 itself.
func logFilter(w http.ResponseWriter, r *http.Request, history bool) (logtap.Filter, int, bool) {
	var f logtap.Filter
	n := 100
	q := r.URL.Query()
	for k := range q {
		switch k {
		case "level", "server", "player", "token":
		case "n":
			if history {
				continue
			}
			fallthrough
		default:
			known := "level, server, player"
			if history {
				known += ", n"
			}
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("unknown query parameter %q; the filters are %s", k, known))
			return f, 0, false
		}
	}
	if lv := q.Get("level"); lv != "" {
		if err := f.Level.UnmarshalText([]byte(lv)); err != nil {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("level=%q: use debug, info, warn or error", lv))
			return f, 0, false
		}
	} else {
		f.Level = slog.LevelDebug
	}
	f.Server, f.Player = strings.TrimSpace(q.Get("server")), strings.TrimSpace(q.Get("player"))
	if v := q.Get("n"); history && v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > MaxLogHistory {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("n=%q: give a number of lines from 1 to %d", v, MaxLogHistory))
			return f, 0, false
		}
	}
	return f, n, true
}

func (s *Server) handleLogHistory(w http.ResponseWriter, r *http.Request) {
	if s.opts.Logs == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "this proxy keeps no log for the admin API")
		return
	}
	f, n, ok := logFilter(w, r, true)
	if !ok {
		return
	}
	writeData(w, http.StatusOK, s.opts.Logs.History(n, f))
}

// handleLogs streams log lines: "log" events, and a "lagged" one (data
// {"missed": n}) before a line when the client fell behind.
func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request) {
	if s.opts.Logs == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "this proxy keeps no log for the admin API")
		return
	}
	f, _, ok := logFilter(w, r, false)
	if !ok {
		return
	}
	sub := s.opts.Logs.Subscribe(DefaultSubscriberBuffer, f)
	defer sub.Close()
	var held *logtap.Entry // the line a lagged notice went out before
	s.stream(w, r, func(ctx context.Context) (string, any, error) {
		if held != nil {
			e := *held
			held = nil
			return "log", e, nil
		}
		e, missed, err := sub.Next(ctx)
		if err != nil {
			return "", nil, err
		}
		if missed > 0 {
			held = &e
			return string(events.Lagged), events.LaggedInfo{Missed: missed}, nil
		}
		return "log", e, nil
	})
}
