package proxy

import (
	"errors"
	"fmt"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// ErrUnknownServer is returned for a server id the configuration in force does not have.
var ErrUnknownServer = errors.New("unknown server")

// ServerView is a read-only look at one server for the admin API and the CLI. It
// is a copy: changing a backend goes through the Proxy's operations, never through
// the view.
type ServerView struct {
	ID       string
	Config   *config.Server // shared and never modified once loaded
	Strategy balance.Strategy
	Players  int
	Backends []balance.BackendStatus
}

// Servers lists the configured servers in id order, as of now.
func (p *Proxy) Servers(now time.Time) []ServerView {
	st := p.state.Load()
	out := make([]ServerView, 0, len(st.cfg.Servers))
	for _, sc := range st.cfg.Servers {
		out = append(out, st.servers[sc.ID].view(now))
	}
	return out
}

// Server looks one server up by id.
func (p *Proxy) Server(id string, now time.Time) (ServerView, bool) {
	srv, ok := p.state.Load().servers[id]
	if !ok {
		return ServerView{}, false
	}
	return srv.view(now), true
}

func (srv *server) view(now time.Time) ServerView {
	return ServerView{
		ID: srv.id, Config: srv.cfg, Strategy: srv.pool.Strategy(),
		Players: int(srv.players.Load()), Backends: srv.pool.Snapshot(now),
	}
}

// SetDrain drains an address (no new sessions, existing ones stay) or lifts the drain.
func (p *Proxy) SetDrain(server, address string, drained bool, now time.Time) error {
	return p.withPool(server, func(pool *balance.Pool) error { return pool.SetDrain(address, drained, now) })
}

// ResetBackend clears an address's failures, ejections and backoff; a drain stays.
func (p *Proxy) ResetBackend(server, address string, now time.Time) error {
	return p.withPool(server, func(pool *balance.Pool) error { return pool.Reset(address, now) })
}

// MarkWarming puts an address that just became ready (a woken server) into slow start.
func (p *Proxy) MarkWarming(server, address string, now time.Time) error {
	return p.withPool(server, func(pool *balance.Pool) error { return pool.MarkWarming(address, now) })
}

func (p *Proxy) withPool(server string, op func(*balance.Pool) error) error {
	srv, ok := p.state.Load().servers[server]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownServer, server)
	}
	return op(srv.pool)
}

// Config is the configuration in force.
func (p *Proxy) Config() *config.Config { return p.state.Load().cfg }

// Counters are the proxy-wide totals since start.
type Counters struct {
	StartedAt time.Time
	Accepted  uint64
	Rejected  uint64
	Active    int64
	Players   int
}

// Counters reads the totals.
func (p *Proxy) Counters() Counters {
	c := Counters{StartedAt: p.startedAt, Accepted: p.door.accepted.Load(), Rejected: p.door.rejected.Load(), Active: p.door.active.Load()}
	for _, srv := range p.state.Load().servers {
		c.Players += int(srv.players.Load())
	}
	return c
}

// Serving counts the addresses that take new players now: healthy and not drained.
func (v ServerView) Serving() int {
	n := 0
	for _, b := range v.Backends {
		if b.Health == balance.StateHealthy && !b.Drained {
			n++
		}
	}
	return n
}
