package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
)

// The fleet routes and shapes: GET /api/v1/fleet, GET /api/v1/players?fleet=true,
// and the "fleet" field of drain/enable/reset and ban answers. A proxy without
// [fleet] answers GET /api/v1/fleet with {"enabled": false} and leaves the field out.
//
// The players list stays this proxy's by default, as in the Rust Infrarust's API
// (and as send and kick act on it); ?fleet=true asks for the whole fleet with the
// proxy of each player, like RedisBungee's network-wide list.

// Fleet is the admin API's view of the proxies this one shares state with
// (internal/fleet, adapted by the app); nil when the proxy is on its own.
type Fleet interface {
	// ShareBackend tells the fleet about a drain, enable or reset just applied
	// here, and says within ctx how far it got.
	ShareBackend(ctx context.Context, action Action, server, address string) FleetDelivery
	// ShareMaintenance tells the fleet about a server's maintenance (or its end)
	// just applied here.
	ShareMaintenance(ctx context.Context, server string, on bool) FleetDelivery
	// ShareBan tells the fleet about a ban just added (lifted false) or lifted here.
	ShareBan(ctx context.Context, b bans.Ban, lifted bool) FleetDelivery
	// Status is the fleet as this proxy last saw it; it never waits on Redis.
	Status() FleetStatus
	// Players lists the whole fleet's players (of one server, or "" for all);
	// ErrFleetUnreachable when Redis does not answer.
	Players(ctx context.Context, server string) ([]FleetPlayer, error)
}

// ErrFleetUnreachable: the fleet's Redis does not answer, so what only it knows
// (the other proxies' players) cannot be read now.
var ErrFleetUnreachable = errors.New("the fleet's Redis is unreachable")

// Fleet delivery states, FleetDelivery.State.
const (
	FleetShared     = "shared"     // every proxy of the fleet has it (or gets it within a round trip)
	FleetQueued     = "queued"     // kept here; published when Redis answers again
	FleetSuperseded = "superseded" // the fleet had a newer change of the same thing, which applies here too
	FleetLocalOnly  = "local_only" // applied on this proxy only (a reset while Redis is unreachable)
)

// FleetDelivery says whether an operator's change reached the other proxies.
type FleetDelivery struct {
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
}

// Shared reports whether the fleet has the change.
func (d FleetDelivery) Shared() bool { return d.State == FleetShared }

// FleetProxy is one proxy of GET /api/v1/fleet.
type FleetProxy struct {
	ID        string    `json:"id"`
	Address   string    `json:"address"`
	Admin     string    `json:"admin,omitempty"`
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"`
	// UptimeSecs is measured from StartedAt to the answer.
	UptimeSecs float64 `json:"uptime_secs"`
	Players    int     `json:"players"`
	// LastHeartbeat is when Redis last heard from it; HeartbeatAgeSecs how long
	// before the fleet view was read.
	LastHeartbeat    time.Time `json:"last_heartbeat"`
	HeartbeatAgeSecs float64   `json:"heartbeat_age_secs"`
	// Live is false once heartbeat_timeout passed: its players no longer count.
	Live bool `json:"live"`
	// Self marks the proxy that answered.
	Self bool `json:"self"`
}

// FleetStatus is GET /api/v1/fleet.
type FleetStatus struct {
	Enabled bool   `json:"enabled"`
	ID      string `json:"id,omitempty"`
	// Redis is the URL without its password.
	Redis     string    `json:"redis,omitempty"`
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since,omitzero"`
	LastError string    `json:"last_error,omitempty"`
	// PendingChanges counts changes made here that the fleet has not acknowledged.
	PendingChanges int `json:"pending_changes"`
	LiveProxies    int `json:"live_proxies"`
	// Players counts the players of the live proxies.
	Players int          `json:"players"`
	Proxies []FleetProxy `json:"proxies"`
	// ViewAt is when the proxies were read from Redis (old while it is unreachable).
	ViewAt time.Time `json:"view_at,omitzero"`
}

// FleetPlayer is one entry of GET /api/v1/players?fleet=true.
type FleetPlayer struct {
	Player
	// Proxy is the fleet id of the proxy the player is connected through.
	Proxy string `json:"proxy"`
}

