package proxy

import (
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/ipfilter"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// server is the runtime of one servers/*.toml: its config of the moment and the
// state that survives reloads (pool, status cache, player count).
type server struct {
	id      string
	cfg     *config.Server
	pool    *balance.Pool
	cache   *statusCache
	players *atomic.Int64
	filter  *ipfilter.Filter
	full    []string // lowercased full_kick_patterns
}

// Apply installs a configuration: new servers start fresh, servers that stay keep
// their pool state (health, counts, drain), removed servers are forgotten. Live
// sessions are untouched: they hold the server they were routed to.
func (p *Proxy) Apply(cfg *config.Config) error {
	p.reload.Lock()
	defer p.reload.Unlock()

	filter, err := ipfilter.New(cfg.IPFilter.Allow, cfg.IPFilter.Deny)
	if err != nil {
		return fmt.Errorf("[ip_filter]: %w", err)
	}
	var trusted []netip.Prefix
	for _, s := range cfg.TrustedProxies {
		pfx, err := ipfilter.ParsePrefix(s)
		if err != nil {
			return fmt.Errorf("trusted_proxies: %w", err)
		}
		trusted = append(trusted, pfx)
	}
	if err := p.moves.prepareForwarding(cfg); err != nil {
		return err
	}
	old := p.state.Load()
	next := &state{cfg: cfg, servers: map[string]*server{}, filter: filter, trusted: trusted, names: cfg.NameRule()}
	domains := map[string]string{}
	for _, sc := range cfg.Servers {
		srv, err := p.buildServer(cfg, sc, old, p.now)
		if err != nil {
			return err
		}
		next.servers[sc.ID] = srv
		for _, d := range sc.Domains {
			domains[d] = sc.ID
		}
	}
	next.router = newRouter(domains)
	if next.commands, err = p.cmds.buildCommands(cfg); err != nil {
		return fmt.Errorf("[commands]: %w", err)
	}
	if next.auth, err = p.checks.buildAuth(cfg, old); err != nil {
		return err
	}
	if next.premium, err = buildPremium(cfg, old, p.now); err != nil {
		return err
	}
	p.checks.openPasses(cfg)
	next.policy = p.moves.sessionPolicy(next)
	if old != nil {
		for id := range old.servers {
			if _, ok := next.servers[id]; !ok {
				p.met.ForgetServer(id)
			}
		}
	}
	p.limiter.SetConfig(rateLimitConfig(cfg.RateLimit))
	p.state.Store(next)
	p.seriesAtZero(cfg)
	p.cmds.recompilePermissions()
	return nil
}

// seriesAtZero makes the configured servers' failure series exist before the
// first failure, for the alerts (metrics/known.go).
func (p *Proxy) seriesAtZero(cfg *config.Config) {
	servers := make(map[string][]string, len(cfg.Servers))
	var managed []string
	for _, sc := range cfg.Servers {
		for _, a := range sc.Addresses {
			servers[sc.ID] = append(servers[sc.ID], a.Address)
		}
		if _, ok := servers[sc.ID]; !ok {
			servers[sc.ID] = nil
		}
		if sc.ServerManager != nil {
			managed = append(managed, sc.ID)
		}
	}
	p.met.ServersConfigured(servers, managed)
}

func (p *Proxy) buildServer(cfg *config.Config, sc *config.Server, old *state, now func() time.Time) (*server, error) {
	filter, err := ipfilter.New(sc.IPFilter.Allow, sc.IPFilter.Deny)
	if err != nil {
		return nil, fmt.Errorf("%s: ip_filter: %w", sc.File, err)
	}
	strategy, err := balance.ParseStrategy(string(sc.Balance))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.File, err)
	}
	addrs := make([]balance.Address, len(sc.Addresses))
	for i, a := range sc.Addresses {
		addrs[i] = balance.Address{Address: a.Address, Weight: a.Weight, Priority: a.Priority}
	}
	ah := cfg.EffectiveActiveHealth(sc)
	id := sc.ID
	opts := balance.Options{
		Strategy:            strategy,
		SlowStart:           sc.SlowStart.D(),
		SlowStartAggression: sc.SlowStartAggression,
		DegradedLatency:     sc.DegradedLatency.D(),
		ActiveProbing:       ah.Enabled,
		OnChange: func(ch balance.Change) {
			p.bus.Publish(events.BackendHealthChange, events.HealthChange{
				Server: id, Address: ch.Address, From: string(ch.From), To: string(ch.To), Reason: ch.Reason,
			})
			level := p.log.Info
			if ch.To == balance.StateUnhealthy {
				level = p.log.Warn
			}
			level("backend state changed", "server", id, "address", ch.Address, "from", ch.From, "to", ch.To, "reason", ch.Reason)
		},
	}
	srv := &server{id: id, cfg: sc, filter: filter}
	for _, pat := range sc.FullKickPatterns {
		srv.full = append(srv.full, strings.ToLower(pat))
	}
	var prev *server
	if old != nil {
		prev = old.servers[id]
	}
	if prev != nil {
		srv.pool, srv.cache, srv.players = prev.pool, prev.cache, prev.players
		for _, a := range prev.cfg.Addresses {
			if !hasAddress(sc, a.Address) {
				p.met.ForgetAddress(id, a.Address)
			}
		}
		srv.pool.Update(opts, addrs, now())
		srv.cache.configure(cfg.StatusCache)
	} else {
		srv.pool = balance.NewPool(opts, addrs, now())
		srv.cache = newStatusCache(cfg.StatusCache)
		srv.players = new(atomic.Int64)
	}
	return srv, nil
}

func hasAddress(sc *config.Server, addr string) bool {
	for _, a := range sc.Addresses {
		if a.Address == addr {
			return true
		}
	}
	return false
}
