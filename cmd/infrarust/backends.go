package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// completionTimeout keeps <TAB> responsive when the proxy is slow or gone.
const completionTimeout = 2 * time.Second

// newBackendsCmd is `infrarust backends`: inspect and steer a running proxy's addresses.
func newBackendsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backends",
		Short: "List, drain, enable and reset the backend addresses of a running proxy",
		Long: `Talks to the admin API of a running 'infrarust serve'. On the same machine no flag is
needed: the URL comes from [web] bind and the key from <data_dir>/admin.key of --config.`,
		Example: `  infrarust backends list
  infrarust backends drain lobby 10.0.0.2:25565
  sudo -u infrarust infrarust backends list --config /etc/infrarust/infrarust.toml
  INFRARUST_API_KEY=... infrarust backends list --admin-url http://10.0.0.5:8080`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)

	list := &cobra.Command{
		Use:   "list [SERVER]",
		Short: "Show every address with its state, weight and connections",
		Long: `Shows every address of every server (or of SERVER) as the balancer sees it: its state
(unknown until a login, a probe or a status answer has checked it; healthy, probing,
unhealthy or draining after), weights, priority, connections, ejections and connect
time.`,
		Example: `  infrarust backends list
  infrarust backends list lobby
  infrarust backends list lobby -o json | jq -r '.backends[] | select(.state != "healthy") | .address'`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeServerAddress(conn, g, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			var all map[string]admin.Backends
			if len(args) == 1 {
				b, err := c.Backends(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				all = map[string]admin.Backends{args[0]: b}
				if output == "json" {
					return printJSON(cmd.OutOrStdout(), b)
				}
			} else {
				if all, err = c.AllBackends(cmd.Context()); err != nil {
					return err
				}
				if output == "json" {
					return printJSON(cmd.OutOrStdout(), all)
				}
			}
			return printBackendsTable(cmd.OutOrStdout(), all)
		},
	}
	cmd.AddCommand(list)

	short := map[admin.Action]string{
		admin.ActionDrain:  "Stop sending new players to ADDRESS; current sessions stay (survives restarts)",
		admin.ActionEnable: "Lift a drain so ADDRESS takes new players again (no slow start: it takes its full share at once)",
		admin.ActionReset:  "Clear ADDRESS's failures, ejections and backoff (a drain stays)",
	}
	examples := map[admin.Action]string{
		admin.ActionDrain: `  infrarust backends drain lobby 10.0.1.11:25565
  infrarust backends drain --move lobby 10.0.1.11:25565
  infrarust backends drain survival '[2001:db8::1]:25565' -o json`,
		admin.ActionEnable: `  infrarust backends enable lobby 10.0.1.11:25565`,
		admin.ActionReset: `  # after fixing the backend, instead of waiting out its backoff:
  infrarust backends reset lobby 10.0.2.10:25565`,
	}
	for _, a := range admin.Actions() {
		var move bool
		sub := &cobra.Command{
			Use:               string(a) + " SERVER ADDRESS",
			Short:             short[a],
			Example:           examples[a],
			Args:              exactArgs(2),
			ValidArgsFunction: completeServerAddress(conn, g, 2),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, err := conn.client(cmd, g)
				if err != nil {
					return err
				}
				var res admin.ActionResult
				if move {
					res, err = c.DrainMove(cmd.Context(), args[0], args[1])
				} else {
					res, err = c.Act(cmd.Context(), a, args[0], args[1])
				}
				if err != nil {
					return err
				}
				if output == "json" {
					return printJSON(cmd.OutOrStdout(), res)
				}
				b := res.Backend
				line := fmt.Sprintf("%s %s on %s: now %s, %d active connection(s), %d ejection(s)",
					a.Done(), res.Address, res.Server, orDash(b.State), b.ActiveConnections, b.Ejections)
				if m := res.Move; m != nil {
					line += fmt.Sprintf("; moved %d player(s), %d stayed", m.Moved, m.Stayed)
					if m.Stayed > 0 {
						line += " (no other address or fallback server took them; they stay until they leave)"
					}
				}
				fmt.Fprintln(cmd.OutOrStdout(), line)
				if note := fleetNote(res.Fleet); note != "" { // fleet.go
					fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+note)
				}
				return nil
			},
		}
		if a == admin.ActionDrain {
			sub.Long = `Stops sending new players to ADDRESS; players already on it stay. The drain is stored
in <data_dir>/drained.json and survives restarts; 'backends enable' lifts it.

With --move, the players on ADDRESS are then moved to the server's other addresses
(balanced like logins), or to its fallback servers, without a disconnect: a rolling
restart without kicking anyone. Only players of offline and client_only servers can be
moved; the output says how many moved and how many stayed.`
			sub.Flags().BoolVar(&move, "move", false, "also move the address's players to the server's other addresses (or its fallbacks)")
		}
		cmd.AddCommand(sub)
	}
	return cmd
}

// completeServerAddress completes server ids, then (when maxArgs is 2) that server's
// addresses, from the running proxy; it completes nothing when the API is unreachable.
func completeServerAddress(conn *adminConn, g *globalFlags, maxArgs int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		if len(args) >= maxArgs {
			return nil, none
		}
		c, err := conn.client(cmd, g)
		if err != nil {
			return nil, none
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		var out []cobra.Completion
		if len(args) == 0 {
			servers, err := c.Servers(ctx)
			if err != nil {
				return nil, none
			}
			for _, s := range servers {
				out = append(out, cobra.CompletionWithDesc(s.ID, fmt.Sprintf("%d address(es), %d player(s)", s.AddressCount, s.Players)))
			}
			return out, none
		}
		b, err := c.Backends(ctx, args[0])
		if err != nil {
			return nil, none
		}
		for _, be := range b.Backends {
			out = append(out, cobra.CompletionWithDesc(be.Address, be.State))
		}
		return out, none
	}
}

func checkOutput(o string) error {
	if o != "table" && o != "json" {
		return fmt.Errorf("-o %q: use table or json", o)
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printBackendsTable(w io.Writer, all map[string]admin.Backends) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tADDRESS\tSTATE\tHEALTH\tWEIGHT\tEFFECTIVE\tPRIORITY\tACTIVE\tINFLIGHT\tEJECTIONS\tCONNECT")
	for _, id := range slices.Sorted(maps.Keys(all)) {
		for _, b := range all[id].Backends {
			connect := "-"
			if b.ConnectEWMAms != nil {
				connect = strconv.FormatFloat(*b.ConnectEWMAms, 'f', 1, 64) + "ms"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.2f\t%d\t%d\t%d\t%d\t%s\n",
				id, b.Address, orDash(b.State), orDash(b.Health), b.Weight, b.EffectiveWeight, b.Priority,
				b.ActiveConnections, b.Inflight, b.Ejections, connect)
		}
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
