package admin

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// The player routes: list, send, kick. Names are matched in any case, as
// Minecraft treats them; the runtime is always called with the name as the
// player logged in with.

func (s *Server) handlePlayers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if k != "server" && k != "fleet" {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST",
				fmt.Sprintf("unknown query parameter %q; the filters are ?server=ID and ?fleet=true", k))
			return
		}
	}
	fleet, err := fleetQuery(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
		return
	}
	server := q.Get("server")
	if server != "" && !s.serverExists(server) {
		s.writeRuntimeError(w, server, "", ErrUnknownServer)
		return
	}
	if fleet {
		s.handleFleetPlayers(w, r, server) // fleet.go
		return
	}
	writeData(w, http.StatusOK, s.players(server))
}

// players is the runtime's list of one server's players (all when server is ""),
// sorted by name in any case and never nil.
func (s *Server) players(server string) []Player {
	list := s.opts.Runtime.Players(server)
	if server != "" {
		// The runtime filters already; this keeps the answer true to its query
		// even if a player moved between its lookup and ours.
		list = slices.DeleteFunc(list, func(p Player) bool { return p.Server != server })
	}
	if list == nil {
		return []Player{}
	}
	slices.SortFunc(list, func(a, b Player) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), strings.Compare(a.Name, b.Name))
	})
	return list
}

// findPlayer looks a connected player up by name, in any case.
// findPlayer is the player called name: the exact-case match, else the only one
// whose name matches in any case. Offline-mode names that differ only by case are
// different players: several such matches without an exact one are ambiguous.
func (s *Server) findPlayer(name string) (p Player, found bool, ambiguous []string) {
	var folded []Player
	for _, pl := range s.opts.Runtime.Players("") {
		if pl.Name == name {
			return pl, true, nil
		}
		if strings.EqualFold(pl.Name, name) {
			folded = append(folded, pl)
		}
	}
	switch len(folded) {
	case 0:
		return Player{}, false, nil
	case 1:
		return folded[0], true, nil
	}
	for _, pl := range folded {
		ambiguous = append(ambiguous, pl.Name)
	}
	slices.Sort(ambiguous)
	return Player{}, false, ambiguous
}

// lookupPlayer is findPlayer answering the request's error itself: 404 for no
// such player, 409 listing the names when several differ only by case.
func (s *Server) lookupPlayer(w http.ResponseWriter, name, target string) (Player, bool) {
	p, found, ambiguous := s.findPlayer(name)
	switch {
	case found:
		return p, true
	case len(ambiguous) > 0:
		writeError(w, http.StatusConflict, "CONFLICT",
			fmt.Sprintf("%d players match %q in any case: %s; give the exact name", len(ambiguous), name, strings.Join(ambiguous, ", ")))
	default:
		s.writePlayerError(w, name, target, ErrUnknownPlayer)
	}
	return Player{}, false
}

func (s *Server) serverExists(id string) bool {
	return slices.ContainsFunc(s.opts.Runtime.Servers(s.now()), func(info ServerInfo) bool { return info.ID == id })
}

// pathPlayer reads {name}, answering 400 for an empty one.
func pathPlayer(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := strings.TrimSpace(r.PathValue("name"))
	if name == "" {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "give the player's name in the path: /api/v1/players/{name}/...")
		return "", false
	}
	return name, true
}

