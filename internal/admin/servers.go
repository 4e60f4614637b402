package admin

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// The routes of servers and their addresses: lists, power, drains and the
// other backend actions.

func (s *Server) handleServers(w http.ResponseWriter, _ *http.Request) {
	list := s.opts.Runtime.Servers(s.now())
	if list == nil {
		list = []ServerInfo{}
	}
	writeData(w, http.StatusOK, list)
}

func (s *Server) handleServer(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for _, info := range s.opts.Runtime.Servers(s.now()) {
		if info.ID == id {
			writeData(w, http.StatusOK, info)
			return
		}
	}
	s.writeRuntimeError(w, id, "", ErrUnknownServer)
}

// serverPower is the last path segment of the server start/stop routes.
type serverPower string

const (
	powerStart serverPower = "start"
	powerStop  serverPower = "stop"
)

// handleServerPower starts or stops a managed server; start answers once the start is
// under way, stop once the server is down.
func (s *Server) handleServerPower(action serverPower) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		var err error
		if action == powerStart {
			err = s.opts.Runtime.StartServer(r.Context(), id)
		} else {
			err = s.opts.Runtime.StopServer(r.Context(), id)
		}
		switch {
		case errors.Is(err, ErrNotManaged):
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("server %s has no [server_manager]; only managed servers can be started or stopped", id))
			return
		case err != nil:
			s.writeRuntimeError(w, id, "", err)
			return
		}
		s.log.Info("admin action", "action", "server."+string(action), "server", id, "client_ip", clientIP(r))
		s.handleServer(w, r)
	}
}

func (s *Server) handleStats(w http.ResponseWriter, _ *http.Request) {
	writeData(w, http.StatusOK, s.opts.Runtime.Stats(s.now()))
}

// handleSnapshot answers stats, servers, every server's backends and the players
// at one instant, so `infrarust top` refreshes with one request.
func (s *Server) handleSnapshot(w http.ResponseWriter, _ *http.Request) {
	now := s.now()
	servers := s.opts.Runtime.Servers(now)
	if servers == nil {
		servers = []ServerInfo{}
	}
	backends, err := s.allBackends(servers, now)
	if err != nil {
		s.writeRuntimeError(w, err.server, "", err.err)
		return
	}
	writeData(w, http.StatusOK, Snapshot{Stats: s.opts.Runtime.Stats(now), Servers: servers, Backends: backends, Players: s.players(""),
		Fleet: s.fleetStatus()})
}

func (s *Server) handleBackends(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b, err := s.opts.Runtime.Backends(id, s.now())
	if err != nil {
		s.writeRuntimeError(w, id, "", err)
		return
	}
	writeData(w, http.StatusOK, fillBackends(id, b))
}

func (s *Server) handleAllBackends(w http.ResponseWriter, _ *http.Request) {
	now := s.now()
	out, err := s.allBackends(s.opts.Runtime.Servers(now), now)
	if err != nil {
		s.writeRuntimeError(w, err.server, "", err.err)
		return
	}
	writeData(w, http.StatusOK, out)
}

// serverError names the server whose runtime call failed.
type serverError struct {
	server string
	err    error
}

// allBackends reads the backends of every listed server, skipping one a reload
// removed between the two calls.
func (s *Server) allBackends(servers []ServerInfo, now time.Time) (map[string]Backends, *serverError) {
	out := make(map[string]Backends, len(servers))
	for _, srv := range servers {
		b, err := s.opts.Runtime.Backends(srv.ID, now)
		if errors.Is(err, ErrUnknownServer) {
			continue
		}
		if err != nil {
			return nil, &serverError{srv.ID, err}
		}
		out[srv.ID] = fillBackends(srv.ID, b)
	}
	return out, nil
}

// fillBackends makes sure clients see the server id and an array, never null.
func fillBackends(id string, b Backends) Backends {
	if b.Server == "" {
		b.Server = id
	}
	if b.Backends == nil {
		b.Backends = []Backend{}
	}
	return b
}

// handleAction serves drain, enable and reset. Drain intent is persisted before it is
// applied, so a 200 means the drain survives a restart; all three are idempotent.
// A drain with the body {"move": true} then moves the address's players to the
// server's other addresses (or its fallbacks) and answers how many moved.
func (s *Server) handleAction(action Action) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, raw := r.PathValue("id"), r.PathValue("address")
		body, err := decodeStrict[DrainRequest](http.MaxBytesReader(w, r.Body, maxBodyBytes), true)
		if err != nil {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST",
				fmt.Sprintf("body is not a %s request (%v); send nothing, or for a drain {\"move\": true}", action, err))
			return
		}
		if body.Move && action != ActionDrain {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf(`"move" goes with drain, not %s`, action))
			return
		}
		addr, err := config.ParseAddress(raw)
		if err != nil {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST",
				fmt.Sprintf("%v: give host:port, percent-encoded in the URL, with IPv6 in brackets (e.g. [2001:db8::1]:25565)", err))
			return
		}
		now := s.now()
		addr, err = s.lookupAddress(id, addr, now)
		if err != nil {
			s.writeRuntimeError(w, id, addr, err)
			return
		}
		if !s.applyAction(w, action, id, addr, now) {
			return
		}
		audit := []any{"action", action, "server", id, "address", addr, "client_ip", clientIP(r)}
		if body.Move {
			audit = append(audit, "move", true)
		}
		s.log.Info("admin action", audit...)
		res := ActionResult{Server: id, Address: addr, Action: action, Fleet: s.shareBackend(r, action, id, addr)}
		if body.Move {
			// Outside actionMu: moving many players takes a while and must not hold
			// up other drains.
			moved, err := s.opts.Runtime.MovePlayers(r.Context(), id, addr)
			if err != nil {
				s.log.Info("admin action failed", "action", "drain.move", "server", id, "address", addr,
					"moved", moved.Moved, "client_ip", clientIP(r), "err", err)
				s.writeMoveError(w, id, addr, moved, err)
				return
			}
			s.log.Info("admin action", "action", "drain.move", "server", id, "address", addr,
				"moved", moved.Moved, "stayed", moved.Stayed, "client_ip", clientIP(r))
			res.Move = &moved
		}
		if b, err := s.opts.Runtime.Backends(id, s.now()); err == nil {
			for _, be := range b.Backends {
				if sameAddress(be.Address, addr) {
					res.Backend = be
				}
			}
		}
		writeData(w, http.StatusOK, res)
	}
}

