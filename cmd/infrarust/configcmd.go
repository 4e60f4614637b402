package main

import (
	"fmt"
	"github.com/infrarust-go/infrarust/internal/fleet"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/forwarding"
)

func newConfigCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check or create configuration files",
	}
	cmd.AddCommand(newConfigCheckCmd(g), newConfigInitCmd(g))
	return cmd
}

// exitInvalidConfig is `config check`'s exit status for a configuration serve would refuse.
const exitInvalidConfig = 1

func newConfigCheckCmd(g *globalFlags) *cobra.Command {
	var diff bool
	var conn *adminConn
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Validate infrarust.toml and every server file; print warnings",
		Long: `Load infrarust.toml (--config) and every file in its servers_dir exactly as
'serve' would: a configuration that passes is one 'serve' starts with. Every error
of every file is listed, each with its file, line and key, and makes the command
exit 1; warnings are printed but do not fail the check.

Like 'serve', it applies the environment over the file (INFRARUST_BIND,
INFRARUST_ADMIN_BIND, INFRARUST_API_KEY[_FILE], ...: see the precedence section of
docs/configuration.md), so run it in the environment 'serve' runs in.`,
		Example: `  infrarust config check
  infrarust config check --config /etc/infrarust/infrarust.toml
  infrarust config check --diff    # what a reload would change in the running proxy`,
		Annotations: exitStatusAnnotation(exitInvalidConfig, "The configuration is invalid; every problem of every file is listed with its file, line and key"),
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig(cmd)
			if err != nil {
				return &exitError{code: exitInvalidConfig, err: fmt.Errorf("configuration is invalid (%s):\n%w", problems(err), err)}
			}
			src := cfg.Source
			if src == "" {
				src = "embedded default (no " + g.configPath + ")"
			}
			for _, w := range cfg.Warnings() {
				fmt.Fprintln(g.stdout, "warning:", w)
			}
			secret, err := checkForwardingSecret(cfg)
			if err != nil {
				return &exitError{code: exitInvalidConfig, err: fmt.Errorf("configuration is invalid (1 problem):\n%w", err)}
			}
			if cfg.Fleet.Enabled() {
				signed, err := fleet.CheckSecret(cfg.Fleet)
				switch {
				case err != nil:
					return &exitError{code: exitInvalidConfig, err: fmt.Errorf("configuration is invalid (1 problem):\n%w", err)}
				case !signed:
					fmt.Fprintln(g.stdout, "warning: [fleet] has no secret: anything that can write to the fleet's Redis drives the fleet; set [fleet] secret_file or "+config.FleetSecretEnv+" (the same on every proxy)")
				}
			}
			fmt.Fprintf(g.stdout, "ok: %s, %d server(s) from %s\n", src, len(cfg.Servers), cfg.ServersPath)
			if secret != "" {
				fmt.Fprintln(g.stdout, "forwarding secret:", secret)
			}
			for _, s := range cfg.Servers {
				fmt.Fprintf(g.stdout, "  %-16s %-16s %d address(es)  %v\n", s.ID, s.Balance, len(s.Addresses), s.Domains)
			}
			if diff {
				return printDiff(cmd, g, conn, cfg)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&diff, "diff", false, "also compare the file with the running proxy's configuration (through its admin API): each key that differs, and whether a reload applies it or it needs a restart")
	conn = addAdminFlags(cmd)
	return cmd
}

// printDiff lists the keys where the file differs from the running proxy.
func printDiff(cmd *cobra.Command, g *globalFlags, conn *adminConn, cfg *config.Config) error {
	c, err := conn.client(cmd, g)
	if err != nil {
		return err
	}
	running, err := c.Fingerprint(cmd.Context())
	if err != nil {
		return fmt.Errorf("reading the running configuration: %w", err)
	}
	changed := config.Changed(running, config.Fingerprint(cfg))
	if len(changed) == 0 {
		fmt.Fprintln(g.stdout, "the running proxy has this configuration (servers aside)")
		return nil
	}
	fmt.Fprintf(g.stdout, "differs from the running proxy (%d key(s)):\n", len(changed))
	for _, k := range changed {
		how := "a reload applies it"
		if config.NeedsRestart(k) {
			how = "needs a restart"
		}
		fmt.Fprintf(g.stdout, "  %-40s %s\n", k, how)
	}
	return nil
}

// checkForwardingSecret says where the forwarding secret comes from when a
// server needs one ("" when none does), or why serve would fail to get it.
func checkForwardingSecret(cfg *config.Config) (string, error) {
	if !cfg.NeedsForwardingSecret() {
		return "", nil
	}
	if cfg.Forwarding.Secret != "" {
		return "from " + config.ForwardingSecretEnv, nil
	}
	created, err := forwarding.CheckSecretFile(cfg.Forwarding.SecretFile)
	if err != nil {
		return "", fmt.Errorf("forwarding.secret_file: %w; point [forwarding] secret_file at a readable file, make its folder writable, or set %s (or %s_FILE)",
			err, config.ForwardingSecretEnv, config.ForwardingSecretEnv)
	}
	if created {
		return cfg.Forwarding.SecretFile + " (created at the first start; then copy it to the backends)", nil
	}
	return cfg.Forwarding.SecretFile, nil
}

// problems counts the errors joined in err, so a long list says up front how long it is.
func problems(err error) string {
	var count func(error) int
	count = func(e error) int {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			n := 0
			for _, x := range j.Unwrap() {
				n += count(x)
			}
			return n
		}
		return 1
	}
	if n := count(err); n != 1 {
		return fmt.Sprintf("%d problems", n)
	}
	return "1 problem"
}
