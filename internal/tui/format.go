package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// stateSymbol gives each state a glyph that reads without colour; a state this
// build does not know shows as "?". Unknown is the hollow form of healthy: it
// takes players like one, but nothing has checked it yet.
func stateSymbol(state balance.State) string {
	switch state {
	case balance.StateUnknown:
		return "○"
	case balance.StateHealthy:
		return "●"
	case balance.StateProbing:
		return "◐"
	case balance.StateUnhealthy:
		return "✖"
	case balance.StateDraining:
		return "⇣"
	}
	return "?"
}

// stateRank orders states worst first for sorting; unknown sorts just before
// healthy, since it may yet turn out not to be.
func stateRank(state balance.State) int {
	switch state {
	case balance.StateUnhealthy:
		return 0
	case balance.StateProbing:
		return 1
	case balance.StateDraining:
		return 2
	case balance.StateUnknown:
		return 3
	case balance.StateHealthy:
		return 4
	}
	return -1
}

// fmtHealthy is a server's "healthy/addresses", plus "○n" for n addresses nobody
// has checked yet (they take players, but are not called healthy).
func fmtHealthy(s admin.ServerInfo) string {
	out := fmt.Sprintf("%d/%d", s.HealthyCount, s.AddressCount)
	if s.UnknownCount > 0 {
		out += fmt.Sprintf(" %s%d", stateSymbol(balance.StateUnknown), s.UnknownCount)
	}
	return out
}

// fit pads or truncates s to exactly w terminal cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-sw)
}

// fitRight right-aligns s in w cells.
func fitRight(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return fit(s, w)
	}
	return strings.Repeat(" ", w-sw) + s
}

// fmtDur renders a duration compactly with its two most significant units.
func fmtDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, (s%3600)/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, (s%86400)/3600)
}

// fmtAgo renders an age in one unit, for narrow columns.
func fmtAgo(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 86400:
		return fmt.Sprintf("%dh", s/3600)
	}
	return fmt.Sprintf("%dd", s/86400)
}

// secsAgo turns a "secs ago as of the snapshot" field into an age as of now.
func secsAgo(secs *float64, at, now time.Time) (time.Duration, bool) {
	if secs == nil {
		return 0, false
	}
	d := time.Duration(*secs*float64(time.Second)) + now.Sub(at)
	return d, true
}

// fmtLatency renders a connect EWMA in milliseconds.
func fmtLatency(ms *float64) string {
	if ms == nil {
		return "-"
	}
	switch v := *ms; {
	case v < 10:
		return fmt.Sprintf("%.1fms", v)
	case v < 1000:
		return fmt.Sprintf("%.0fms", v)
	default:
		return fmt.Sprintf("%.1fs", v/1000)
	}
}

// fmtRate renders a per-second rate.
func fmtRate(v float64) string {
	return fmt.Sprintf("%.1f", v)
}

// fmtEff renders an effective weight.
func fmtEff(v float64) string {
	return fmt.Sprintf("%.1f", v)
}

// rampBar draws effective/configured weight as a bar of width cells, which
// makes a slow-start ramp visible at a glance.
func rampBar(b admin.Backend, width int) string {
	if width <= 0 {
		return ""
	}
	frac := 0.0
	if b.Weight > 0 {
		frac = b.EffectiveWeight / float64(b.Weight)
	}
	frac = math.Max(0, math.Min(1, frac))
	filled := int(math.Round(frac * float64(width)))
	if filled == 0 && frac > 0 {
		filled = 1
	}
	return strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
}

// ramping reports whether a backend is in slow start: up, but not yet at full weight.
func ramping(b admin.Backend) bool {
	return b.BackendState() == balance.StateHealthy && b.Weight > 0 && b.EffectiveWeight < float64(b.Weight)-1e-9
}

// fmtDomains shows as many domains as fit in w cells, then how many more there
// are ("a.example, b.example +3").
func fmtDomains(domains []string, w int) string {
	if len(domains) == 0 {
		return "-"
	}
	for k := len(domains); k > 1; k-- {
		s := strings.Join(domains[:k], ", ")
		if k < len(domains) {
			s += fmt.Sprintf(" +%d", len(domains)-k)
		}
		if ansi.StringWidth(s) <= w {
			return s
		}
	}
	if len(domains) == 1 {
		return domains[0]
	}
	return fmt.Sprintf("%s +%d", domains[0], len(domains)-1)
}

// domainsWidth is the width of every domain listed in full.
func domainsWidth(domains []string) int {
	return ansi.StringWidth(strings.Join(domains, ", "))
}
