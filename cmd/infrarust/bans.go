package main

import (
	"context"
	"fmt"
	"io"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/bans"
)

// newBansCmd is `infrarust bans`: manage a running proxy's ban list.
func newBansCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bans",
		Short: "List, add and remove bans (IP or CIDR, username, UUID) on a running proxy",
		Long: `Talks to the admin API of a running 'infrarust serve'; bans take effect at once and
are kept in <data_dir>/bans.json.`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)

	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Show the bans in force",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			list, err := c.Bans(cmd.Context())
			if err != nil {
				return err
			}
			if output == "json" {
				if list == nil {
					list = []bans.Ban{}
				}
				return printJSON(cmd.OutOrStdout(), list)
			}
			return printBansTable(cmd.OutOrStdout(), list)
		},
	})

	var ip, name, uuid, reason, duration string
	add := &cobra.Command{
		Use:   "add (--ip ADDR|CIDR | --name USERNAME | --uuid UUID) [--reason TEXT] [--duration 7d]",
		Short: "Ban an IP or CIDR, a username or a UUID, for good or for a duration",
		Example: `  infrarust bans add --ip 203.0.113.7 --reason "bot joins" --duration 7d
  infrarust bans add --name Griefer123 --reason "griefing spawn"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req := admin.BanRequest{Reason: reason, Duration: duration, CreatedBy: cliAuthor()}
			switch {
			case ip != "":
				req.Type, req.Value = string(bans.TypeIP), ip
			case name != "":
				req.Type, req.Value = string(bans.TypeUsername), name
			case uuid != "":
				req.Type, req.Value = string(bans.TypeUUID), uuid
			default:
				return fmt.Errorf("say what to ban: --ip, --name or --uuid")
			}
			if duration != "" {
				if _, err := bans.ParseDuration(duration); err != nil {
					return fmt.Errorf("--duration: %w", err)
				}
			}
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			b, err := c.AddBan(cmd.Context(), req)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), b)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "banned %s %s %s\n", b.Type, b.Value, expiryText(b, time.Now()))
			return nil
		},
	}
	f := add.Flags()
	f.StringVar(&ip, "ip", "", "IP address or CIDR range to ban")
	f.StringVar(&name, "name", "", "player name to ban (case-insensitive)")
	f.StringVar(&uuid, "uuid", "", "player UUID to ban (survives name changes)")
	f.StringVar(&reason, "reason", "", "reason shown to the player")
	f.StringVar(&duration, "duration", "", "how long, e.g. 30m, 12h, 7d, 1w 2d (default: permanent)")
	add.MarkFlagsMutuallyExclusive("ip", "name", "uuid")
	add.MarkFlagsOneRequired("ip", "name", "uuid")
	cmd.AddCommand(add)

	cmd.AddCommand(&cobra.Command{
		Use:     "remove TYPE VALUE",
		Aliases: []string{"rm"},
		Short:   "Lift a ban (TYPE is ip, username or uuid)",
		Example: "  infrarust bans remove ip 203.0.113.7\n  infrarust bans remove username Griefer123",
		Args:    exactArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			none := cobra.ShellCompDirectiveNoFileComp
			switch len(args) {
			case 0:
				return []cobra.Completion{"ip", "username", "uuid"}, none
			case 1:
				typ, err := admin.ParseBanType(args[0])
				if err != nil {
					return nil, none
				}
				c, err := conn.client(cmd, g)
				if err != nil {
					return nil, none
				}
				ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
				defer cancel()
				list, err := c.Bans(ctx)
				if err != nil {
					return nil, none
				}
				var out []cobra.Completion
				for _, b := range list {
					if b.Type == typ {
						out = append(out, cobra.CompletionWithDesc(b.Value, b.Reason))
					}
				}
				return out, none
			}
			return nil, none
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			typ, err := admin.ParseBanType(args[0])
			if err != nil {
				return err
			}
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			if err := c.RemoveBan(cmd.Context(), string(typ), args[1]); err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), map[string]string{"type": string(typ), "value": args[1], "removed": "true"})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s ban on %s\n", typ, args[1])
			return nil
		},
	})
	return cmd
}

// cliAuthor records who banned, so `bans list` answers "who did this?".
func cliAuthor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

func expiryText(b bans.Ban, now time.Time) string {
	if b.ExpiresAt == nil {
		return "permanently"
	}
	return fmt.Sprintf("until %s (%s)", b.ExpiresAt.Local().Format("2006-01-02 15:04 MST"), b.ExpiresAt.Sub(now).Round(time.Minute))
}

func printBansTable(w io.Writer, list []bans.Ban) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no bans")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tVALUE\tREASON\tEXPIRES\tCREATED\tBY")
	for _, b := range list {
		exp := "never"
		if b.ExpiresAt != nil {
			exp = b.ExpiresAt.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", b.Type, b.Value, orDash(strings.ReplaceAll(b.Reason, "\n", " ")),
			exp, b.CreatedAt.Local().Format("2006-01-02 15:04"), orDash(b.CreatedBy))
	}
	return tw.Flush()
}
