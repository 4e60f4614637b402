package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// newPlayersCmd is `infrarust players`: see who is online and move or kick them.
func newPlayersCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "players",
		Short: "List the players on a running proxy; send them to another server or kick them",
		Long: `Talks to the admin API of a running 'infrarust serve'. Player names match in any case.

Players of intercepted servers (proxy_mode offline or client_only) can be sent to
another server of their network without a disconnect; the MOVABLE column says who can.
Players of passthrough servers can be listed and kicked, not moved: the proxy only
forwards their bytes. To move everyone off one address, see 'backends drain --move'.`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)

	var server string
	var fleetWide bool
	list := &cobra.Command{
		Use:   "list [--server SERVER] [--fleet]",
		Short: "Show the players online, with their server, address, version and mode",
		Example: `  infrarust players list
  infrarust players list --server lobby
  infrarust players list --fleet
  infrarust players list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			if fleetWide { // fleet.go
				players, err := c.FleetPlayers(cmd.Context(), server)
				if err != nil {
					return err
				}
				if output == "json" {
					return printJSON(cmd.OutOrStdout(), players)
				}
				return printFleetPlayersTable(cmd.OutOrStdout(), players, server, time.Now())
			}
			players, err := c.Players(cmd.Context(), server)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), players)
			}
			return printPlayersTable(cmd.OutOrStdout(), players, server, time.Now())
		},
	}
	list.Flags().StringVar(&server, "server", "", "only the players of this server")
	list.Flags().BoolVar(&fleetWide, "fleet", false, "the players of every proxy of the [fleet], with the proxy each is on")
	_ = list.RegisterFlagCompletionFunc("server", completeServers(conn, g))
	cmd.AddCommand(list)

	var force bool
	send := &cobra.Command{
		Use:   "send NAME SERVER",
		Short: "Move a player to another server of their network, without a disconnect",
		Long: `Moves the player to SERVER, picked among its addresses by its balancer like a login.
SERVER's own rules decide first, as for a login: its ip_filter, the bans, its
maintenance (maintenance_staff pass) and its capacity (players waiting in its queue
go first). --force overrides maintenance and capacity, never ip_filter or bans.
If SERVER refuses them (a rule, full, kicked, unreachable) the player stays where
they were, is told why in chat, and the command fails with the reason. Only players
of offline and client_only servers can be moved, and only within their network.
A managed SERVER that is asleep is started first (the player waits on their
current server): the command says so on stderr every few seconds and waits up to
5 minutes.`,
		Example: `  infrarust players send Notch lobby
  infrarust players send notch survival -o json
  infrarust players send Dinnerbone build --force   # past build's maintenance`,
		Args:              exactArgs(2),
		ValidArgsFunction: completePlayerThenServer(conn, g),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			ctx, stop := sendProgress(cmd, c, args[1])
			p, err := c.SendPlayer(ctx, args[0], args[1], force)
			stop()
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), p)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sent %s to %s (%s)\n", p.Name, p.Server, p.Address)
			return nil
		},
	}
	send.Flags().BoolVar(&force, "force", false, "override SERVER's maintenance and capacity (never its ip_filter or bans)")
	cmd.AddCommand(send)

	var reason string
	kick := &cobra.Command{
		Use:   "kick NAME [--reason TEXT]",
		Short: "Disconnect a player, with a reason they are shown",
		Long: `Disconnects the player. The reason is shown on their disconnect screen (players of
passthrough servers are disconnected without it: the proxy cannot write into their
stream). Without --reason they see "` + admin.DefaultKickReason + `". A kick is not a ban: to
keep them out, see 'bans add --name'.`,
		Example: `  infrarust players kick Griefer123 --reason "griefing spawn"
  infrarust players kick Notch`,
		Args:              exactArgs(1),
		ValidArgsFunction: completePlayerThenServer(conn, g),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			res, err := c.KickPlayer(cmd.Context(), args[0], reason)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "kicked %s from %s: %s\n", res.Player.Name, res.Player.Server, res.Reason)
			return nil
		},
	}
	kick.Flags().StringVar(&reason, "reason", "", "what the player is shown (default \""+admin.DefaultKickReason+"\")")
	cmd.AddCommand(kick)
	cmd.AddCommand(playersMessageCmd(conn, g, &output), playersBroadcastCmd(conn, g, &output))
	return cmd
}

func playersMessageCmd(conn *adminConn, g *globalFlags, output *string) *cobra.Command {
	return &cobra.Command{
		Use:   "message NAME TEXT...",
		Short: "Show a line in one player's chat",
		Long: `Shows TEXT in the player's chat, as the proxy's own line (legacy § colours, or a JSON
text component starting with '{'). Players of passthrough servers cannot be told: the
proxy only forwards their stream.`,
		Example:           `  infrarust players message Notch "§eThe lobby restarts in 5 minutes"`,
		Args:              minimumArgs(2),
		ValidArgsFunction: completePlayerThenServer(conn, g),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			res, err := c.MessagePlayer(cmd.Context(), args[0], strings.Join(args[1:], " "))
			if err != nil {
				return err
			}
			if *output == "json" {
				return printJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "told %s on %s: %s\n", res.Player.Name, res.Player.Server, res.Message)
			return nil
		},
	}
}

