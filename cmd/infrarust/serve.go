package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/proxy"
)

func newServeCmd(g *globalFlags) *cobra.Command {
	var demo bool
	var bind string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the proxy",
		Long: `Run the proxy: accept Minecraft connections on bind, route each player by the
hostname they typed to a server from servers_dir, and forward the session.

Without a config file the embedded default is used. --demo starts three sample
backends on loopback and routes "localhost" to them, so
'infrarust status ping localhost' shows a working proxy on a fresh machine.

SIGHUP (or any change in servers_dir) reloads the server files without touching
live sessions; SIGINT/SIGTERM stop accepting and give live sessions
shutdown_timeout to finish.`,
		Example: `  infrarust serve --demo
  infrarust serve --config /etc/infrarust/infrarust.toml
  infrarust serve --bind 127.0.0.1:25565 --log-level debug`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			cfg, err := g.loadConfig(cmd)
			if err != nil {
				return err
			}
			if bind != "" {
				cfg.Bind = bind
			}
			ctx := cmd.Context()
			if demo {
				stop, err := addDemo(cfg, log)
				if err != nil {
					return err
				}
				defer stop()
			}
			return serve(ctx, cfg, log)
		},
	}
	cmd.Flags().BoolVar(&demo, "demo", false, "start three built-in sample backends and route \"localhost\" to them")
	cmd.Flags().StringVar(&bind, "bind", "", "override the bind address from the config (host:port)")
	return cmd
}

// serve wires the proxy, its background work and the admin API, and runs until ctx ends.
func serve(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	return serveReady(ctx, cfg, log, nil)
}

// serveReady is serve that, once both listeners accept connections, tells ready the
// proxy's and the admin API's actual addresses ("" when [web] is disabled), so
// tests can bind port 0.
func serveReady(ctx context.Context, cfg *config.Config, log *slog.Logger, ready func(proxyAddr, adminAddr string)) error {
	if cfg.Source == "" {
		log.Info("no config file found; using the embedded default (see 'infrarust config init')")
	} else {
		log.Info("configuration loaded", "file", cfg.Source, "servers", len(cfg.Servers))
	}
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	bus := events.NewBus()
	met := metrics.New()
	banStore, err := openBans(cfg)
	if err != nil {
		return err
	}
	var p *proxy.Proxy
	mgr := manager.New(manager.Options{Bus: bus, Logger: log, OnReady: func(server, address string) {
		// A woken server's addresses ramp up through slow start.
		if v, ok := p.Server(server); ok {
			_ = v.Pool.MarkWarming(address, time.Now())
		}
	}})
	p, err = proxy.New(proxy.Options{Config: cfg, Logger: log, Bus: bus, Metrics: met, Bans: banStore, Manager: mgr, Version: version})
	if err != nil {
		return err
	}
	// Keepalive is set per session by the proxy (from [keepalive]), not at accept.
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(ctx, "tcp", cfg.Bind)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another server using the port? change bind or use --bind)", cfg.Bind, err)
	}
	bg, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	go p.RunBackground(bg)
	go mgr.Run(bg)
	stopAdmin, adminAddr, err := startAdmin(bg, cfg, p, mgr, bus, met, banStore, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopAdmin()
	if ready != nil {
		ready(ln.Addr().String(), adminAddr)
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-hup:
				_ = p.ReloadServers("SIGHUP")
			case <-bg.Done():
				return
			}
		}
	}()

	serveErr := make(chan error, 1)
	go func() { serveErr <- p.Serve(ctx, ln) }()
	select {
	case err := <-serveErr:
		if err != nil {
			return err
		}
	case <-ctx.Done():
	}
	log.Info("shutting down; live sessions may finish", "shutdown_timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout.D())
	defer cancel()
	if err := p.Shutdown(sctx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	if err := mgr.Shutdown(); err != nil { // each server gets its own grace, not what sctx has left
		log.Warn("server manager shutdown", "err", err)
	}
	return nil
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

// addDemo starts three sample backends and a server "demo" that routes localhost to them.
func addDemo(cfg *config.Config, log *slog.Logger) (func(), error) {
	var backends []*fakemc.Server
	stop := func() {
		for _, b := range backends {
			b.Close()
		}
	}
	srv := &config.Server{
		ID: "demo", File: "<demo>", Name: "demo",
		Domains:             []string{"localhost", "127.0.0.1", "demo.localhost"},
		Balance:             "least_conn",
		SlowStart:           config.Duration(30 * time.Second),
		SlowStartAggression: 1,
		ProxyMode:           "passthrough",
		DomainRewrite:       config.DomainRewrite{Mode: "none"},
		DisconnectMessage:   "§cEvery demo backend is down",
		FullKickPatterns:    config.DefaultFullKickPatterns,
	}
	for _, name := range []string{"demo-a", "demo-b", "demo-c"} {
		b, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: name, MOTD: "§aInfrarust demo§r — answered by §e" + name, Max: 100, Legacy: true})
		if err != nil {
			stop()
			return nil, fmt.Errorf("demo backend: %w", err)
		}
		backends = append(backends, b)
		srv.Addresses = append(srv.Addresses, config.Address{Address: b.Addr(), Weight: 1})
		log.Info("demo backend started", "name", name, "address", b.Addr())
	}
	for _, s := range cfg.Servers {
		for _, d := range s.Domains {
			for _, dd := range srv.Domains {
				if d == dd {
					stop()
					return nil, errors.New("--demo routes localhost, but server " + s.ID + " already claims " + d)
				}
			}
		}
	}
	cfg.Servers = append(cfg.Servers, srv)
	return stop, nil
}
