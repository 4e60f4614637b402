package main

import (
	"fmt"
	"net/netip"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/bans"
)

// newVerifyCmd is `infrarust verify`: bot verification's passes on a running proxy.
func newVerifyCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Forget the bot verification passes of a player or an address",
		Long: `Talks to the admin API of a running 'infrarust serve'. Servers with
limbo_handlers = ["verify"] check a first-time player in the limbo, then remember
the pass (name and address) for [verify] ttl: in <data_dir>/verify.db, or in the
fleet's Redis with [fleet]. Forgetting a pass makes that player go through the
check again at his next login. See docs/offline-networks.md.`,
		Example: `  infrarust verify forget Steve
  infrarust verify forget 203.0.113.7`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)
	cmd.AddCommand(&cobra.Command{
		Use:   "forget NAME|IP",
		Short: "Drop the passes of a player name (from any address) or of an IP address (for any name)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			who := args[0]
			if _, err := netip.ParseAddr(who); err != nil {
				if err := bans.ValidUsername(who); err != nil {
					return fmt.Errorf("%q is neither an IP address nor a player name", who)
				}
			}
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			res, err := c.ForgetVerified(cmd.Context(), who)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), res)
			}
			if res.Forgotten == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no pass of %s was kept\n", who)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "forgot %d pass(es) of %s; checked again at the next login\n", res.Forgotten, who)
			return nil
		},
	})
	return cmd
}