// handleSendPlayer moves one player to another server of their network.
func (s *Server) handleSendPlayer(w http.ResponseWriter, r *http.Request) {
	name, ok := pathPlayer(w, r)
	if !ok {
		return
	}
	req, err := decodeStrict[SendRequest](http.MaxBytesReader(w, r.Body, maxBodyBytes), false)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST",
			fmt.Sprintf("body is not a send request (%v); send one object: {\"server\":\"lobby\"}", err))
		return
	}
	target := strings.TrimSpace(req.Server)
	if target == "" {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `say where to send the player: {"server":"lobby"}`)
		return
	}
	if !s.serverExists(target) {
		s.writeRuntimeError(w, target, "", ErrUnknownServer)
		return
	}
	p, found := s.lookupPlayer(w, name, target)
	if !found {
		return
	}
	if p.Server == target {
		writeError(w, http.StatusConflict, "CONFLICT",
			fmt.Sprintf("%s is already on %s (%s); to move players off one address, drain it with {\"move\": true}", p.Name, target, p.Address))
		return
	}
	if !p.Switchable {
		s.writePlayerError(w, p.Name, target, ErrNotSwitchable)
		return
	}
	moved, err := s.opts.Runtime.SendPlayer(r.Context(), p.Name, target, req.Force)
	ip := clientIP(r)
	if err != nil {
		s.log.Info("admin action failed", "action", "player.send", "player", p.Name, "from", p.Server, "server", target, "client_ip", ip, "err", err)
		s.writePlayerError(w, p.Name, target, err)
		return
	}
	s.log.Info("admin action", "action", "player.send", "player", p.Name, "from", p.Server, "server", moved.Server,
		"address", moved.Address, "force", req.Force, "client_ip", ip)
	writeData(w, http.StatusOK, moved)
}

// handleKickPlayer disconnects one player; the body is optional and the reason
// defaults to DefaultKickReason.
func (s *Server) handleKickPlayer(w http.ResponseWriter, r *http.Request) {
	name, ok := pathPlayer(w, r)
	if !ok {
		return
	}
	req, err := decodeStrict[KickRequest](http.MaxBytesReader(w, r.Body, maxBodyBytes), true)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST",
			fmt.Sprintf("body is not a kick request (%v); send nothing, or one object: {\"reason\":\"...\"}", err))
		return
	}
	reason := strings.TrimSpace(req.Reason)
	if n := utf8.RuneCountInString(reason); n > MaxKickReasonLen {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST",
			fmt.Sprintf("the reason is %d characters; keep it to %d", n, MaxKickReasonLen))
		return
	}
	if reason == "" {
		reason = DefaultKickReason
	}
	p, found := s.lookupPlayer(w, name, "")
	if !found {
		return
	}
	ip := clientIP(r)
	if err := s.opts.Runtime.KickPlayer(p.Name, reason); err != nil {
		s.log.Info("admin action failed", "action", "player.kick", "player", p.Name, "client_ip", ip, "err", err)
		s.writePlayerError(w, p.Name, "", err)
		return
	}
	s.log.Info("admin action", "action", "player.kick", "player", p.Name, "server", p.Server, "address", p.Address,
		"reason", reason, "client_ip", ip)
	writeData(w, http.StatusOK, KickResult{Player: p, Reason: reason})
}

// writePlayerError maps the player operations' errors: 404 for a player or server
// that is not there, 409 for a move the proxy cannot make, 502 for a move the
// target refused (with its reason), 500 for anything else.
func (s *Server) writePlayerError(w http.ResponseWriter, name, target string, err error) {
	switch {
	case errors.Is(err, ErrUnknownPlayer):
		writeError(w, http.StatusNotFound, "NOT_FOUND",
			fmt.Sprintf("no player %q is online (names match in any case); see GET /api/v1/players", name))
	case errors.Is(err, ErrUnknownServer):
		s.writeRuntimeError(w, target, "", ErrUnknownServer)
	case errors.Is(err, ErrNotSwitchable):
		writeError(w, http.StatusConflict, "CONFLICT",
			fmt.Sprintf("%s cannot be moved: %v", name, err))
	case errors.Is(err, ErrOtherNetwork):
		writeError(w, http.StatusConflict, "CONFLICT",
			fmt.Sprintf("%s cannot be sent to %s: %v (servers exchange players only within one `network`)", name, target, err))
	case errors.Is(err, ErrRefused):
		writeError(w, http.StatusForbidden, "FORBIDDEN", fmt.Sprintf("%s was not moved to %s: %v. They stay where they were; force (players send --force) overrides maintenance and capacity, never ip_filter or bans", name, target, err))
	case errors.Is(err, ErrMoveFailed):
		writeError(w, http.StatusBadGateway, "BAD_GATEWAY", fmt.Sprintf("%s was not moved to %s: %v", name, target, err))
	default:
		s.log.Error("admin API: player operation failed", "player", name, "server", target, "err", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
	}
}
