package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/config"
)

// Set through -ldflags by goreleaser; `infrarust version` shows them.
var (
	version = "dev"
	commit  = "none"
	date    = "unknown"
)

// Environment variables behind the global flags, for containers; a flag given on
// the command line wins over them (docs/configuration.md, "Precedence").
const (
	envConfig    = "INFRARUST_CONFIG"
	envLogLevel  = "INFRARUST_LOG_LEVEL"
	envLogFormat = "INFRARUST_LOG_FORMAT"
)

// systemConfig is where the packages and the container image put infrarust.toml.
const systemConfig = "/etc/infrarust/infrarust.toml"

// globalFlags are the flags every command understands.
type globalFlags struct {
	configPath string
	logLevel   string
	logFormat  string
	stdout     io.Writer
	stderr     io.Writer
	// systemConfig is the fallback config path; a field so tests can move it.
	systemConfig string
	// getenv reads the environment; a field so tests can give their own.
	getenv func(string) string
}

// exitError carries a specific exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.err != nil && ee.err.Error() != "" {
				fmt.Fprintln(stderr, "error:", ee.err)
			}
			return ee.code
		}
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	return 0
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	g := &globalFlags{stdout: stdout, stderr: stderr, systemConfig: systemConfig, getenv: os.Getenv}
	root := &cobra.Command{
		Use:   "infrarust",
		Short: "A Minecraft reverse proxy that routes players by hostname and balances logins",
		Long: `Infrarust routes Minecraft Java players by the hostname they typed to a configured
server, balances logins across that server's addresses, keeps failing addresses out of
rotation, and forwards bytes at kernel speed.

Start with 'infrarust serve --demo' to see it work with built-in sample backends.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		DisableAutoGenTag: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.configPath, "config", "c", "", "path to infrarust.toml; servers_dir and data_dir are resolved next to it (default: $"+envConfig+", else ./infrarust.toml, else "+systemConfig+" when it exists)")
	pf.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error ($"+envLogLevel+")")
	pf.StringVar(&g.logFormat, "log-format", "text", "log format: text or json ($"+envLogFormat+")")
	_ = root.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions([]string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))

	for _, c := range commands(g) {
		root.AddCommand(c)
	}
	return root
}

// resolveConfig picks infrarust.toml and stores it in g.configPath: --config, else
// $INFRARUST_CONFIG (a file the operator named must exist: explicit is true), else
// ./infrarust.toml, else /etc/infrarust/infrarust.toml when it exists, else
// ./infrarust.toml again, which Load replaces with the embedded default.
func (g *globalFlags) resolveConfig(cmd *cobra.Command) (explicit bool) {
	if cmd.Flags().Changed("config") {
		return true
	}
	if p := strings.TrimSpace(g.env(envConfig)); p != "" {
		g.configPath = p
		return true
	}
	if g.configPath == "" {
		g.configPath = "./infrarust.toml"
	}
	if _, err := os.Stat(g.configPath); err != nil && g.systemConfig != "" {
		if _, err := os.Stat(g.systemConfig); err == nil {
			g.configPath = g.systemConfig
		}
	}
	return false
}

// env reads an environment variable through g.getenv (os.Getenv when unset).
func (g *globalFlags) env(name string) string {
	if g.getenv == nil {
		return os.Getenv(name)
	}
	return g.getenv(name)
}

// loadConfig loads the configuration the command was pointed at.
func (g *globalFlags) loadConfig(cmd *cobra.Command) (*config.Config, error) {
	explicit := g.resolveConfig(cmd)
	return config.Load(g.configPath, explicit)
}

// setting is a global flag's value: the flag when given, else its environment
// variable when set, else the flag's default; source names it for errors.
func (g *globalFlags) setting(cmd *cobra.Command, flag, env, value string) (v, source string) {
	if !cmd.Flags().Changed(flag) {
		if e := strings.TrimSpace(g.env(env)); e != "" {
			return e, env
		}
	}
	return value, "--" + flag
}

// logger builds the slog logger from --log-level and --log-format (or their
// environment variables).
func (g *globalFlags) logger(cmd *cobra.Command) (*slog.Logger, error) {
	level, levelSrc := g.setting(cmd, "log-level", envLogLevel, g.logLevel)
	format, formatSrc := g.setting(cmd, "log-format", envLogFormat, g.logFormat)
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%s %q: use debug, info, warn or error", levelSrc, level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(g.stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(g.stderr, opts)), nil
	}
	return nil, fmt.Errorf("%s %q: use text or json", formatSrc, format)
}

// exactArgs is cobra.ExactArgs with an error that names the arguments the command's
// Use line asks for and where to read more, rather than "accepts 2 arg(s)".
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		want := strings.Join(strings.Fields(cmd.Use)[1:], " ")
		return fmt.Errorf("%s takes %s (got %d argument(s)); see '%s --help'", cmd.CommandPath(), want, len(args), cmd.CommandPath())
	}
}

func newVersionCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(g.stdout, "infrarust %s (commit %s, built %s)\n", version, commit, date)
			return nil
		},
	}
}
