package tui

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// WriteOnce prints snap as plain, colour-free tables for scripts and pipes
// (`infrarust top --once`); now ages the "secs ago" fields.
func WriteOnce(w io.Writer, snap Snapshot, now time.Time) error {
	s := snap.Stats
	up := time.Duration(s.UptimeSecs * float64(time.Second))
	if !s.StartedAt.IsZero() {
		up = now.Sub(s.StartedAt)
	}
	bind := cmp.Or(s.Bind, "-")
	var b strings.Builder
	fmt.Fprintf(&b, "proxy %s  up %s  players %d  active %d  conn/s %s  rej/s %s",
		bind, fmtDur(up), s.PlayersOnline, s.ConnectionsActive, fmtRate(s.ConnectionsPerSec), fmtRate(s.RejectionsPerSec))
	if s.Version != "" {
		fmt.Fprintf(&b, "  version %s", s.Version)
	}
	b.WriteString("\n\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tDOMAINS\tSTRATEGY\tPLAYERS\tHEALTHY")
	servers := slices.Clone(snap.Servers)
	slices.SortFunc(servers, func(a, b2 admin.ServerInfo) int { return strings.Compare(a.ID, b2.ID) })
	for _, sv := range servers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", sv.ID, dash(strings.Join(sv.Domains, ",")), sv.Strategy, sv.Players, fmtHealthy(sv))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	for _, sv := range servers {
		bk, ok := snap.Backends[sv.ID]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "\n%s (%s)\n", sv.ID, cmp.Or(bk.Strategy, sv.Strategy))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ADDRESS\tPRIORITY\tSTATE\tWEIGHT\tEFFECTIVE\tACTIVE\tINFLIGHT\tEJECTIONS\tLAST_FAILURE\tLATENCY")
		for _, be := range bk.Backends {
			fail := "-"
			if d, ok := secsAgo(be.LastFailureSecsAgo, snap.At, now); ok {
				fail = fmtAgo(d) + " ago"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\n", be.Address, be.Priority, be.State, be.Weight,
				fmtEff(be.EffectiveWeight), be.ActiveConnections, be.Inflight, be.Ejections, fail, fmtLatency(be.ConnectEWMAms))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(snap.Players) > 0 {
		players := slices.Clone(snap.Players)
		slices.SortFunc(players, func(a, b admin.Player) int {
			return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)))
		})
		fmt.Fprintf(&b, "\nplayers (%d)\n", len(players))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSERVER\tADDRESS\tVERSION\tMODE\tONLINE\tCLIENT")
		for _, p := range players {
			online := "-"
			if !p.Since.IsZero() {
				online = fmtDur(now.Sub(p.Since))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Server, p.Address, versionText(p), dash(p.ProxyMode), online, dash(p.ClientIP))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dash(s string) string { return cmp.Or(s, "-") }
