package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// newFleetCmd is `infrarust fleet`: the proxies sharing state through [fleet].
func newFleetCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Show the proxies of a fleet (several proxies sharing drains, bans and players through Redis)",
		Long: `Talks to the admin API of one running 'infrarust serve' with [fleet] configured; any
proxy of the fleet answers for all of them. See docs/fleet.md.`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)
	cmd.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "List each proxy of the fleet: id, address, version, uptime, players, last heartbeat",
		Long: `Lists every proxy heard from in the last hour as the answering proxy last read it
from Redis (every heartbeat_interval). A proxy whose heartbeat is older than
heartbeat_timeout is LOST: its players no longer count. While the answering proxy
cannot reach Redis, the list is its last view and the header says so.`,
		Example: `  infrarust fleet status
  infrarust fleet status -o json
  infrarust fleet status --admin-url http://10.0.0.2:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			st, err := c.Fleet(cmd.Context())
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), st)
			}
			return printFleet(cmd.OutOrStdout(), st, time.Now())
		},
	})
	return cmd
}

// printFleet prints the header (connectivity, totals) and one line per proxy.
func printFleet(w io.Writer, st admin.FleetStatus, now time.Time) error {
	if !st.Enabled {
		_, err := fmt.Fprintln(w, "this proxy is not in a fleet ([fleet] redis is not set in its infrarust.toml; see docs/fleet.md)")
		return err
	}
	if st.Connected {
		fmt.Fprintf(w, "fleet of %s via %s: connected; %d live proxies, %d players\n", st.ID, st.Redis, st.LiveProxies, st.Players)
	} else {
		fmt.Fprintf(w, "fleet of %s via %s: DISCONNECTED since %s (%s)\n", st.ID, st.Redis, onlineFor(st.Since, now), st.LastError)
		fmt.Fprintf(w, "  the list below is as of %s ago; players are still served with the last known state\n", onlineFor(st.ViewAt, now))
	}
	if st.PendingChanges > 0 {
		fmt.Fprintf(w, "%d change(s) made on %s are not in the fleet yet; they are published when Redis answers\n", st.PendingChanges, st.ID)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tADDRESS\tADMIN\tVERSION\tUPTIME\tPLAYERS\tLAST HEARTBEAT\tSTATE")
	for _, p := range st.Proxies {
		id := p.ID
		if p.Self {
			id += " (this)"
		}
		state := "live"
		if !p.Live {
			state = "LOST"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s ago\t%s\n", id, orDash(p.Address), orDash(p.Admin), orDash(p.Version),
			onlineFor(p.StartedAt, now), p.Players, fmtSecs(p.HeartbeatAgeSecs), state)
	}
	return tw.Flush()
}

// fmtSecs renders a heartbeat age: tenths under a minute, where it matters.
func fmtSecs(s float64) string {
	if s < 60 {
		return fmt.Sprintf("%.1fs", max(s, 0))
	}
	return onlineFor(time.Unix(0, 0), time.Unix(int64(s), 0))
}

// printFleetPlayersTable is `players list --fleet`: the players table with the
// proxy each player is on.
func printFleetPlayersTable(w io.Writer, players []admin.FleetPlayer, server string, now time.Time) error {
	if len(players) == 0 {
		msg := "no players online in the fleet"
		if server != "" {
			msg = "no players on " + server + " in the fleet"
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROXY\tSERVER\tADDRESS\tVERSION\tMODE\tONLINE\tCLIENT")
	for _, p := range players {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Proxy, p.Server, p.Address, playerVersion(p.Player),
			orDash(p.ProxyMode), onlineFor(p.Since, now), orDash(p.ClientIP))
	}
	return tw.Flush()
}

// fleetNote is the warning `backends drain` (and the others) and `bans add` /
// `bans remove` print when the change did not reach the fleet; "" when it did or
// there is no fleet.
func fleetNote(d *admin.FleetDelivery) string {
	if d == nil || d.Shared() {
		return ""
	}
	switch d.State {
	case admin.FleetQueued:
		return "not shared with the fleet yet: " + d.Message
	case admin.FleetSuperseded:
		return "the fleet keeps a newer change instead: " + d.Message
	}
	return "applied on this proxy only: " + d.Message
}
