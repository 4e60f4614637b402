package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// newServersCmd is `infrarust servers`: see and wake or stop the servers a running proxy manages.
func newServersCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "List servers with their manager state; start or stop a managed server; maintenance",
		Long: `Talks to the admin API of a running 'infrarust serve'. A server with a [server_manager]
block sleeps until a player joins; 'start' wakes it now, 'stop' puts it to sleep now.
'maintenance' closes any server to all but its maintenance_staff.`,
		Example: `  infrarust servers list
  infrarust servers start survival
  infrarust servers stop survival
  infrarust servers maintenance survival on`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)
	cmd.AddCommand(serverFileCmds(conn, g, &output)...)

	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Show every server with its state, manager type and players",
		Example: `  infrarust servers list
  infrarust servers list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			servers, err := c.Servers(cmd.Context())
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), servers)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SERVER\tMODE\tSTATE\tMANAGER\tPLAYERS\tADDRESSES\tDOMAINS")
			for _, s := range servers {
				state, manager := s.State, s.ManagerType
				if manager == "" {
					manager, state = "-", orDash(state)
				}
				if s.Maintenance {
					if state == "-" {
						state = "maintenance"
					} else {
						state += ",maintenance"
					}
				}
				addrs := fmt.Sprintf("%d/%d healthy", s.HealthyCount, s.AddressCount)
				if s.UnknownCount > 0 { // taking players, but nothing has checked them yet
					addrs += fmt.Sprintf(", %d unknown", s.UnknownCount)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.ID, orDash(s.ProxyMode), state, manager, s.Players,
					addrs, orDash(strings.Join(s.Domains, ",")))
			}
			return tw.Flush()
		},
	})
	for _, a := range []struct{ name, short, done string }{
		{"start", "Wake a managed server now (returns once the start is under way)", "start requested for"},
		{"stop", "Stop a managed server now; players on it are disconnected by the server", "stopped"},
	} {
		cmd.AddCommand(&cobra.Command{
			Use:               a.name + " SERVER",
			Short:             a.short,
			Example:           "  infrarust servers " + a.name + " survival\n  infrarust servers " + a.name + " survival -o json",
			Args:              exactArgs(1),
			ValidArgsFunction: completeManagedServers(conn, g),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, err := conn.client(cmd, g)
				if err != nil {
					return err
				}
				act := c.StartServer
				if a.name == "stop" {
					act = c.StopServer
				}
				st, err := act(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if output == "json" {
					return printJSON(cmd.OutOrStdout(), st)
				}
				line := fmt.Sprintf("%s %s", a.done, args[0])
				if st.State != "" {
					line += ": now " + st.State
					if st.StateReason != "" {
						line += " (" + st.StateReason + ")"
					}
				}
				fmt.Fprintln(cmd.OutOrStdout(), line)
				return nil
			},
		})
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "maintenance SERVER on|off",
		Short: "Close a server to everyone but its maintenance_staff, or open it again",
		Long: `While a server is in maintenance only the players in its maintenance_staff join it. The
others wait in the limbo when the server lists the "maintenance" limbo handler (they go in
when it ends), or are told the server is in maintenance. The server list shows the
server's [motd.maintenance] (or a built-in "under maintenance" MOTD, version
"Maintenance") without asking the backend. The setting is kept in the data
dir (maintenance.json), so a restart does not open a server the operator closed.`,
		Example: `  infrarust servers maintenance survival on
  infrarust servers maintenance survival off`,
		Args: exactArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 1 {
				return []cobra.Completion{"on", "off"}, cobra.ShellCompDirectiveNoFileComp
			}
			if len(args) > 1 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeServers(conn, g)(cmd, args, s)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var on bool
			switch strings.ToLower(args[1]) {
			case "on", "true", "yes":
				on = true
			case "off", "false", "no":
			default:
				return fmt.Errorf("maintenance %q: say on or off", args[1])
			}
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			st, err := c.SetMaintenance(cmd.Context(), args[0], on)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), st)
			}
			if st.Maintenance {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is in maintenance: only its maintenance_staff join\n", st.ID)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is open\n", st.ID)
			}
			return nil
		},
	})
	return cmd
}

// completeManagedServers completes the ids of servers that have a [server_manager]
// (the only ones start and stop act on), with their current state.
func completeManagedServers(conn *adminConn, g *globalFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		if len(args) > 0 {
			return nil, none
		}
		c, err := conn.client(cmd, g)
		if err != nil {
			return nil, none
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		servers, err := c.Servers(ctx)
		if err != nil {
			return nil, none
		}
		var out []cobra.Completion
		for _, s := range servers {
			if s.ManagerType != "" {
				out = append(out, cobra.CompletionWithDesc(s.ID, s.ManagerType+", "+orDash(s.State)))
			}
		}
		return out, none
	}
}
