package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// newReloadCmd is `infrarust reload`: what SIGHUP does, through the admin API.
func newReloadCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reload",
		Short: "Reload infrarust.toml and the server files of a running proxy (as SIGHUP does)",
		Long: `Talks to the admin API of a running 'infrarust serve' and makes it read
infrarust.toml and servers_dir again. Every key that can change live does at once
(commands, permissions, messages, rate limits, IP filters, verify and auth settings,
webhooks, the forwarding secret, ...); players stay connected. A key only a restart
changes (bind, [web], [fleet], [telemetry], discovery, ...) is listed and keeps its
running value. A file with an error changes nothing. 'infrarust config check --diff'
shows what a reload would change before you make it.`,
		Example: `  infrarust reload
  infrarust config check --diff && infrarust reload`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := conn.client(cmd, g)
		if err != nil {
			return err
		}
		res, err := c.Reload(cmd.Context())
		if err != nil {
			return err
		}
		if output == "json" {
			return printJSON(cmd.OutOrStdout(), res)
		}
		printReload(cmd, res)
		return nil
	}
	return cmd
}

func printReload(cmd *cobra.Command, res admin.ReloadResult) {
	w := cmd.OutOrStdout()
	if len(res.Changed) == 0 {
		fmt.Fprintln(w, "reloaded: no key of infrarust.toml changed")
	} else {
		fmt.Fprintf(w, "reloaded: %s\n", strings.Join(res.Changed, ", "))
	}
	if len(res.Restart) > 0 {
		fmt.Fprintf(w, "needs a restart (running values kept): %s\n", strings.Join(res.Restart, ", "))
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "server file refused (its previous version stays): %s\n", e)
	}
}
