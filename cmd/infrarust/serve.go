package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/app"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
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
'infrarust status ping localhost' shows a working proxy on a fresh machine; the
proxy then listens on loopback only (127.0.0.1, the configured port) unless
--bind names another address.

SIGHUP (or /infrarust reload, or 'infrarust reload') reloads infrarust.toml and
the server files without touching live sessions: a key that only a restart can
change (bind, [web], [fleet], ...) is named in the log and keeps its value; a
file with an error changes nothing. Any change in servers_dir reloads the server
files; SIGINT/SIGTERM stop accepting and give live sessions
shutdown_timeout to finish.`,
		Example: `  infrarust serve --demo
  infrarust serve --config /etc/infrarust/infrarust.toml
  infrarust serve --bind 127.0.0.1:25565 --log-level debug`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger(cmd)
			if err != nil {
				return err
			}
			cfg, err := g.loadConfig(cmd)
			if err != nil {
				return err
			}
			if bind != "" {
				if err := config.CheckBind(bind); err != nil {
					return fmt.Errorf("--bind: %w", err)
				}
				cfg.Bind = bind
			}
			ctx := cmd.Context()
			if demo && bind == "" {
				cfg.Bind = demoBind(cfg.Bind)
			}
			if demo {
				stop, err := addDemo(cfg, log)
				if err != nil {
					return err
				}
				defer stop()
			}
			// A reload reads the file again: the flags apply to it as they did here.
			override := func(c *config.Config) error {
				switch {
				case bind != "":
					c.Bind = bind
				case demo:
					c.Bind = demoBind(c.Bind)
				}
				return nil
			}
			return serve(ctx, cfg, log, override)
		},
	}
	cmd.Flags().BoolVar(&demo, "demo", false, "start three built-in sample backends, route \"localhost\" to them and listen on loopback only")
	cmd.Flags().StringVar(&bind, "bind", "", "override the bind address from the config (host:port)")
	return cmd
}

// demoBind keeps a demo off the network: the configured port on 127.0.0.1.
func demoBind(bind string) string {
	_, port, err := net.SplitHostPort(bind)
	if err != nil {
		return "127.0.0.1:25565"
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// serve runs the composition root until ctx ends; SIGHUP reloads servers_dir.
func serve(ctx context.Context, cfg *config.Config, log *slog.Logger, override func(*config.Config) error) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	build := currentBuild()
	return app.Run(ctx, app.Options{Config: cfg, Logger: log, Version: build.Version, Commit: build.Commit, Reload: hup, Override: override, RuntimeHint: true})
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
		Balance:             balance.LeastConn,
		SlowStart:           config.Duration(30 * time.Second),
		SlowStartAggression: 1,
		ProxyMode:           "passthrough",
		DomainRewrite:       config.DomainRewrite{Mode: config.RewriteNone},
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
