package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/perms"
)

// newPermsCmd is `infrarust perms`: the roles of the in-game commands.
func newPermsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "perms",
		Short: "Show and change who may use which in-game command (groups, admins) on a running proxy",
		Long: `Talks to the admin API of a running 'infrarust serve'. A group (a role) has
permissions (infrarust.command.<name>; a trailing * matches everything under it)
and members (names or UUIDs), and may be limited to some servers. "admins" has
every permission; "default" is everyone. Groups come from [permissions] of the
config file and from the changes made here, which are stored in
<data_dir>/permissions.json, or with [fleet] in its Redis (every proxy shares
them). A change applies at once: the players it concerns get their command list
again. A member is recognised only on a Mojang-authenticated login unless
trust_offline_admins is set.`,
		Example: `  infrarust perms list
  infrarust perms op Steve
  infrarust perms group grant moderator infrarust.command.kick
  infrarust perms group add moderator Kate
  infrarust perms group create lobby-staff --server lobby
  infrarust perms group grant lobby-staff infrarust.command.send`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)
	printGroups := func(w io.Writer, v admin.PermissionsView) error {
		if output == "json" {
			return printJSON(w, v)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "GROUP\tPERMISSIONS\tMEMBERS\tSERVERS\tFROM")
		for _, gv := range v.Groups {
			var all perms.Group
			var from []string
			if c := gv.Configured; c != nil {
				all.Permissions, all.Members, all.Servers = append(all.Permissions, c.Permissions...), append(all.Members, c.Members...), c.Servers
				from = append(from, "file")
			}
			if s := gv.Stored; s != nil {
				all.Permissions, all.Members = append(all.Permissions, s.Permissions...), append(all.Members, s.Members...)
				if gv.Configured == nil {
					all.Servers = s.Servers
				}
				from = append(from, "stored")
			}
			permsText, members := listOrNone(all.Permissions), listOrNone(all.Members)
			switch gv.Name {
			case perms.Admins:
				permsText = "* (every command)"
			case perms.Default:
				members = "(everyone)"
			}
			servers := "(all)"
			if len(all.Servers) > 0 {
				servers = strings.Join(all.Servers, ", ")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", gv.Name, permsText, members, servers, strings.Join(from, "+"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		switch {
		case v.StoreError != "":
			fmt.Fprintf(w, "stored changes: %s cannot be read now (%s); the proxy keeps the ones it last read\n", v.Store, v.StoreError)
		case v.Store != "":
			fmt.Fprintf(w, "stored changes: %s (version %d)\n", v.Store, v.Version)
		}
		if v.TrustOfflineAdmins {
			fmt.Fprintln(w, "trust_offline_admins is on: members are recognised on offline logins too")
		}
		return nil
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Show the groups, their permissions and members",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			v, err := c.Permissions(cmd.Context())
			if err != nil {
				return err
			}
			return printGroups(cmd.OutOrStdout(), v)
		},
	})
	printAdmins := func(w io.Writer, v admin.AdminsView) error {
		if output == "json" {
			return printJSON(w, v)
		}
		fmt.Fprintf(w, "configured ([permissions] admins): %s\n", listOrNone(v.Configured))
		fmt.Fprintf(w, "stored (perms op):                 %s\n", listOrNone(v.Stored))
		return nil
	}
	for _, on := range []bool{true, false} {
		use, short := "op PLAYER", "Make a player (name or UUID) an admin (a member of the admins group)"
		if !on {
			use, short = "deop PLAYER", "Take a stored admin's rights away"
		}
		cmd.AddCommand(&cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if _, err := perms.NormalizeMember(args[0]); err != nil {
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
				return printAdmins(cmd.OutOrStdout(), v)
			},
		})
	}
	cmd.AddCommand(newPermsGroupCmd(g, conn, printGroups))
	return cmd
}

// newPermsGroupCmd is `infrarust perms group`: changes of the stored groups.
func newPermsGroupCmd(g *globalFlags, conn *adminConn, print func(io.Writer, admin.PermissionsView) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "group",
		Short: "Create, delete and change stored groups",
		Args:  cobra.NoArgs,
	}
	run := func(c perms.Change) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			c.Group = args[0]
			if len(args) > 1 {
				c.Value = args[1]
			}
			if _, err := c.Check(); err != nil {
				return err
			}
			cl, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			v, err := cl.ChangePermissions(cmd.Context(), c)
			if err != nil {
				return err
			}
			return print(cmd.OutOrStdout(), v)
		}
	}
	var servers []string
	create := &cobra.Command{
		Use:   "create GROUP",
		Short: "Create a group (limited to some servers with --server)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(perms.Change{Op: perms.OpCreate, Servers: slices.Clone(servers)})(cmd, args)
		},
	}
	create.Flags().StringSliceVar(&servers, "server", nil, "a server where the group's permissions apply (repeat or comma-separate; none: everywhere)")
	cmd.AddCommand(create,
		&cobra.Command{Use: "delete GROUP", Short: "Delete a stored group", Args: cobra.ExactArgs(1), RunE: run(perms.Change{Op: perms.OpDelete})},
		&cobra.Command{Use: "grant GROUP PERMISSION", Short: "Give a group a permission (infrarust.command.<name>, or ending in *)", Args: cobra.ExactArgs(2), RunE: run(perms.Change{Op: perms.OpGrant})},
		&cobra.Command{Use: "revoke GROUP PERMISSION", Short: "Take a stored permission from a group", Args: cobra.ExactArgs(2), RunE: run(perms.Change{Op: perms.OpRevoke})},
		&cobra.Command{Use: "add GROUP PLAYER", Short: "Put a player (name or UUID) in a group", Args: cobra.ExactArgs(2), RunE: run(perms.Change{Op: perms.OpAdd})},
		&cobra.Command{Use: "remove GROUP PLAYER", Short: "Take a stored member out of a group", Args: cobra.ExactArgs(2), RunE: run(perms.Change{Op: perms.OpRemove})},
	)
	return cmd
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "(none)"
	}
	return strings.Join(list, ", ")
}
