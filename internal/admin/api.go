package admin

import (
	"context"
	"errors"
	"time"
)

// This file is the contract of the admin API: the JSON shapes the server writes,
// the client reads and `infrarust top` shows, and the Runtime the proxy implements.

// Envelope wraps every successful answer, as in the Rust Infrarust's API.
type Envelope[T any] struct {
	Data T `json:"data"`
}

// ErrorBody is the error envelope's payload.
type ErrorBody struct {
	Code    string `json:"code"` // NOT_FOUND, BAD_REQUEST, UNAUTHORIZED, RATE_LIMITED, INTERNAL
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
	HealthyCount int      `json:"healthy_count"`
	Players      int      `json:"players"`
	ProxyMode    string   `json:"proxy_mode"`
	State        string   `json:"state,omitempty"` // server manager state when managed: online|offline|sleeping|starting|stopping|crashed
	ManagerType  string   `json:"manager_type,omitempty"`
	StateReason  string   `json:"state_reason,omitempty"`
}

// Backend is one address of a server as the balancer sees it.
type Backend struct {
	Address            string   `json:"address"`
	Weight             int      `json:"weight"`
	EffectiveWeight    float64  `json:"effective_weight"`
	Priority           int      `json:"priority"`
	State              string   `json:"state"`  // healthy|probing|unhealthy|draining
	Health             string   `json:"health"` // the health record under a drain: healthy|probing|unhealthy
	ActiveConnections  int      `json:"active_connections"`
	Inflight           int      `json:"inflight"`
	Ejections          int      `json:"ejections"`
	Full               bool     `json:"full,omitempty"`
	HealthySinceSecs   *float64 `json:"healthy_since_secs,omitempty"`
	LastFailureSecsAgo *float64 `json:"last_failure_secs_ago,omitempty"`
	ConnectEWMAms      *float64 `json:"connect_ewma_ms,omitempty"`
}

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

// ActionResult is the answer of drain/enable/reset.
type ActionResult struct {
	Server  string  `json:"server"`
	Address string  `json:"address"`
	Action  string  `json:"action"`
	Backend Backend `json:"backend"`
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
	Servers(now time.Time) []ServerInfo
	Backends(server string, now time.Time) (Backends, error)
	SetDrain(server, address string, drained bool, now time.Time) error
	Reset(server, address string, now time.Time) error
	Stats(now time.Time) Stats
	// StartServer and StopServer drive the server manager; ErrNotManaged when the
	// server has no [server_manager].
	StartServer(ctx context.Context, server string) error
	StopServer(ctx context.Context, server string) error
}
