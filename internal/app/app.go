// Package app is the composition root of `infrarust serve`: it builds the proxy,
// the server manager, the prober, the admin API, the servers_dir watcher and the
// signal handling, ties them together explicitly, and owns and waits for every
// goroutine it starts. Tests start it without cobra.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/fleet"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/logtap"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/perms"
	"github.com/infrarust-go/infrarust/internal/proxy"
	"github.com/infrarust-go/infrarust/internal/proxy/health"
	"github.com/infrarust-go/infrarust/internal/sdnotify"
	"github.com/infrarust-go/infrarust/internal/telemetry"
)

// Options are what `serve` hands the composition root.
type Options struct {
	// Config is the loaded configuration (servers included).
	Config *config.Config
	// Logger receives every component's logs; nil discards them.
	Logger *slog.Logger
	// Version and Commit are what the admin API and metrics report.
	Version, Commit string
	// Ready, when set, is told the proxy's and the admin API's actual listen
	// addresses ("" when [web] is disabled) once both accept connections, so tests
	// can bind port 0.
	Ready func(proxyAddr, adminAddr string)
	// Reload, when set, triggers a reload of servers_dir on every receive: serve
	// passes its SIGHUP channel; tests send on it directly.
	Reload <-chan os.Signal
	// RuntimeHint leaves where the admin API is and its key file for the CLI
	// (admin.WriteRuntimeHint); serve sets it, tests do not.
	RuntimeHint bool
	// Override applies the command line's settings (serve --bind) to a
	// configuration a reload read, as they were applied at start; nil: none.
	Override func(*config.Config) error
	// Extensions are event handlers compiled into the binary (the public package's
	// Main passes them); nil means none.
	Extensions *hooks.Registry
}

// App is one running `serve`: the components and the goroutines that run them.
type App struct {
	acct   accountStore // the auth limbo's accounts (accounts.go)
	passes passStore    // bot verification's passes (passes.go)
	log    *slog.Logger
	logs   *logtap.Tap // what log writes, kept for the admin API
	cfg    *config.Config
	bus    *events.Bus
	met    *metrics.Metrics
	bans   *bans.Store
	proxy  *proxy.Proxy
	mgr    *manager.Manager

	prober *health.Prober
	drains *admin.DrainStore
	maint  *admin.MaintenanceStore
	perms  perms.Store       // the roles changed at run time (perms.go)
	hooks  *hooks.Dispatcher // player events: compiled-in handlers and [[webhooks]]
	tracer *telemetry.Tracer // [telemetry]; nil when off
	rt     *runtime
	notify *sdnotify.Notifier // systemd Type=notify; does nothing outside systemd
	ready  *readiness         // GET /api/v1/ready
	disc   *discovery.Set     // discovered servers' latest lists (discovery.go); nil when none is enabled
	fleet  *fleet.Fleet       // nil without [fleet] (fleet.go)

	reloadMu sync.Mutex                 // one reload at a time (watcher, signal, tests)
	override func(*config.Config) error // Options.Override
	hint     bool                       // Options.RuntimeHint

	wg sync.WaitGroup // every goroutine the app starts
	// stopServing ends the proxy's accept loop (shutdown calls it after
	// shutdown_delay); nil before run.
	stopServing context.CancelFunc
}

// Run builds everything, serves until ctx ends, then shuts down in order: the
// proxy (live sessions get shutdown_timeout), then the managed servers (each with
// its own grace period), then the background work. It returns when every
// goroutine it started has ended.
func Run(ctx context.Context, opts Options) error {
	a, err := build(opts)
	if err != nil {
		return err
	}
	return a.run(ctx, opts)
}