// applyAction changes the address under actionMu, so the drain file and the
// runtime apply concurrent requests for one address in the same order; it has
// answered the request when it returns false.
func (s *Server) applyAction(w http.ResponseWriter, action Action, id, addr string, now time.Time) bool {
	rt := s.opts.Runtime
	s.actionMu.Lock()
	defer s.actionMu.Unlock()
	switch action {
	case ActionDrain, ActionEnable:
		drain := action == ActionDrain
		if s.opts.Drains != nil {
			if err := s.opts.Drains.Set(id, addr, drain); err != nil {
				writeError(w, http.StatusInternalServerError, "INTERNAL",
					fmt.Sprintf("the %s was not applied because it could not be saved: %v", action, err))
				return false
			}
		}
		if err := rt.SetDrain(id, addr, drain, now); err != nil {
			if s.opts.Drains != nil {
				_ = s.opts.Drains.Set(id, addr, !drain) // keep the file in step with the runtime
			}
			s.writeRuntimeError(w, id, addr, err)
			return false
		}
	case ActionReset:
		if err := rt.Reset(id, addr, now); err != nil {
			s.writeRuntimeError(w, id, addr, err)
			return false
		}
	}
	return true
}

// writeMoveError answers a drain whose move failed: the drain itself stands, and
// the message says so before the reason, with the same codes as a send.
func (s *Server) writeMoveError(w http.ResponseWriter, id, addr string, partial MoveResult, err error) {
	head := fmt.Sprintf("drained %s on %s (the drain stands), but its players were not moved", addr, id)
	if partial.Moved > 0 {
		head = fmt.Sprintf("drained %s on %s (the drain stands) and moved %d player(s), but not the rest", addr, id, partial.Moved)
	}
	switch {
	case errors.Is(err, ErrUnknownServer), errors.Is(err, ErrUnknownAddress):
		s.writeRuntimeError(w, id, addr, err) // a reload removed it meanwhile
	case errors.Is(err, ErrNotSwitchable), errors.Is(err, ErrOtherNetwork):
		writeError(w, http.StatusConflict, "CONFLICT", fmt.Sprintf("%s: %v", head, err))
	case errors.Is(err, ErrMoveFailed):
		writeError(w, http.StatusBadGateway, "BAD_GATEWAY", fmt.Sprintf("%s: %v", head, err))
	default:
		s.log.Error("admin API: moving players off a drained address failed", "server", id, "address", addr, "err", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", fmt.Sprintf("%s: %v", head, err))
	}
}

// lookupAddress finds addr among the server's configured addresses and returns the
// runtime's spelling of it, or ErrUnknownServer / ErrUnknownAddress.
func (s *Server) lookupAddress(id, addr string, now time.Time) (string, error) {
	b, err := s.opts.Runtime.Backends(id, now)
	if err != nil {
		return addr, err
	}
	for _, be := range b.Backends {
		if sameAddress(be.Address, addr) {
			return be.Address, nil
		}
	}
	return addr, ErrUnknownAddress
}

func sameAddress(a, b string) bool {
	if a == b {
		return true
	}
	na, err1 := config.ParseAddress(a)
	nb, err2 := config.ParseAddress(b)
	return err1 == nil && err2 == nil && na == nb
}

// writeRuntimeError maps the Runtime's sentinel errors to 404s that list what does exist.
func (s *Server) writeRuntimeError(w http.ResponseWriter, id, addr string, err error) {
	now := s.now()
	switch {
	case errors.Is(err, ErrUnknownServer):
		var ids []string
		for _, srv := range s.opts.Runtime.Servers(now) {
			ids = append(ids, srv.ID)
		}
		slices.Sort(ids)
		msg := fmt.Sprintf("no server %q; servers are: %s", id, strings.Join(ids, ", "))
		if len(ids) == 0 {
			msg = fmt.Sprintf("no server %q; no servers are configured", id)
		}
		writeError(w, http.StatusNotFound, "NOT_FOUND", msg)
	case errors.Is(err, ErrUnknownAddress):
		var addrs []string
		if b, berr := s.opts.Runtime.Backends(id, now); berr == nil {
			for _, be := range b.Backends {
				addrs = append(addrs, be.Address)
			}
		}
		writeError(w, http.StatusNotFound, "NOT_FOUND",
			fmt.Sprintf("server %s has no address %s; addresses are: %s", id, addr, strings.Join(addrs, ", ")))
	default:
		s.log.Error("admin API runtime call failed", "server", id, "address", addr, "err", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
	}
}
