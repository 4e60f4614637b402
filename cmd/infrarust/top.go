package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/tui"
)

// onceTimeout bounds `top --once` so a script never hangs on a stuck proxy.
const onceTimeout = 10 * time.Second

// newTopCmd is `infrarust top`: the live dashboard of servers, backends and players.
func newTopCmd(g *globalFlags) *cobra.Command {
	var (
		interval time.Duration
		once     bool
	)
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Live dashboard of servers, backends and players; drain, send and kick from the keyboard",
		Long: `Shows a running proxy's servers, the state of every backend address and the players
online, live, from the admin API and its event stream: healthy ●, probing ◐,
unhealthy ✖, draining ⇣, the slow-start ramp of recovered addresses, players and
connect latency.

Keys: tab/←→ switch pane, ↑↓/j k select, d drain, e enable, r reset (each asks y/n),
/ filter the focused list, s sort, ? help, q quit. p shows the players pane (name,
server, address, version, mode, time online; shown by itself from 30 rows): m sends
the selected player to another server (type or tab-complete it), x kicks them (type a
reason or take the default), each after a y/n. With [fleet], f switches the players
pane to the whole fleet, with the proxy each player is on (send and kick still act on
this proxy's players only; while Redis is unreachable the last list stays, marked).
v shows the event log (shown by itself when the terminal has room: beside the tables
from 160 columns, below them from 40 rows).

The dashboard makes one admin API request per --interval (the players come in the
same snapshot), one more while the players pane shows the whole fleet, and follows the
event stream for everything in between (12 requests a minute by default, 24 with the
fleet's players, far inside the API's per-IP limit); after a 429 it waits as long as
Retry-After says. When the proxy goes away the dashboard says so and reconnects by
itself. With --once, or when stdout is not a terminal, one snapshot is printed as plain
tables. NO_COLOR turns colour off.`,
		Example: `  infrarust top
  infrarust top --interval 5s
  infrarust top --once --admin-url http://10.0.0.5:8080`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	cmd.Flags().DurationVar(&interval, "interval", tui.DefaultInterval, "snapshot refresh interval under the live event stream: one admin API request per interval, never more")
	cmd.Flags().BoolVar(&once, "once", false, "print one snapshot as plain tables and exit")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if interval <= 0 {
			return fmt.Errorf("--interval %s: use a positive duration such as 2s", interval)
		}
		c, err := conn.client(cmd, g)
		if err != nil {
			return err
		}
		out := g.stdout
		if once || !isTTY(out) {
			ctx, cancel := context.WithTimeout(cmd.Context(), onceTimeout)
			defer cancel()
			snap, err := tui.Fetch(ctx, c, time.Now())
			if err != nil {
				return err
			}
			return tui.WriteOnce(out, snap, time.Now())
		}
		return tui.Run(cmd.Context(), tui.Options{
			Client:   c,
			Events:   tui.AdminEvents{C: c},
			Interval: interval,
			Renderer: tui.NewRenderer(out, os.Getenv("NO_COLOR") != ""),
			Target:   c.BaseURL(),
		}, nil, out)
	}
	return cmd
}

// isTTY reports whether w is a terminal (not merely a character device such as
// /dev/null), the only place a full-screen UI belongs.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