func build(opts Options) (*App, error) {
	cfg := opts.Config
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// What is logged is also kept for the admin API (the log routes, the
	// dashboard's live log): the tap sees exactly what the handler writes.
	logs := logtap.New(log.Handler(), logtap.DefaultHistory)
	log = slog.New(logs)
	if cfg.Source == "" {
		log.Info("no config file found; using the embedded default (see 'infrarust config init')")
	} else {
		log.Info("configuration loaded", "file", cfg.Source, "servers", len(cfg.Servers))
	}
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	a := &App{log: log, logs: logs, cfg: cfg, override: opts.Override, hint: opts.RuntimeHint, bus: events.NewBus(), met: metrics.New(), notify: sdnotify.FromEnv(log), ready: newReadiness()}
	var err error
	if a.bans, err = openBans(cfg); err != nil {
		return nil, err
	}
	// The manager tells the app when a woken server's address is ready; the app
	// puts it into the proxy's slow start. a.proxy is set below, before the
	// manager's loops (the only callers) start in run.
	if err := a.buildFleet(opts); err != nil { // fleet.go
		return nil, err
	}
	a.mgr = manager.New(manager.Options{Bus: a.bus, Logger: log, OnReady: a.serverReady, Docker: cfg.Docker, Kubernetes: cfg.Kubernetes, Fleet: a.managerFleet(),
		ConsoleDir: filepath.Join(cfg.Web.DataDir, "server-logs")})
	if a.hooks, err = hooks.New(hooks.Options{Handlers: opts.Extensions, Webhooks: cfg.Webhooks, Logger: log, Metrics: a.met, Bus: a.bus}); err != nil {
		return nil, fmt.Errorf("[[webhooks]]: %w", err)
	}
	a.hooksConfigured()
	if a.tracer, err = telemetry.New(telemetry.Options{Config: cfg.Telemetry, Version: opts.Version, Logger: log}); err != nil {
		_ = a.hooks.Close(context.Background())
		return nil, err
	}
	a.proxy, err = proxy.New(proxy.Options{
		Config: cfg, Logger: log, Bus: a.bus, Metrics: a.met, Bans: a.bans,
		Manager: a.mgr, Version: opts.Version, Hooks: a.hooks, Tracer: a.tracer, Fleet: a.proxyFleet(), Sessions: a.proxySessions(),
		Reload: func() error { return a.Reload("/infrarust reload") }, Directory: a.proxyDirectory(),
		OpenAccounts: a.openAccounts, OpenPasses: a.openPasses,
	})
	if err != nil {
		_ = a.hooks.Close(context.Background())
		return nil, err
	}
	if err := a.openPermissions(); err != nil {
		_ = a.hooks.Close(context.Background())
		return nil, fmt.Errorf("permissions: %w", err)
	}
	if err := a.mgr.Configure(cfg.Servers); err != nil {
		log.Error("server manager configuration", "err", err)
	}
	a.prober = health.New(a.proxy.Probe, cfg.ActiveHealth.MaxConcurrent, a.proxy.ProberClock())
	a.prober.SetTargets(a.proxy.HealthTargets())
	if a.drains, err = admin.OpenDrainStore(cfg.Web.DataDir); err != nil {
		return nil, fmt.Errorf("drain store: %w (fix or move the file; it is never emptied silently)", err)
	}
	if a.maint, err = admin.OpenMaintenanceStore(cfg.Web.DataDir); err != nil {
		return nil, fmt.Errorf("maintenance store: %w", err)
	}
	return a, nil
}

// hooksConfigured makes the hook and webhook failure series exist at 0, so
// the alerts see the first failure.
func (a *App) hooksConfigured() {
	d := a.hooks.Describe()
	s := metrics.HookSeries{Handlers: d.Handlers}
	for _, w := range d.Webhooks {
		s.Webhooks = append(s.Webhooks, metrics.WebhookSeries{URL: w.URL, Events: w.Events, Notifying: w.Notifying})
	}
	a.met.HooksConfigured(s)
}

// serverSamples is every managed server's state, read by the metrics at every
// scrape.
func (a *App) serverSamples() []metrics.ServerSample {
	snap := a.mgr.Snapshot()
	out := make([]metrics.ServerSample, len(snap))
	for i, s := range snap {
		out[i] = metrics.ServerSample{Server: s.ID, State: string(s.State)}
	}
	return out
}

// serverFlags is what the maintenance and queue series read at every scrape.
func (a *App) serverFlags() metrics.ServerFlags {
	cfg := a.proxy.Config()
	ids := make([]string, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		ids = append(ids, s.ID)
	}
	return metrics.ServerFlags{Servers: ids, Maintenance: a.proxy.Maintenance(), Queues: a.proxy.QueueLengths()}
}

