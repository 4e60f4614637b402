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
	"github.com/infrarust-go/infrarust/internal/config"
)

// newBansCmd is `infrarust bans`: manage a running proxy's ban list.
func newBansCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bans",
		Short: "List, add and remove bans (IP or CIDR, username, UUID) on a running proxy",
		Long: `Talks to the admin API of a running 'infrarust serve'; bans take effect at once and
are kept in <data_dir>/bans.json.`,
		Example: `  infrarust bans list
  infrarust bans add --ip 203.0.113.7 --reason "bot joins" --duration 7d
  infrarust bans remove --ip 203.0.113.7`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)

	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Show the bans in force",
		Example: `  infrarust bans list
  infrarust bans list -o json`,
		Args: cobra.NoArgs,
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

	var reason, duration string
	add := &cobra.Command{
		Use:   "add (--ip ADDR|CIDR | --name USERNAME | --uuid UUID) [--reason TEXT] [--duration 7d]",
		Short: "Ban an IP or CIDR, a username or a UUID, for good or for a duration",
		Example: `  infrarust bans add --ip 203.0.113.7 --reason "bot joins" --duration 7d
  infrarust bans add --ip 198.51.100.0/24 --reason "bot wave" --duration 12h
  infrarust bans add --name Griefer123 --reason "griefing spawn"
  infrarust bans add --uuid 069a79f4-44e9-4726-a5be-fca90e38aaf5`,
		Args: cobra.NoArgs,
	}
	addTarget := addBanTargetFlags(add, conn, g, false)
	add.RunE = func(cmd *cobra.Command, _ []string) error {
		typ, value, err := addTarget.get()
		if err != nil {
			return err
		}
		req := admin.BanRequest{Type: string(typ), Value: value, Reason: reason, Duration: duration, CreatedBy: cliAuthor()}
		if duration != "" {
			if _, err := config.ParseBanLength(duration); err != nil {
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
		fmt.Fprintf(cmd.OutOrStdout(), "banned %s %s %s\n", b.Type, b.Value, expiryText(b.Ban, time.Now()))
		if note := fleetNote(b.Fleet); note != "" { // fleet.go
			fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+note)
		}
		return nil
	}
	f := add.Flags()
	f.StringVar(&reason, "reason", "", "reason shown to the player")
	f.StringVar(&duration, "duration", "", "how long, e.g. 30m, 12h, 7d, 1w 2d (default: permanent)")
	cmd.AddCommand(add)

	remove := &cobra.Command{
		Use:     "remove (--ip ADDR|CIDR | --name USERNAME | --uuid UUID)",
		Aliases: []string{"rm"},
		Short:   "Lift a ban, named the way 'bans add' made it",
		Long: `Lifts the ban on an IP or CIDR, a username or a UUID, named with the same flag
'bans add' took. The older form 'bans remove TYPE VALUE' (TYPE ip, username or uuid)
still works but is deprecated.`,
		Example: `  infrarust bans remove --ip 203.0.113.7
  infrarust bans remove --ip 198.51.100.0/24
  infrarust bans remove --name Griefer123`,
		Args: cobra.RangeArgs(0, 2),
	}
	removeTarget := addBanTargetFlags(remove, conn, g, true)
	remove.RunE = func(cmd *cobra.Command, args []string) error {
		typ, value, err := removeTarget.get()
		switch {
		case len(args) == 2 && removeTarget.set():
			return fmt.Errorf("give the ban either as --ip/--name/--uuid or as TYPE VALUE, not both")
		case len(args) == 2:
			// The deprecated positional form.
			if typ, err = admin.ParseBanType(args[0]); err != nil {
				return err
			}
			value = args[1]
			fmt.Fprintf(cmd.ErrOrStderr(), "note: 'bans remove %s VALUE' is deprecated; use 'bans remove %s VALUE'\n", args[0], banFlag(typ))
		case len(args) == 1:
			return fmt.Errorf("say which ban to lift: bans remove --ip %s (or --name / --uuid)", args[0])
		case err != nil:
			return err
		}
		c, err := conn.client(cmd, g)
		if err != nil {
			return err
		}
		removed, err := c.RemoveBan(cmd.Context(), typ, value)
		if err != nil {
			return err
		}
		if output == "json" {
			return printJSON(cmd.OutOrStdout(), removed)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "removed %s ban on %s\n", removed.Type, removed.Value)
		if note := fleetNote(removed.Fleet); note != "" { // fleet.go
			fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+note)
		}
		return nil
	}
	cmd.AddCommand(remove)
	return cmd
}

