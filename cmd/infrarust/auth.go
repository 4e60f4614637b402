package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/bans"
)

// newAuthCmd is `infrarust auth`: the auth limbo's accounts on a running proxy.
func newAuthCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "List, inspect, reset and remove the password accounts of the auth limbo",
		Long: `Talks to the admin API of a running 'infrarust serve'. Offline servers with
limbo_handlers = ["auth"] make players /register and /login in the limbo before any
backend sees them; their accounts live in <data_dir>/accounts.db (or the fleet's Redis
with [fleet]). Passwords are stored as argon2id hashes and never shown.
See docs/offline-networks.md.`,
		Example: `  infrarust auth list
  infrarust auth info Steve
  echo 'n3w-passw0rd' | infrarust auth reset-password Steve --password-stdin
  infrarust auth unregister Steve`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)
	one := func(w io.Writer, a admin.AccountView) error {
		if output == "json" {
			return printJSON(w, a)
		}
		fmt.Fprintf(w, "name:        %s\n", a.Name)
		fmt.Fprintf(w, "registered:  %s from %s\n", when(a.RegisteredAt), orDash(a.RegisteredIP))
		fmt.Fprintf(w, "last login:  %s from %s\n", when(a.LastLoginAt), orDash(a.LastLoginIP))
		return nil
	}
	// forName checks PLAYER before any request, then connects.
	forName := func(cmd *cobra.Command, name string) (*admin.Client, error) {
		if err := bans.ValidUsername(name); err != nil {
			return nil, err // it names the value
		}
		return conn.client(cmd, g)
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the accounts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			list, err := c.Accounts(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if output == "json" {
				return printJSON(w, list)
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tREGISTERED\tLAST LOGIN\tLAST IP")
			for _, a := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name, when(a.RegisteredAt), when(a.LastLoginAt), orDash(a.LastLoginIP))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(w, "%d account(s)\n", len(list))
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "info PLAYER",
		Short: "Show one account",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := forName(cmd, args[0])
			if err != nil {
				return err
			}
			a, err := c.Account(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return one(cmd.OutOrStdout(), a)
		},
	})
	var fromStdin bool
	reset := &cobra.Command{
		Use:   "reset-password PLAYER [PASSWORD]",
		Short: "Set a new password (the player's remembered sessions end)",
		Long: `Set a new password for PLAYER without the old one, for a player who forgot theirs.
Every remembered session of the name ends, so the next login asks for the new password.
Give the password with --password-stdin to keep it out of the shell's history.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var pw string
			switch {
			case len(args) == 2 && fromStdin:
				return errors.New("give the password either as an argument or with --password-stdin, not both")
			case len(args) == 2:
				pw = args[1]
			case fromStdin:
				line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("reading the password from stdin: %w", err)
				}
				pw = strings.TrimRight(line, "\r\n")
			default:
				return errors.New("give the new password as an argument or on stdin with --password-stdin")
			}
			if pw == "" || strings.ContainsAny(pw, " \t") {
				return errors.New("the password must not be empty or hold spaces (players type it after /login)")
			}
			c, err := forName(cmd, args[0])
			if err != nil {
				return err
			}
			a, err := c.ResetPassword(cmd.Context(), args[0], pw)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), a)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "password of %s reset; their remembered sessions ended\n", a.Name)
			return nil
		},
	}
	reset.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the new password from the first line of stdin")
	cmd.AddCommand(reset)
	cmd.AddCommand(&cobra.Command{
		Use:   "unregister PLAYER",
		Short: "Delete an account (the player registers again at the next login)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := forName(cmd, args[0])
			if err != nil {
				return err
			}
			if err := c.Unregister(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s unregistered\n", args[0])
			return nil
		},
	})
	return cmd
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
