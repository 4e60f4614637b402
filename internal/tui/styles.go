package tui

import (
	"github.com/charmbracelet/lipgloss"

	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// styles are built from one renderer so NO_COLOR and tests get plain text everywhere.
type styles struct {
	title, label, value, faint, bold lipgloss.Style
	paneFocused, paneBlurred         lipgloss.Style
	unknown, healthy, probing        lipgloss.Style
	unhealthy                        lipgloss.Style
	draining, ramp, full             lipgloss.Style
	err, ok, warn, cursor, prompt    lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	c := func(ansi string) lipgloss.Style { return r.NewStyle().Foreground(lipgloss.Color(ansi)) }
	return styles{
		title:       r.NewStyle().Bold(true).Foreground(lipgloss.Color("6")),
		label:       r.NewStyle().Faint(true),
		value:       r.NewStyle().Bold(true),
		faint:       r.NewStyle().Faint(true),
		bold:        r.NewStyle().Bold(true),
		paneFocused: r.NewStyle().Bold(true).Foreground(lipgloss.Color("6")),
		paneBlurred: r.NewStyle().Faint(true),
		unknown:     c("4"),
		healthy:     c("2"),
		probing:     c("3"),
		unhealthy:   c("1").Bold(true),
		draining:    c("5"),
		ramp:        c("3"),
		full:        c("2"),
		err:         c("1").Bold(true),
		ok:          c("2"),
		warn:        c("3"),
		cursor:      r.NewStyle().Bold(true).Foreground(lipgloss.Color("6")),
		prompt:      r.NewStyle().Bold(true).Foreground(lipgloss.Color("3")),
	}
}

func (s styles) state(state balance.State) lipgloss.Style {
	switch state {
	case balance.StateUnknown:
		return s.unknown
	case balance.StateHealthy:
		return s.healthy
	case balance.StateProbing:
		return s.probing
	case balance.StateUnhealthy:
		return s.unhealthy
	case balance.StateDraining:
		return s.draining
	}
	return s.faint
}
