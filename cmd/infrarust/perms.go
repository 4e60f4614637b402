package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// newPermsCmd is `infrarust perms`: who is an admin of the in-game commands.
func newPermsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "perms",
		Short: "List, add and remove admins of the in-game commands on a running proxy",
		Long: `Talks to the admin API of a running 'infrarust serve'. An admin may use every proxy
command in the game (/send, /kick, /broadcast, ...); everyone else has [permissions]
player_commands. Admins added here are kept in <data_dir>/admins.json, beside the
[permissions] admins of the file, and take effect at once. An admin is recognised only
on a client_only (Mojang-authenticated) login unless trust_offline_admins is set.`,
		Example: `  infrarust perms list
  infrarust perms op Steve
  infrarust perms op 069a79f4-44e9-4726-a5be-fca90e38aaf5
  infrarust perms deop Steve`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)
	print := func(w io.Writer, v admin.AdminsView) error {
		if output == "json" {
			return printJSON(w, v)
		}
		fmt.Fprintf(w, "configured ([permissions] admins): %s\n", listOrNone(v.Configured))
		fmt.Fprintf(w, "stored (perms op):                 %s\n", listOrNone(v.Stored))
		if v.TrustOfflineAdmins {
			fmt.Fprintln(w, "trust_offline_admins is on: admins are recognised on offline logins too")
		}
		return nil
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Show the admins",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			v, err := c.Admins(cmd.Context())
			if err != nil {
				return err
			}
			return print(cmd.OutOrStdout(), v)
		},
	})
	for _, on := range []bool{true, false} {
		use, short := "op PLAYER", "Make a player (name or UUID) an admin"
		if !on {
			use, short = "deop PLAYER", "Take a stored admin's rights away"
		}
		cmd.AddCommand(&cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if _, err := admin.NormalizeAdmin(args[0]); err != nil {
					return err
				}
				c, err := conn.client(cmd, g)
				if err != nil {
					return err
				}
				var v admin.AdminsView
				if on {
					v, err = c.Op(cmd.Context(), args[0])
				} else {
					v, err = c.Deop(cmd.Context(), args[0])
				}
				if err != nil {
					return err
				}
				return print(cmd.OutOrStdout(), v)
			},
		})
	}
	return cmd
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "(none)"
	}
	return strings.Join(list, ", ")
}
