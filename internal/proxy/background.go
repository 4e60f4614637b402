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

// healthTargets is what the prober probes: every server with its effective [active_health].
func (p *Proxy) healthTargets(st *state) []health.Target {
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
			Enabled: ah.Enabled, Kind: health.Kind(ah.Kind),
			UnhealthyInterval: ah.UnhealthyInterval.D(), Interval: ah.Interval.D(),
			Timeout: ah.Timeout.D(), ProbeHealthy: ah.ProbeHealthy,
		}})
	}
	return ts
}

// probe is the prober's ProbeFunc: "tcp" opens and closes a connection, exactly what
// a login dial does; "status_ping" runs the whole status exchange.
func (p *Proxy) probe(ctx context.Context, kind health.Kind, addr string) (time.Duration, error) {
	start := time.Now()
	c, err := backendDialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if kind != "status_ping" {
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

// RunBackground runs the prober, the rate-limiter sweep and the servers_dir watcher
// until ctx ends.
func (p *Proxy) RunBackground(ctx context.Context) {
	prober := health.New(p.probe, p.state.Load().cfg.ActiveHealth.MaxConcurrent, proberClock{p.now})
	p.reload.Lock()
	p.prober = prober
	prober.SetTargets(p.healthTargets(p.state.Load()))
	p.reload.Unlock()

	done := make(chan struct{})
	go func() { defer close(done); prober.Run(ctx) }()
	go p.watchServers(ctx)

	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			<-done
			return
		case <-t.C:
			p.limiter.Sweep(p.now())
		}
	}
}

// proberClock gives the prober the proxy's clock, so its schedule and the pools'
// backoffs read the same time.
type proberClock struct{ now func() time.Time }

func (c proberClock) Now() time.Time                         { return c.now() }
func (c proberClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
