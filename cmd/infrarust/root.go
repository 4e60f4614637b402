package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
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

// exitUsage is the exit status of a command line that names no command (a typo
// in a script must not pass as success).
const exitUsage = 2

func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code, err = ee.code, ee.err
	}
	if err != nil && err.Error() != "" {
		printError(stderr, cmd, err)
	}
	return code
}

// printError writes err for the operator, or as a JSON error envelope (the admin
// API's shape) when the command was asked for -o json, so a script that parses the
// output can parse the failure too.
func printError(w io.Writer, cmd *cobra.Command, err error) {
	if cmd == nil || !wantsJSON(cmd) {
		fmt.Fprintln(w, "error:", err)
		return
	}
	body := admin.ErrorBody{Code: "ERROR", Message: err.Error()}
	var ae *admin.APIError
	var uc *unknownCommandError
	switch {
	case errors.As(err, &ae):
		body.Code = ae.Code
	case errors.As(err, &uc):
		body.Code = "UNKNOWN_COMMAND"
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(admin.ErrorEnvelope{Error: body})
}

// wantsJSON reports whether cmd was run with -o json.
func wantsJSON(cmd *cobra.Command) bool {
	f := cmd.Flag("output")
	return f != nil && f.Value.String() == "json"
}

// unknownCommandError is a command line naming a subcommand that does not exist.
type unknownCommandError struct {
	name, parent string
	suggestions  []string
}

func (e *unknownCommandError) Error() string {
	msg := fmt.Sprintf("unknown command %q for %q", e.name, e.parent)
	switch len(e.suggestions) {
	case 0:
		return msg + fmt.Sprintf("; run '%s --help' for the commands", e.parent)
	case 1:
		return msg + "; did you mean " + e.suggestions[0] + "?"
	}
	return msg + "; did you mean " + strings.Join(e.suggestions[:len(e.suggestions)-1], ", ") + " or " + e.suggestions[len(e.suggestions)-1] + "?"
}

// requireKnownSubcommands makes every command group (a command with subcommands
// and nothing to run itself) refuse an unknown subcommand with exit status 2 and
// a suggestion, instead of cobra's default of printing help and exiting 0. With no
// subcommand a group prints its help, as before.
func requireKnownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		requireKnownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
		return
	}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return unknownCommand(cmd, args[0])
	}
	// "bans ad --ip X": the group fails on the subcommand's flag before it sees the
	// typo; report the typo, which is the real problem.
	c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if args := cmd.Flags().Args(); cmd == c && len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return err
	})
}

// unknownCommand is the exit-2 error for a subcommand name cmd does not have.
func unknownCommand(cmd *cobra.Command, name string) error {
	return &exitError{code: exitUsage, err: &unknownCommandError{
		name: name, parent: cmd.CommandPath(), suggestions: cmd.SuggestionsFor(name)}}
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
		Version:           currentBuild().String(),
	}
	root.SetVersionTemplate("infrarust {{.Version}}\n")
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
	requireKnownSubcommands(root)
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

// minimumArgs is cobra.MinimumNArgs with exactArgs's kind of error.
func minimumArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= n {
			return nil
		}
		want := strings.Join(strings.Fields(cmd.Use)[1:], " ")
		return fmt.Errorf("%s takes %s (got %d argument(s)); see '%s --help'", cmd.CommandPath(), want, len(args), cmd.CommandPath())
	}
}

func newVersionCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date (also: infrarust --version)",
		Long: `Prints the release version, commit and build date. A binary built by 'go install'
or 'go build' reports its module version and VCS revision from the Go build info.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(g.stdout, "infrarust "+currentBuild().String())
			return nil
		},
	}
}
