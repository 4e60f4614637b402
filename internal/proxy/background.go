package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/proxy/health"
)

// HealthTargets is what the prober probes: every server of the configuration in
// force with its effective [active_health]. Call it again after every Apply.
func (p *Proxy) HealthTargets() []health.Target {
	st := p.state.Load()
	var ts []health.Target
	for _, sc := range st.cfg.Servers {
		srv := st.servers[sc.ID]
		ah := st.cfg.EffectiveActiveHealth(sc)
		if m := p.opts.Manager; m != nil && m.Managed(sc.ID) {
			// A managed server sleeps on purpose; its manager's readiness polling
			// stands in for probes, which would only eject a server that is asleep.
			ah.Enabled = false
		}
		ts = append(ts, health.Target{Server: sc.ID, Pool: srv.pool, Config: health.Config{
			Enabled: ah.Enabled, Kind: ah.Kind,
			UnhealthyInterval: ah.UnhealthyInterval.D(), Interval: ah.Interval.D(),
			Timeout: ah.Timeout.D(), ProbeHealthy: ah.ProbeHealthy,
		}})
	}
	return ts
}

// Probe is the prober's ProbeFunc: "tcp" opens and closes a connection, exactly what
// a login dial does; "status_ping" runs the whole status exchange. It speaks to the
// backend as a player's connection does: a server with send_proxy_protocol gets a
// PROXY v2 header (the LOCAL command, which marks a health check), so a backend that
// requires the header is not ejected while players get in fine.
func (p *Proxy) Probe(ctx context.Context, server string, kind health.Kind, addr string) (time.Duration, error) {
	srv := p.state.Load().servers[server]
	if srv == nil {
		return 0, fmt.Errorf("probe %s: %w %q", addr, ErrUnknownServer, server)
	}
	start := time.Now()
	c, err := p.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if srv.cfg.SendProxyProtocol {
		if _, err := c.Write(localProxyHeader()); err != nil {
			return 0, err
		}
	}
	if kind != health.KindStatusPing {
		return time.Since(start), nil
	}
	host, port := probeHost(srv.cfg, addr)
	body, rtt, err := mc.QueryStatus(c, host, port, 767)
	if err != nil && !errors.Is(err, mc.ErrNoPong) {
		return 0, err
	}
	// The answer also says how full the address is: capacity-aware picking learns it
	// from probes as well as from relayed pings.
	if st, perr := mc.ParseStatusResponse(body); perr == nil {
		srv.pool.ReportStatus(addr, st.Players.Online, st.Players.Max, p.now())
	}
	return rtt, nil
}

// probeHost is the hostname a status probe names: what a player's connection would
// carry after domain_rewrite (the server's first exact domain standing in for the
// player's), so virtual-host backends answer a probe as they answer players.
func probeHost(sc *config.Server, addr string) (string, uint16) {
	h, portStr, _ := net.SplitHostPort(addr)
	port64, _ := strconv.ParseUint(portStr, 10, 16)
	port := uint16(port64)
	for _, d := range sc.Domains {
		if !strings.ContainsAny(d, "*?") {
			h = d
			break
		}
	}
	return backendHost(sc, mc.Handshake{ServerAddress: h, ServerPort: port})
}

// RunMaintenance sweeps the rate limiter's idle buckets until ctx ends.
func (p *Proxy) RunMaintenance(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.limiter.Sweep(p.now())
			if p.checks.verify.calm(p.now()) {
				p.checks.attackChanged(false)
			}
		}
	}
}

// ProberClock gives the prober the proxy's clock, so its schedule and the pools'
// backoffs read the same time.
func (p *Proxy) ProberClock() health.Clock { return proberClock{p.now} }

type proberClock struct{ now func() time.Time }

func (c proberClock) Now() time.Time                         { return c.now() }
func (c proberClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