// banTarget is the --ip / --name / --uuid choice shared by 'bans add' and
// 'bans remove', so both name a ban the same way.
type banTarget struct {
	ip, name, uuid string
}

// banFlagName is the flag for one ban type, the one spelling the CLI uses.
type banFlagName struct {
	typ  bans.Type
	flag string
	help string
}

// banFlagNames lists the ban types in the order help texts show them.
func banFlagNames() []banFlagName {
	return []banFlagName{
		{bans.TypeIP, "ip", "an IP address or a CIDR range"},
		{bans.TypeUsername, "name", "a player name (any case)"},
		{bans.TypeUUID, "uuid", "a player UUID (survives name changes)"},
	}
}

// banFlag is the flag that names a ban of type typ ("--ip").
func banFlag(typ bans.Type) string {
	for _, f := range banFlagNames() {
		if f.typ == typ {
			return "--" + f.flag
		}
	}
	return "--" + string(typ)
}

// addBanTargetFlags adds --ip, --name and --uuid to cmd; one of them is required
// unless optional (remove also takes the deprecated positional form). For remove,
// the values complete from the bans in force.
func addBanTargetFlags(cmd *cobra.Command, conn *adminConn, g *globalFlags, existing bool) *banTarget {
	t := &banTarget{}
	dst := map[bans.Type]*string{bans.TypeIP: &t.ip, bans.TypeUsername: &t.name, bans.TypeUUID: &t.uuid}
	for _, f := range banFlagNames() {
		verb := "ban"
		if existing {
			verb = "lift the ban on"
		}
		cmd.Flags().StringVar(dst[f.typ], f.flag, "", verb+" "+f.help)
		if existing {
			_ = cmd.RegisterFlagCompletionFunc(f.flag, completeBanValues(conn, g, f.typ))
		}
	}
	cmd.MarkFlagsMutuallyExclusive("ip", "name", "uuid")
	if !existing {
		cmd.MarkFlagsOneRequired("ip", "name", "uuid")
	}
	return t
}

// set reports whether any of the three flags was given.
func (t *banTarget) set() bool { return t.ip != "" || t.name != "" || t.uuid != "" }

// get returns the ban the flags name.
func (t *banTarget) get() (bans.Type, string, error) {
	switch {
	case t.ip != "":
		return bans.TypeIP, t.ip, nil
	case t.name != "":
		return bans.TypeUsername, t.name, nil
	case t.uuid != "":
		return bans.TypeUUID, t.uuid, nil
	}
	return "", "", fmt.Errorf("say which ban: --ip, --name or --uuid")
}

// completeBanValues completes the values of the bans of type typ in force.
func completeBanValues(conn *adminConn, g *globalFlags, typ bans.Type) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
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
}

// cliAuthor records who banned, so `bans list` answers "who did this?".
func cliAuthor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

// expiryText says how long a ban lasts: the instant to the second and the time
// left in the units a player is shown ("until 2026-01-01 12:00:20 UTC (20s)").
func expiryText(b bans.Ban, now time.Time) string {
	if b.ExpiresAt == nil {
		return "permanently"
	}
	return fmt.Sprintf("until %s (%s)", b.ExpiresAt.Local().Format("2006-01-02 15:04:05 MST"), bans.FormatRemaining(b.ExpiresAt.Sub(now)))
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