func playersBroadcastCmd(conn *adminConn, g *globalFlags, output *string) *cobra.Command {
	var server string
	c := &cobra.Command{
		Use:   "broadcast TEXT... [--server ID]",
		Short: "Show a line in every player's chat",
		Long: `Shows TEXT in the chat of every player the proxy speaks to (those of offline and
client_only servers), or of one server's players with --server.`,
		Example: `  infrarust players broadcast "§cRestart in 5 minutes"
  infrarust players broadcast --server lobby "Event starts now"`,
		Args: minimumArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			res, err := cl.Broadcast(cmd.Context(), strings.Join(args, " "), server)
			if err != nil {
				return err
			}
			if *output == "json" {
				return printJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "told %d players\n", res.Sent)
			return nil
		},
	}
	c.Flags().StringVar(&server, "server", "", "only the players of this server")
	return c
}

// printPlayersTable prints one line per player; now ages their session.
func printPlayersTable(w io.Writer, players []admin.Player, server string, now time.Time) error {
	if len(players) == 0 {
		msg := "no players online"
		if server != "" {
			msg = "no players on " + server
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSERVER\tADDRESS\tVERSION\tMODE\tONLINE\tCLIENT\tMOVABLE")
	for _, p := range players {
		movable := "no"
		if p.Switchable {
			movable = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Server, p.Address, playerVersion(p),
			orDash(p.ProxyMode), onlineFor(p.Since, now), orDash(p.ClientIP), movable)
	}
	return tw.Flush()
}

// playerVersion names the client's release, or its protocol number when the
// proxy does not know it.
func playerVersion(p admin.Player) string {
	if p.Version != "" {
		return p.Version
	}
	return "protocol " + strconv.Itoa(int(p.Protocol))
}

// onlineFor is how long ago since was, in the two largest units ("2h05m").
func onlineFor(since, now time.Time) string {
	if since.IsZero() {
		return "-"
	}
	s := int64(now.Sub(since) / time.Second)
	switch {
	case s < 0:
		return "0s"
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, (s%3600)/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, (s%86400)/3600)
}

// completePlayerThenServer completes an online player's name, then (for send) a
// server other than the one they are on; nothing when the API is unreachable.
func completePlayerThenServer(conn *adminConn, g *globalFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		maxArgs := 1
		if cmd.Name() == "send" {
			maxArgs = 2
		}
		if len(args) >= maxArgs {
			return nil, none
		}
		c, err := conn.client(cmd, g)
		if err != nil {
			return nil, none
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		players, err := c.Players(ctx, "")
		if err != nil {
			return nil, none
		}
		var out []cobra.Completion
		if len(args) == 0 {
			for _, p := range players {
				if cmd.Name() == "send" && !p.Switchable {
					continue // cannot be moved: do not offer them
				}
				out = append(out, cobra.CompletionWithDesc(p.Name, "on "+p.Server+" ("+p.Address+")"))
			}
			return out, none
		}
		var current string
		for _, p := range players {
			if strings.EqualFold(p.Name, args[0]) { // names match in any case
				current = p.Server
			}
		}
		servers, err := c.Servers(ctx)
		if err != nil {
			return nil, none
		}
		for _, s := range servers {
			if s.ID != current {
				out = append(out, cobra.CompletionWithDesc(s.ID, fmt.Sprintf("%s, %d player(s)", orDash(s.ProxyMode), s.Players)))
			}
		}
		return out, none
	}
}

// completeServers completes server ids for a flag.
func completeServers(conn *adminConn, g *globalFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
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
			out = append(out, cobra.CompletionWithDesc(s.ID, fmt.Sprintf("%d player(s)", s.Players)))
		}
		return out, none
	}
}

// sendProgress prepares a send to server: when the server is managed and not
// online (asleep, starting, stopping, crashed), the move waits for its start, so
// the request gets the move's budget instead of the usual one and stderr says
// what it waits for every few seconds. stop ends the progress lines.
func sendProgress(cmd *cobra.Command, c *admin.Client, server string) (context.Context, func()) {
	ctx := cmd.Context()
	info, err := c.Server(ctx, server)
	if err != nil || info.State == "" || info.State == "online" {
		return ctx, func() {}
	}
	errOut := cmd.ErrOrStderr()
	fmt.Fprintf(errOut, "%s is %s: the player is moved once it is online (waiting at most %s)\n", server, info.State, admin.DefaultMoveTimeout)
	ctx, cancel := context.WithTimeout(ctx, admin.DefaultMoveTimeout)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(errOut, "  waiting for %s to start… %s\n", server, time.Since(start).Round(time.Second))
			}
		}
	}()
	return ctx, func() {
		close(done)
		<-finished
		cancel()
	}
}

// progressEvery is how often a waiting send says it still waits.
var progressEvery = 5 * time.Second
