package proxy

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

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
// a login dial does; "status_ping" runs the whole status exchange.
func (p *Proxy) Probe(ctx context.Context, kind health.Kind, addr string) (time.Duration, error) {
	start := time.Now()
	c, err := p.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if kind != health.KindStatusPing {
		return time.Since(start), nil
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	host, port, _ := net.SplitHostPort(addr)
	portNum, _ := strconv.ParseUint(port, 10, 16)
	body, rtt, err := mc.QueryStatus(c, host, uint16(portNum), 767)
	if err != nil && !errors.Is(err, mc.ErrNoPong) {
		return 0, err
	}
	// The answer also says how full the address is: capacity-aware picking learns it
	// from probes as well as from relayed pings.
	if st, perr := mc.ParseStatusResponse(body); perr == nil {
		for _, srv := range p.state.Load().servers {
			srv.pool.ReportStatus(addr, st.Players.Online, st.Players.Max, p.now())
		}
	}
	return rtt, nil
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
		}
	}
}

// ProberClock gives the prober the proxy's clock, so its schedule and the pools'
// backoffs read the same time.
func (p *Proxy) ProberClock() health.Clock { return proberClock{p.now} }

type proberClock struct{ now func() time.Time }

func (c proberClock) Now() time.Time                         { return c.now() }
func (c proberClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
