package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/proxy"
)

// startAdmin replays stored drains, points the metrics at the running proxy (build
// info, per-backend state read at every scrape) and starts the admin API when [web]
// is enabled. It returns a function that stops the API and the address the API
// listens on ("" when [web] is disabled).
func startAdmin(ctx context.Context, cfg *config.Config, p *proxy.Proxy, mgr *manager.Manager, bus *events.Bus, met *metrics.Metrics, banStore *bans.Store, log *slog.Logger) (func(), string, error) {
	build := currentBuild()
	rt := &proxyRuntime{Proxy: p, Manager: mgr, Version: build.Version, Bind: cfg.Bind}
	met.SetBuildInfo(build.Version, build.Commit)
	met.WatchBackends(func() []metrics.BackendSample { return backendSamples(rt, time.Now()) })
	drains, err := admin.OpenDrainStore(cfg.Web.DataDir)
	if err != nil {
		return nil, "", fmt.Errorf("drain store: %w (fix or move the file; it is never emptied silently)", err)
	}
	for _, d := range drains.Replay(rt, time.Now()) {
		log.Warn("stored drain dropped: the address is no longer configured", "entry", d)
	}
	for server, addrs := range drains.All() {
		log.Info("drain replayed", "server", server, "addresses", addrs)
	}
	stopMetrics := met.SubscribeHealth(bus)
	if !cfg.Web.Enabled {
		return stopMetrics, "", nil
	}
	key, generated, err := admin.ResolveAPIKey(cfg.Web, os.Getenv("INFRARUST_API_KEY"))
	if err != nil {
		stopMetrics()
		return nil, "", err
	}
	srv, err := admin.NewServer(admin.ServerOptions{
		Web: cfg.Web, APIKey: key, Runtime: rt, Bus: bus, Bans: banStore,
		Metrics: met.Handler(), Drains: drains, Logger: log,
	})
	if err != nil {
		stopMetrics()
		return nil, "", err
	}
	ln, err := net.Listen("tcp", cfg.Web.Bind)
	if err != nil {
		stopMetrics()
		return nil, "", fmt.Errorf("admin API: listen on %s: %w (change [web] bind or set [web] enabled = false)", cfg.Web.Bind, err)
	}
	if generated != "" {
		log.Info("admin API key is in a file the CLI reads by itself", "file", generated)
	}
	log.Info("admin API listening", "url", "http://"+ln.Addr().String())
	actx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(actx, ln); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("admin API stopped", "err", err)
		}
	}()
	return func() { cancel(); <-done; stopMetrics() }, ln.Addr().String(), nil
}

// backendSamples is every configured address's state, for infrarust_backend_state.
func backendSamples(rt admin.Runtime, now time.Time) []metrics.BackendSample {
	var out []metrics.BackendSample
	for _, srv := range rt.Servers(now) {
		b, err := rt.Backends(srv.ID, now)
		if err != nil {
			continue // removed by a reload between the two calls
		}
		for _, be := range b.Backends {
			out = append(out, metrics.BackendSample{Server: srv.ID, Address: be.Address, State: be.BackendState()})
		}
	}
	return out
}
