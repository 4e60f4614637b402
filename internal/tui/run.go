package tui

import (
	"context"
	"errors"
	"io"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// NewRenderer picks the colour profile for out; noColor (NO_COLOR) forces plain
// text so the symbols alone carry the state.
func NewRenderer(out io.Writer, noColor bool) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(out)
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}

// Run shows the dashboard full-screen on out until the operator quits or ctx
// ends; a proxy that goes away is shown, never returned as an error. A nil in
// reads the keyboard from stdin, or from the controlling terminal when stdin is
// redirected.
func Run(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	o.Context = ctx
	m := New(o)
	defer m.Close()
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out)}
	if in != nil {
		opts = append(opts, tea.WithInput(in))
	}
	p := tea.NewProgram(m, opts...)
	_, err := p.Run()
	if err != nil && ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled) {
		return nil // interrupted by a signal: a normal way to leave
	}
	return err
}
