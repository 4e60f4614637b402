package infrarust

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/app"
	"github.com/infrarust-go/infrarust/internal/config"
)

// Main runs the proxy with r's handlers compiled in and exits: `serve` and
// `version`, with the flags of the stock binary's serve (--config, --bind,
// --log-level, --log-format). The stock `infrarust` binary remains the CLI for
// everything that talks to a running proxy (top, backends, bans, status) and for
// `config check`; it works against this one unchanged.
func Main(r *Registry) {
	os.Exit(Run(r, os.Args[1:], os.Stdout, os.Stderr))
}

// Run is Main without the exit, for tests and for programs that do more
// after the proxy stops; it returns the exit code.
func Run(r *Registry, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := rootCommand(r, stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	return 0
}

func rootCommand(r *Registry, stdout, stderr io.Writer) *cobra.Command {
	var configPath, logLevel, logFormat, bind string
	root := &cobra.Command{
		Use:           commandName(),
		Short:         "Infrarust with compiled-in extensions",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVarP(&configPath, "config", "c", "./infrarust.toml", "path to infrarust.toml (servers_dir and data_dir are resolved next to it)")
	pf.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&logFormat, "log-format", "text", "log format: text or json")

	serve := &cobra.Command{
		Use:   "serve",
		Short: "Run the proxy with the compiled-in handlers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(stderr, logLevel, logFormat)
			if err != nil {
				return err
			}
			cfg, err := config.Load(configPath, cmd.Flags().Changed("config"))
			if err != nil {
				return err
			}
			if bind != "" {
				if err := config.CheckBind(bind); err != nil {
					return fmt.Errorf("--bind: %w", err)
				}
				cfg.Bind = bind
			}
			log.Info("extension handlers compiled in", "handlers", r.Len())
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			return app.Run(cmd.Context(), app.Options{Config: cfg, Logger: log, Version: moduleVersion(), Reload: hup, Extensions: r})
		},
	}
	serve.Flags().StringVar(&bind, "bind", "", "override the bind address from the config (host:port)")
	version := &cobra.Command{
		Use:   "version",
		Short: "Print the Infrarust version this binary was built with",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(stdout, "infrarust %s with %d extension handler(s)\n", moduleVersion(), r.Len())
			return nil
		},
	}
	root.AddCommand(serve, version)
	return root
}

// moduleVersion is the version of this module the binary was built against
// ("(devel)" with a replace directive).
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, m := range bi.Deps {
		if m.Path == "github.com/infrarust-go/infrarust" {
			if m.Replace != nil {
				return m.Version + " (replaced by " + m.Replace.Path + ")"
			}
			return m.Version
		}
	}
	return bi.Main.Version
}

func commandName() string {
	if len(os.Args) == 0 {
		return "infrarust"
	}
	name := os.Args[0]
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return name
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, errors.New("--log-format " + format + ": use text or json")
}