// backendSamples is every configured address's state, read by the metrics at every
// scrape (infrarust_backend_state).
func (a *App) backendSamples() []metrics.BackendSample {
	var out []metrics.BackendSample
	for _, v := range a.proxy.Servers(time.Now()) {
		for _, b := range v.Backends {
			out = append(out, metrics.BackendSample{Server: v.ID, Address: b.Address, State: b.State})
		}
	}
	return out
}

func (a *App) serverReady(server, address string) {
	_ = a.proxy.MarkWarming(server, address, time.Now())
}

// goroutine starts f and counts it, so shutdown can wait for it.
func (a *App) goroutine(f func()) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		f()
	}()
}

func (a *App) run(ctx context.Context, opts Options) error {
	cfg := a.cfg
	for _, d := range a.drains.Replay(a.runtime(opts.Version), time.Now()) {
		a.log.Warn("stored drain dropped: the address is no longer configured", "entry", d)
	}
	for server, addrs := range a.drains.All() {
		a.log.Info("drain replayed", "server", server, "addresses", addrs)
	}
	if ids := a.reapplyMaintenance(); len(ids) > 0 {
		a.log.Info("maintenance replayed", "servers", ids)
	}

	ln, err := proxy.Listen(ctx, cfg.Bind, cfg.Keepalive)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another server using the port? change bind or use --bind)", cfg.Bind, err)
	}

	// Background work lives until the end of shutdown, not until ctx ends: the
	// manager must still be running while the proxy's sessions drain.
	bg, stopBG := context.WithCancel(context.Background())
	defer func() {
		stopBG()
		a.wg.Wait()
	}()
	stopMetrics := a.met.SubscribeHealth(a.bus)
	defer stopMetrics()
	a.met.SetBuildInfo(opts.Version, opts.Commit)
	a.met.WatchBackends(a.backendSamples)
	states := make([]string, len(manager.States))
	for i, st := range manager.States {
		states[i] = string(st)
	}
	a.met.WatchServers(states, a.serverSamples)
	a.met.WatchServerFlags(a.serverFlags)
	a.met.WatchWebhooks(func() map[string]metrics.WebhookCounts {
		out := map[string]metrics.WebhookCounts{}
		for u, s := range a.hooks.WebhookStats() {
			out[u] = metrics.WebhookCounts{Delivered: s.Delivered, Failed: s.Failed, Retried: s.Retried, Queued: s.Queued}
		}
		return out
	})

	adminAddr, err := a.startAdmin(bg, opts.Version)
	if err != nil {
		ln.Close()
		return err
	}
	a.startFleet(bg, ln.Addr().String(), adminAddr) // fleet.go
	a.goroutine(func() { a.prober.Run(bg) })
	a.goroutine(func() { a.proxy.RunMaintenance(bg) })
	a.goroutine(func() { a.mgr.Run(bg) })
	a.goroutine(func() { a.sweepLocalStores(bg) })
	if watch := a.watchServers(); watch != nil {
		a.goroutine(func() { watch(bg) })
	}
	if opts.Reload != nil {
		a.goroutine(func() { a.reloadOn(bg, opts.Reload) })
	}
	if err := a.startDiscovery(bg); err != nil {
		ln.Close()
		return err
	}
	serveErr := make(chan error, 1)
	// The listener outlives the signal by shutdown_delay: shutdown ends serveCtx.
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	a.stopServing = stopServing
	a.goroutine(func() { serveErr <- a.proxy.Serve(serveCtx, ln) })
	a.ready.unblock("listener")
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String(), adminAddr)
	}
	_ = a.notify.Ready(fmt.Sprintf("listening on %s, %d server(s)", ln.Addr(), len(cfg.Servers)))

	var runErr error
	select {
	case runErr = <-serveErr:
	case <-ctx.Done():
	}
	a.shutdown()
	return runErr
}

