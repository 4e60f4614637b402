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

// globalFlags are the flags every command understands.
type globalFlags struct {
	configPath string
	logLevel   string
	logFormat  string
	stdout     io.Writer
	stderr     io.Writer
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
	g := &globalFlags{stdout: stdout, stderr: stderr}
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
	pf.StringVarP(&g.configPath, "config", "c", "./infrarust.toml", "path to infrarust.toml (servers_dir and data_dir are resolved next to it)")
	pf.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
	_ = root.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions([]string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))

	for _, c := range commands(g) {
		root.AddCommand(c)
	}
	return root
}

// configExplicit reports whether the operator named a config file, in which case a
// missing file is an error rather than a reason to use the embedded default.
func (g *globalFlags) configExplicit(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("config")
}

// loadConfig loads the configuration the command was pointed at.
func (g *globalFlags) loadConfig(cmd *cobra.Command) (*config.Config, error) {
	return config.Load(g.configPath, g.configExplicit(cmd))
}

// logger builds the slog logger from --log-level and --log-format.
func (g *globalFlags) logger() (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", g.logLevel)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(g.logFormat) {
	case "text":
		return slog.New(slog.NewTextHandler(g.stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(g.stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", g.logFormat)
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