// BanResult is the answer to adding or lifting a ban: the ban, and what the
// fleet made of the change (nil without [fleet]), so the CLI can warn when it
// did not reach the other proxies yet.
type BanResult struct {
	bans.Ban
	Fleet *FleetDelivery `json:"fleet,omitempty"`
}

func (s *Server) handleFleet(w http.ResponseWriter, _ *http.Request) {
	if s.opts.Fleet == nil {
		writeData(w, http.StatusOK, FleetStatus{Proxies: []FleetProxy{}})
		return
	}
	writeData(w, http.StatusOK, s.opts.Fleet.Status())
}

// fleetStatus is the fleet for the snapshot; nil without [fleet].
func (s *Server) fleetStatus() *FleetStatus {
	if s.opts.Fleet == nil {
		return nil
	}
	st := s.opts.Fleet.Status()
	return &st
}

// handleFleetPlayers answers GET /api/v1/players?fleet=true.
func (s *Server) handleFleetPlayers(w http.ResponseWriter, r *http.Request, server string) {
	if s.opts.Fleet == nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST",
			"this proxy is not in a fleet ([fleet] redis is not set); leave out ?fleet to list its own players")
		return
	}
	list, err := s.opts.Fleet.Players(r.Context(), server)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, ErrFleetUnreachable) {
			code = http.StatusServiceUnavailable
		}
		writeError(w, code, "UNAVAILABLE",
			fmt.Sprintf("%v; without ?fleet=true the answer lists this proxy's own players", err))
		return
	}
	if list == nil {
		list = []FleetPlayer{}
	}
	writeData(w, http.StatusOK, list)
}

// fleetQuery reads ?fleet=, refusing values that are not a boolean.
func fleetQuery(q url.Values) (bool, error) {
	switch v := q.Get("fleet"); v {
	case "":
		return false, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	default:
		return false, fmt.Errorf("fleet=%q: use fleet=true or fleet=false", v)
	}
}

// shareBackend tells the fleet about an applied backend action; nil without [fleet].
func (s *Server) shareBackend(r *http.Request, action Action, server, address string) *FleetDelivery {
	if s.opts.Fleet == nil {
		return nil
	}
	d := s.opts.Fleet.ShareBackend(r.Context(), action, server, address)
	s.logDelivery(r, string(action), server+" "+address, d)
	return &d
}

// shareMaintenance tells the fleet about a maintenance just set; nil without [fleet].
func (s *Server) shareMaintenance(r *http.Request, server string, on bool) *FleetDelivery {
	if s.opts.Fleet == nil {
		return nil
	}
	d := s.opts.Fleet.ShareMaintenance(r.Context(), server, on)
	what := "maintenance on"
	if !on {
		what = "maintenance off"
	}
	s.logDelivery(r, what, server, d)
	return &d
}

// shareBan tells the fleet about a ban just added or lifted; nil without [fleet].
func (s *Server) shareBan(r *http.Request, b bans.Ban, lifted bool) *FleetDelivery {
	if s.opts.Fleet == nil {
		return nil
	}
	d := s.opts.Fleet.ShareBan(r.Context(), b, lifted)
	what := "ban"
	if lifted {
		what = "unban"
	}
	s.logDelivery(r, what, string(b.Type)+" "+b.Value, d)
	return &d
}

func (s *Server) logDelivery(r *http.Request, action, what string, d FleetDelivery) {
	if d.Shared() {
		return
	}
	s.log.Warn("admin action not shared with the fleet yet", "action", action, "target", what,
		"fleet", d.State, "why", d.Message, "client_ip", clientIP(r))
}

// Fleet reads GET /api/v1/fleet.
func (c *Client) Fleet(ctx context.Context) (FleetStatus, error) {
	var st FleetStatus
	err := c.do(ctx, http.MethodGet, "/api/v1/fleet", nil, &st)
	return st, c.olderProxy(err, "the fleet view")
}

// FleetPlayers reads GET /api/v1/players?fleet=true (of one server, or "" for all).
func (c *Client) FleetPlayers(ctx context.Context, server string) ([]FleetPlayer, error) {
	q := url.Values{"fleet": {"true"}}
	if server != "" {
		q.Set("server", server)
	}
	var out []FleetPlayer
	err := c.do(ctx, http.MethodGet, "/api/v1/players?"+q.Encode(), nil, &out)
	return out, err
}
