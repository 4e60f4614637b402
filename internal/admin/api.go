package admin

import (
	"context"
	"errors"
	"time"

	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// This file is the contract of the admin API: the JSON shapes the server writes,
// the client reads and `infrarust top` shows, and the Runtime the proxy implements.

// Envelope wraps every successful answer, as in the Rust Infrarust's API.
type Envelope[T any] struct {
	Data T `json:"data"`
}

// ErrorBody is the error envelope's payload.
type ErrorBody struct {
	Code    string `json:"code"` // NOT_FOUND, BAD_REQUEST, UNAUTHORIZED, CONFLICT, RATE_LIMITED, BAD_GATEWAY, INTERNAL
	Message string `json:"message"`
}

// ErrorEnvelope wraps every error answer.
type ErrorEnvelope struct {
	Error ErrorBody `json:"error"`
}

// ServerInfo is one entry of GET /api/v1/servers.
type ServerInfo struct {
	ID           string   `json:"id"`
	Domains      []string `json:"domains"`
	Strategy     string   `json:"strategy"`
	AddressCount int      `json:"address_count"`
	HealthyCount int      `json:"healthy_count"` // addresses seen working that take players (healthy, not drained)
	UnknownCount int      `json:"unknown_count"` // addresses that take players but nothing has checked yet (unknown, not drained)
	Players      int      `json:"players"`
	ProxyMode    string   `json:"proxy_mode"`
	State        string   `json:"state,omitempty"` // server manager state when managed: online|offline|sleeping|starting|stopping|crashed
	ManagerType  string   `json:"manager_type,omitempty"`
	StateReason  string   `json:"state_reason,omitempty"`
	// Maintenance: only maintenance_staff join; others wait in the limbo or are told.
	Maintenance bool `json:"maintenance,omitempty"`
}

// Backend is one address of a server as the balancer sees it.
type Backend struct {
	Address            string   `json:"address"`
	Weight             int      `json:"weight"`
	EffectiveWeight    float64  `json:"effective_weight"`
	Priority           int      `json:"priority"`
	State              string   `json:"state"`  // a balance.State: unknown|healthy|probing|unhealthy|draining; compare with BackendState()
	Health             string   `json:"health"` // the health record under a drain (a balance.State)
	ActiveConnections  int      `json:"active_connections"`
	Inflight           int      `json:"inflight"`
	Ejections          int      `json:"ejections"`
	Full               bool     `json:"full,omitempty"`
	HealthySinceSecs   *float64 `json:"healthy_since_secs,omitempty"`
	LastFailureSecsAgo *float64 `json:"last_failure_secs_ago,omitempty"`
	ConnectEWMAms      *float64 `json:"connect_ewma_ms,omitempty"`
}

// BackendFrom is the one conversion from the balancer's view of an address to
// its wire form; now turns the balancer's instants into "seconds ago".
func BackendFrom(b balance.BackendStatus, now time.Time) Backend {
	out := Backend{
		Address: b.Address, Weight: b.Weight, EffectiveWeight: b.EffectiveWeight, Priority: b.Priority,
		State: string(b.State), Health: string(b.Health), ActiveConnections: b.Active, Inflight: b.Inflight,
		Ejections: b.Ejections, Full: b.Full,
	}
	if !b.HealthySince.IsZero() {
		s := now.Sub(b.HealthySince).Seconds()
		out.HealthySinceSecs = &s
	}
	if !b.LastFailure.IsZero() {
		s := now.Sub(b.LastFailure).Seconds()
		out.LastFailureSecsAgo = &s
	}
	if b.ConnectEWMA > 0 {
		ms := float64(b.ConnectEWMA.Microseconds()) / 1000
		out.ConnectEWMAms = &ms
	}
	return out
}

// CountUnknown counts the addresses that take players without having been checked
// (unknown and not drained), the ServerInfo.UnknownCount beside HealthyCount, so a
// server whose addresses nobody has tried reads "0/1 healthy, 1 unknown" rather
// than either healthy or down.
func CountUnknown(bs []balance.BackendStatus) int {
	n := 0
	for _, b := range bs {
		if b.Health == balance.StateUnknown && !b.Drained {
			n++
		}
	}
	return n
}

// BackendState is the address's state as the balancer's typed constant, so
// callers compare with balance.StateHealthy rather than with a string.
func (b Backend) BackendState() balance.State { return balance.State(b.State) }

// HealthState is the health record under a drain, as balance's typed constant.
func (b Backend) HealthState() balance.State { return balance.State(b.Health) }

// Backends is GET /api/v1/servers/{id}/backends.
type Backends struct {
	Server   string    `json:"server"`
	Strategy string    `json:"strategy"`
	Backends []Backend `json:"backends"`
}

// Stats is the proxy-wide summary shown by `top` and sent as stats.tick.
type Stats struct {
	Bind                string    `json:"bind"`
	StartedAt           time.Time `json:"started_at"`
	UptimeSecs          float64   `json:"uptime_secs"`
	PlayersOnline       int       `json:"players_online"`
	ConnectionsActive   int64     `json:"connections_active"`
	ConnectionsAccepted uint64    `json:"connections_accepted"`
	ConnectionsRejected uint64    `json:"connections_rejected"`
	// Rates over the last stats interval, per second.
	ConnectionsPerSec float64 `json:"connections_per_sec"`
	RejectionsPerSec  float64 `json:"rejections_per_sec"`
	Version           string  `json:"version"`
}

// Action is an operator's action on one backend address. It is declared here once:
// the route's last path segment, ActionResult.Action, the CLI's subcommands and the
// dashboard's keys all use these constants.
type Action string

// The backend actions.
const (
	// ActionDrain stops new sessions to the address; current ones stay. It is stored
	// in <data_dir>/drained.json and survives restarts.
	ActionDrain Action = "drain"
	// ActionEnable lifts a drain.
	ActionEnable Action = "enable"
	// ActionReset clears failures, ejections and backoff; a drain stays.
	ActionReset Action = "reset"
)

// Actions lists the backend actions in the order help texts show them.
func Actions() []Action { return []Action{ActionDrain, ActionEnable, ActionReset} }

// Done is the action in the past tense, for "drained 10.0.0.1:25565 on lobby".
func (a Action) Done() string {
	switch a {
	case ActionDrain:
		return "drained"
	case ActionEnable:
		return "enabled"
	}
	return string(a) // "reset"
}

// ActionResult is the answer of drain/enable/reset.
type ActionResult struct {
	Server  string  `json:"server"`
	Address string  `json:"address"`
	Action  Action  `json:"action"`
	Backend Backend `json:"backend"`
	// Move is set by a drain with {"move": true}: how many players left the address.
	Move *MoveResult `json:"move,omitempty"`
	// Fleet says whether the other proxies of the [fleet] have the change; absent
	// without [fleet] (fleet.go).
	Fleet *FleetDelivery `json:"fleet,omitempty"`
}

// Snapshot is GET /api/v1/snapshot: everything `infrarust top` shows, read at one
// instant in one request, so a dashboard refresh costs one request of the
// client's rate limit instead of three.
type Snapshot struct {
	Stats    Stats               `json:"stats"`
	Servers  []ServerInfo        `json:"servers"`
	Backends map[string]Backends `json:"backends"`
	// Players is GET /api/v1/players, so the dashboard's players pane costs no
	// request of its own.
	Players []Player `json:"players"`
	// Fleet is GET /api/v1/fleet, for the dashboard's header; absent without [fleet].
	Fleet *FleetStatus `json:"fleet,omitempty"`
}

// Errors a Runtime returns so the API can answer 404 rather than 500.
var (
	ErrUnknownServer  = errors.New("unknown server")
	ErrUnknownAddress = errors.New("unknown address")
	ErrNotManaged     = errors.New("server has no [server_manager]")
)

// Runtime is what the admin API needs from the running proxy. The proxy implements
// it; tests use a fake. Addresses are normalised host:port strings.
type Runtime interface {
	PlayerRuntime
	Servers(now time.Time) []ServerInfo
	Backends(server string, now time.Time) (Backends, error)
	SetDrain(server, address string, drained bool, now time.Time) error
	Reset(server, address string, now time.Time) error
	Stats(now time.Time) Stats
	// StartServer and StopServer drive the server manager; ErrNotManaged when the
	// server has no [server_manager].
	StartServer(ctx context.Context, server string) error
	StopServer(ctx context.Context, server string) error
	// SetMaintenance puts a server in maintenance or takes it out (ErrUnknownServer).
	SetMaintenance(server string, on bool) error
}
