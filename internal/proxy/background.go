package proxy

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
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

// ReloadServers re-reads servers_dir. A file with an error keeps its previous
// version in force; a domain conflict rejects the whole reload.
func (p *Proxy) ReloadServers(reason string) error {
	cur := p.state.Load().cfg
	loaded, errs := config.LoadServersDir(cur.ServersPath, cur)
	var conflict error
	var fileErrs []error
	for _, e := range errs {
		if strings.Contains(e.Error(), "already claimed") {
			conflict = errors.Join(conflict, e)
			continue
		}
		fileErrs = append(fileErrs, e)
	}
	if conflict != nil {
		p.log.Error("reload rejected; the previous servers stay in force", "err", conflict)
		return conflict
	}
	byID := map[string]*config.Server{}
	for _, s := range loaded {
		byID[s.ID] = s
	}
	// Keep the old version of a file that exists but failed to load.
	for _, old := range cur.Servers {
		if _, ok := byID[old.ID]; ok {
			continue
		}
		builtin := strings.HasPrefix(old.File, "<") // e.g. the --demo server
		if _, err := os.Stat(filepath.Join(cur.ServersPath, old.ID+".toml")); err == nil || builtin {
			byID[old.ID] = old
		}
	}
	next := *cur
	next.Servers = make([]*config.Server, 0, len(byID))
	for _, s := range byID {
		next.Servers = append(next.Servers, s)
	}
	sortServers(next.Servers)
	if err := config.CheckDomainConflicts(next.Servers); err != nil {
		p.log.Error("reload rejected; the previous servers stay in force", "err", err)
		return err
	}
	if err := p.Apply(&next); err != nil {
		p.log.Error("reload rejected; the previous servers stay in force", "err", err)
		return err
	}
	for _, e := range fileErrs {
		p.log.Error("server file rejected; its previous version stays in force", "err", e)
	}
	ids := make([]string, 0, len(next.Servers))
	for _, s := range next.Servers {
		ids = append(ids, s.ID)
	}
	p.log.Info("servers reloaded", "reason", reason, "servers", strings.Join(ids, ","), "rejected_files", len(fileErrs))
	p.bus.Publish(events.ConfigReload, map[string]any{"reason": reason, "servers": ids, "errors": errStrings(fileErrs)})
	return errors.Join(fileErrs...)
}

func errStrings(errs []error) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// watchServers reloads when servers_dir changes, debounced so an editor's
// write-rename-chmod burst is one reload.
func (p *Proxy) watchServers(ctx context.Context) {
	dir := p.state.Load().cfg.ServersPath
	w, err := fsnotify.NewWatcher()
	if err != nil {
		p.log.Warn("cannot watch servers_dir; reload with SIGHUP", "err", err)
		return
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		p.log.Debug("servers_dir not watched (it may not exist); reload with SIGHUP", "dir", dir, "err", err)
		return
	}
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if strings.HasSuffix(ev.Name, ".toml") {
				timer = time.After(250 * time.Millisecond)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			p.log.Warn("servers_dir watch error", "err", err)
		case <-timer:
			timer = nil
			_ = p.ReloadServers("servers_dir changed")
		}
	}
}

// proberClock gives the prober the proxy's clock, so its schedule and the pools'
// backoffs read the same time.
type proberClock struct{ now func() time.Time }

func (c proberClock) Now() time.Time                         { return c.now() }
func (c proberClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
