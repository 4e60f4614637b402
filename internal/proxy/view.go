package proxy

import (
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// ServerView is a read-only look at one server for the admin API and the manager.
type ServerView struct {
	ID      string
	Config  *config.Server
	Pool    *balance.Pool
	Players int
}

// Servers lists the configured servers in id order.
func (p *Proxy) Servers() []ServerView {
	st := p.state.Load()
	out := make([]ServerView, 0, len(st.cfg.Servers))
	for _, sc := range st.cfg.Servers {
		srv := st.servers[sc.ID]
		out = append(out, ServerView{ID: sc.ID, Config: srv.cfg, Pool: srv.pool, Players: int(srv.players.Load())})
	}
	return out
}

// Server looks one server up by id.
func (p *Proxy) Server(id string) (ServerView, bool) {
	srv, ok := p.state.Load().servers[id]
	if !ok {
		return ServerView{}, false
	}
	return ServerView{ID: id, Config: srv.cfg, Pool: srv.pool, Players: int(srv.players.Load())}, true
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
	c := Counters{StartedAt: p.startedAt, Accepted: p.accepted.Load(), Rejected: p.rejected.Load(), Active: p.active.Load()}
	for _, srv := range p.state.Load().servers {
		c.Players += int(srv.players.Load())
	}
	return c
}