// shutdown stops the proxy (sessions get shutdown_timeout), then the managed
// servers with their own grace period, whatever the sessions used.
func (a *App) shutdown() {
	_ = a.notify.Stopping("stopping: live sessions and managed servers may finish")
	a.ready.block("shutdown", "shutting down: live sessions are finishing")
	cfg := a.proxy.Config() // a reload may have changed shutdown_delay and shutdown_timeout
	if d := cfg.ShutdownDelay.D(); d > 0 {
		// Readiness is off: load balancers stop sending; players that still
		// arrive meanwhile are served.
		a.log.Info("shutting down: readiness off, still accepting for shutdown_delay", "shutdown_delay", d.String())
		time.Sleep(d)
	}
	if a.stopServing != nil {
		a.stopServing()
	}
	a.log.Info("shutting down; live sessions may finish", "shutdown_timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout.D())
	defer cancel()
	if err := a.proxy.Shutdown(sctx); err != nil {
		a.log.Warn("shutdown", "err", err)
	}
	// Each managed server gets its own grace (stop command, then its
	// shutdown_timeout, then SIGTERM/SIGKILL), never what the sessions left over.
	if err := a.mgr.Shutdown(); err != nil {
		a.log.Warn("server manager shutdown", "err", err)
	}
	a.closeLocalStores()
	// Queued notifications and spans get a short grace of their own.
	ectx, ecancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ecancel()
	_ = a.hooks.Close(ectx)
	if err := a.tracer.Shutdown(ectx); err != nil {
		a.log.Warn("trace export at shutdown", "err", err)
	}
}

func openBans(cfg *config.Config) (*bans.Store, error) {
	if err := os.MkdirAll(cfg.Web.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data_dir %s: %w", cfg.Web.DataDir, err)
	}
	s, err := bans.Open(filepath.Join(cfg.Web.DataDir, "bans.json"), time.Now())
	if err != nil {
		return nil, fmt.Errorf("bans: %w", err)
	}
	return s, nil
}

// startAdmin starts the admin API when [web] is enabled and returns the address it
// listens on ("" when disabled).
func (a *App) startAdmin(ctx context.Context, version string) (string, error) {
	cfg := a.cfg
	if !cfg.Web.Enabled {
		return "", nil
	}
	key, generated, err := admin.ResolveAPIKey(cfg.Web, os.Getenv("INFRARUST_API_KEY"))
	if err != nil {
		return "", err
	}
	srv, err := admin.NewServer(admin.ServerOptions{
		Web: cfg.Web, APIKey: key, Runtime: a.runtime(version), Bus: a.bus, Bans: a.bans,
		Metrics: a.met.Handler(), Drains: a.drains, Maintenance: a.maint, Logger: a.log, Logs: a.logs, ServerFiles: &serverFiles{a: a}, Ready: a.ready.check,
		Fleet: a.adminFleet(), Permissions: appliedPerms{a.perms, a.proxy}, Config: a.proxy.Config, Accounts: a.proxy.Accounts,
		ForgetVerified: a.proxy.ForgetVerified,
		Reload:         a.reload,
		Fingerprint:    func() map[string]string { return config.Fingerprint(a.proxy.Config()) },
	})
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", cfg.Web.Bind)
	if err != nil {
		return "", fmt.Errorf("admin API: listen on %s: %w (change [web] bind or set [web] enabled = false)", cfg.Web.Bind, err)
	}
	if generated != "" {
		if abs, err := filepath.Abs(generated); err == nil {
			generated = abs
		}
		a.log.Info("admin API key is in a file the CLI reads by itself", "file", generated)
	}
	if a.hint {
		if remove, err := admin.WriteRuntimeHint(admin.RuntimeHint{URL: "http://" + ln.Addr().String(), KeyFile: generated}); err != nil {
			a.log.Debug("no runtime hint for the CLI", "err", err)
		} else {
			context.AfterFunc(ctx, remove)
		}
	}
	a.log.Info("admin API listening", "url", "http://"+ln.Addr().String())
	a.goroutine(func() {
		if err := srv.Serve(ctx, ln); err != nil && !errors.Is(err, context.Canceled) {
			a.log.Error("admin API stopped", "err", err)
		}
	})
	return ln.Addr().String(), nil
}
