package admin

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// BanRequest is the body of POST /api/v1/bans. Duration is humantime ("7d", "12h");
// empty or "permanent" means no expiry. ExpiresAt is an alternative to Duration.
type BanRequest struct {
	Type      string     `json:"type"` // ip, username (or name), uuid
	Value     string     `json:"value"`
	Reason    string     `json:"reason,omitempty"`
	Duration  string     `json:"duration,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	CreatedBy string     `json:"created_by,omitempty"`
}

// ParseBanType accepts the spellings operators type ("ip", "name", "username",
// "player", "uuid") and returns the store's type.
func ParseBanType(s string) (bans.Type, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ip", "cidr":
		return bans.TypeIP, nil
	case "username", "name", "player":
		return bans.TypeUsername, nil
	case "uuid":
		return bans.TypeUUID, nil
	}
	return "", fmt.Errorf("unknown ban type %q: use ip, username or uuid", s)
}

func (s *Server) bansUnavailable(w http.ResponseWriter) bool {
	if s.opts.Bans != nil {
		return false
	}
	writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE",
		"bans are unavailable: the proxy did not open its ban list (<data_dir>/bans.json); check the serve log for why")
	return true
}

func (s *Server) handleListBans(w http.ResponseWriter, _ *http.Request) {
	if s.bansUnavailable(w) {
		return
	}
	list := s.opts.Bans.List(s.now())
	if list == nil {
		list = []bans.Ban{}
	}
	writeData(w, http.StatusOK, list)
}

func (s *Server) handleAddBan(w http.ResponseWriter, r *http.Request) {
	if s.bansUnavailable(w) {
		return
	}
	req, err := decodeBanRequest(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST",
			fmt.Sprintf("body is not a ban request (%v); send one object: {\"type\":\"ip|username|uuid\",\"value\":\"...\",\"reason\":\"...\",\"duration\":\"7d\"}", err))
		return
	}
	typ, err := ParseBanType(req.Type)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
		return
	}
	now := s.now()
	b := bans.Ban{Type: typ, Value: req.Value, Reason: req.Reason, CreatedBy: req.CreatedBy}
	if b.CreatedBy == "" {
		b.CreatedBy = "admin-api@" + clientIP(r)
	}
	switch d := strings.TrimSpace(req.Duration); {
	case d != "" && req.ExpiresAt != nil:
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "give either duration or expires_at, not both")
		return
	case d != "" && !strings.EqualFold(d, "permanent"):
		dur, err := config.ParseBanLength(d)
		if err != nil {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
			return
		}
		exp := now.Add(dur)
		b.ExpiresAt = &exp
	case req.ExpiresAt != nil:
		b.ExpiresAt = req.ExpiresAt
	}
	// Validate against an in-memory store first, so input errors (400) are told
	// apart from failures to save the list (500).
	if probe, err := bans.Open("", now); err == nil {
		if _, err := probe.Add(b, now); err != nil {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
			return
		}
	}
	saved, err := s.opts.Bans.Add(b, now)
	if err != nil {
		s.log.Error("admin API: saving a ban failed", "err", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", fmt.Sprintf("the ban was not added: %v", err))
		return
	}
	s.log.Info("admin action", "action", "ban", "type", saved.Type, "value", saved.Value, "reason", saved.Reason,
		"expires_at", saved.ExpiresAt, "client_ip", clientIP(r))
	s.opts.Bus.Publish(events.BanCreated, saved)
	writeData(w, http.StatusCreated, BanResult{Ban: saved, Fleet: s.shareBan(r, saved, false)})
}

// decodeBanRequest reads exactly one ban request (see decodeStrict).
func decodeBanRequest(r io.Reader) (BanRequest, error) {
	return decodeStrict[BanRequest](r, false)
}

// decodeStrict reads exactly one JSON object with known fields: anything after
// it (a second object, stray text) is refused, so a request that says two things
// never has only the first applied. With allowEmpty, a body of nothing (or only
// white space) is the zero value: routes whose body is optional.
func decodeStrict[T any](r io.Reader, allowEmpty bool) (T, error) {
	var req T
	br := bufio.NewReader(r)
	if allowEmpty && onlySpace(br) {
		return req, nil
	}
	dec := json.NewDecoder(br)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var zero T
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return zero, fmt.Errorf("the body is over %d bytes", maxBodyBytes)
		}
		return zero, errors.New(clip(err.Error())) // a field name the client chose, at most clipped
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var zero T
		return zero, errors.New("trailing data after the JSON object")
	}
	return req, nil
}

// clip bounds a text an error message repeats from a request, so an error
// never sends a body back.
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// onlySpace skips leading JSON white space and reports whether the body ends
// there; a read error counts as "not empty" so the decoder reports it.
func onlySpace(br *bufio.Reader) bool {
	for {
		b, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		_ = br.UnreadByte()
		return false
	}
}

func (s *Server) handleRemoveBan(w http.ResponseWriter, r *http.Request) {
	if s.bansUnavailable(w) {
		return
	}
	typ, err := ParseBanType(r.PathValue("type"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
		return
	}
	value := r.PathValue("value")
	now := s.now()
	// An empty in-memory store answers ErrNotFound for any valid value, so any other
	// error is bad input.
	if probe, err := bans.Open("", now); err == nil {
		if _, err := probe.Remove(typ, value, now); err != nil && !errors.Is(err, bans.ErrNotFound) {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
			return
		}
	}
	removed, err := s.opts.Bans.Remove(typ, value, now)
	if errors.Is(err, bans.ErrNotFound) {
		writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no %s ban on %q (see GET /api/v1/bans)", typ, value))
		return
	}
	if err != nil {
		s.log.Error("admin API: removing a ban failed", "err", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", fmt.Sprintf("the ban was not removed: %v", err))
		return
	}
	s.log.Info("admin action", "action", "unban", "type", removed.Type, "value", removed.Value, "client_ip", clientIP(r))
	s.opts.Bus.Publish(events.BanRemoved, removed)
	writeData(w, http.StatusOK, BanResult{Ban: removed, Fleet: s.shareBan(r, removed, true)})
}
