package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/logtap"
)

// newLogsCmd is `infrarust logs`: the running proxy's recent log lines, and
// with -f the ones that follow, through the admin API.
func newLogsCmd(g *globalFlags) *cobra.Command {
	var q admin.LogQuery
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs [-f] [--level LEVEL] [--server ID] [--player NAME] [-n LINES]",
		Short: "Show a running proxy's recent log lines, and follow them with -f",
		Long: `Prints the last lines the running 'infrarust serve' logged (it keeps 1000), oldest
first, from its admin API: the lines it writes at its own --log-level, so debug lines
are there only when it runs with --log-level debug. --level shows that level and up,
--server and --player the lines about one server or one player. With -f it goes on
with each new line as it is written, until interrupted; a line the terminal could not
keep up with is counted, not waited for.`,
		Example: `  infrarust logs -n 50
  infrarust logs -f --level warn
  infrarust logs -f --player Notch -o json`,
		Args: cobra.NoArgs,
	}
	conn := addAdminFlags(cmd)
	var output string
	addOutputFlag(cmd, &output)
	f := cmd.Flags()
	f.BoolVarP(&follow, "follow", "f", false, "go on with the new lines as they are written")
	f.StringVar(&q.Level, "level", "", "only this level and up: debug, info, warn, error")
	f.StringVar(&q.Server, "server", "", "only the lines about this server")
	f.StringVar(&q.Player, "player", "", "only the lines about this player")
	f.IntVarP(&q.N, "lines", "n", 100, "how many recent lines to show first (0 to 1000; 0 with -f: only the new ones)")
	_ = cmd.RegisterFlagCompletionFunc("level", cobra.FixedCompletions([]string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := conn.client(cmd, g)
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		var stream *admin.EventStream
		if follow { // before the history, so no line falls between the two
			if stream, err = c.Logs(cmd.Context(), q); err != nil {
				return err
			}
			defer stream.Close()
		}
		if q.N < 0 || q.N > admin.MaxLogHistory {
			return fmt.Errorf("--lines %d: give 0 (none, as tail -n 0) to %d", q.N, admin.MaxLogHistory)
		}
		var history []logtap.Entry
		if q.N > 0 { // -n 0: only what comes next
			if history, err = c.LogHistory(cmd.Context(), q); err != nil {
				return err
			}
		}
		var last uint64
		for _, e := range history {
			printLogLine(w, e, output)
			last = e.Seq
		}
		if stream == nil {
			return nil
		}
		for {
			typ, data, err := stream.NextRaw()
			if err != nil {
				if errors.Is(err, io.EOF) || cmd.Context().Err() != nil {
					return nil
				}
				return err
			}
			if typ == string(events.Lagged) {
				var l events.LaggedInfo
				_ = json.Unmarshal([]byte(data), &l)
				fmt.Fprintf(cmd.ErrOrStderr(), "(%d lines missed: the terminal fell behind)\n", l.Missed)
				continue
			}
			var e logtap.Entry
			if json.Unmarshal([]byte(data), &e) != nil || e.Seq <= last {
				continue // in the history already
			}
			printLogLine(w, e, output)
		}
	}
	return cmd
}

// printLogLine prints one line as slog's text handler would, or as JSON.
func printLogLine(w io.Writer, e logtap.Entry, output string) {
	if output == "json" {
		b, _ := json.Marshal(e)
		fmt.Fprintln(w, string(b))
		return
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %-5s %s", e.Time.Local().Format(time.DateTime), e.Level, e.Message)
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := fmt.Sprint(e.Fields[k])
		if strings.ContainsAny(v, " \"=") {
			v = fmt.Sprintf("%q", v)
		}
		fmt.Fprintf(&sb, " %s=%s", k, v)
	}
	fmt.Fprintln(w, sb.String())
}
