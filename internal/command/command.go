// Package command is the proxy's in-game command layer without the proxy: what a
// command is, how a typed line finds one, who may see it, and what the client is
// offered as completions. The built-in commands and the session plumbing live in
// internal/proxy; plugins register commands of the same type (infrarust.Command).
package command

import (
	"github.com/infrarust-go/infrarust/internal/player"

	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Source is who runs a command: a player in the game, through the handle
// everything beside the proxy's core acts on players with.
type Source = player.Player

// Arg is one argument of a command, as the client's command tree shows it.
type Arg struct {
	Name string
	// Greedy takes the rest of the line (a kick reason, a broadcast).
	Greedy bool
	// Optional arguments may be left out; everything after one is optional too.
	Optional bool
}

// Invocation is one run of a command.
type Invocation struct {
	Source Source
	// Label is the name or alias typed; Args the words after it (a greedy last
	// argument is one element with its spaces).
	Label string
	Args  []string
}

// Command is one command of the proxy, built in or registered by a plugin.
type Command struct {
	// Name is what players type; Aliases are other names for it.
	Name    string
	Aliases []string
	// Permission is what a player needs to see and run it; "" means everyone.
	Permission string
	// Usage is the arguments' synopsis ("<player> <server>"), shown on misuse.
	Usage string
	// Description is one line for /infrarust help.
	Description string
	// Args shape the node the client's tab completion and syntax colouring use.
	Args []Arg
	// Run carries the command out. It runs on a goroutine of its own (a move waits
	// for the client), one command at a time per player; ctx ends when the player
	// leaves or the proxy stops. An error is shown to the player in red.
	Run func(ctx context.Context, inv Invocation) error
	// Complete suggests values for the argument being typed (the last of
	// inv.Args, possibly ""); it must not block. nil suggests nothing.
	Complete func(inv Invocation) []string
}

// ErrUsage makes the player read the command's usage line.
var ErrUsage = errors.New("usage")

// Set is the commands of one configuration, looked up by label.
type Set struct {
	cmds    []*Command
	byLabel map[string]*Command
}

// NewSet indexes cmds; two commands claiming one label is an error that names both.
func NewSet(cmds ...*Command) (*Set, error) {
	s := &Set{byLabel: map[string]*Command{}}
	for _, c := range cmds {
		if c == nil || c.Run == nil {
			return nil, fmt.Errorf("command %q has no Run", nameOf(c))
		}
		for _, label := range c.Labels() {
			if !ValidLabel(label) {
				return nil, fmt.Errorf("command %q: %q is not a command name (letters, digits, - _ . only, at most 32)", c.Name, label)
			}
			if other := s.byLabel[label]; other != nil && other != c {
				return nil, fmt.Errorf("commands %q and %q both answer to /%s", other.Name, c.Name, label)
			}
			s.byLabel[label] = c
		}
		s.cmds = append(s.cmds, c)
	}
	return s, nil
}

func nameOf(c *Command) string {
	if c == nil {
		return "<nil>"
	}
	return c.Name
}

// ValidLabel reports whether s can be typed as a command name.
func ValidLabel(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// Labels are the command's name and aliases, lower-case.
func (c *Command) Labels() []string {
	out := []string{strings.ToLower(c.Name)}
	for _, a := range c.Aliases {
		out = append(out, strings.ToLower(a))
	}
	return out
}

// Allowed reports whether src may see and run c.
func (c *Command) Allowed(src Source) bool {
	return c.Permission == "" || src.HasPermission(c.Permission)
}

// Commands lists the set's commands in registration order.
func (s *Set) Commands() []*Command {
	if s == nil {
		return nil
	}
	return s.cmds
}

// Find is the command a label names (any case), nil when none.
func (s *Set) Find(label string) *Command {
	if s == nil {
		return nil
	}
	return s.byLabel[strings.ToLower(label)]
}

// Parse finds the command of a typed line (without its '/') that src may run; nil
// when the line is not one of the proxy's or src may not use it: such a line is
// the backend's, untouched.
func (s *Set) Parse(src Source, line string) (*Command, Invocation) {
	label, rest, _ := strings.Cut(line, " ")
	c := s.Find(label)
	if c == nil || !c.Allowed(src) {
		return nil, Invocation{}
	}
	return c, Invocation{Source: src, Label: strings.ToLower(label), Args: c.split(rest)}
}

// split cuts what follows the label into the command's arguments; a greedy last
// argument keeps its spaces.
func (c *Command) split(rest string) []string {
	var out []string
	for rest != "" {
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			break
		}
		if i := len(out); i < len(c.Args) && c.Args[i].Greedy {
			out = append(out, rest)
			break
		}
		word, tail, _ := strings.Cut(rest, " ")
		out = append(out, word)
		rest = tail
	}
	return out
}

// Complete answers a completion request for a line (without its '/') that is
// inside one of src's commands (a label and a space at least): the byte offset in
// line where the replaced word starts and the suggestions. ok is false when the
// line is not one of src's commands, and the backend answers it.
func (s *Set) Complete(src Source, line string) (start int, matches []string, ok bool) {
	label, rest, spaced := strings.Cut(line, " ")
	c := s.Find(label)
	if !spaced || c == nil || !c.Allowed(src) {
		return 0, nil, false
	}
	args := c.split(rest)
	if strings.HasSuffix(rest, " ") || rest == "" {
		args = append(args, "") // a new word is being started
	}
	if n := len(args); n > len(c.Args) || (n > 0 && c.Args[n-1].Greedy) || c.Complete == nil {
		return len(line), nil, true
	}
	typed := args[len(args)-1]
	start = len(line) - len(typed)
	for _, m := range safeComplete(c, Invocation{Source: src, Label: strings.ToLower(label), Args: args}) {
		if strings.HasPrefix(strings.ToLower(m), strings.ToLower(typed)) {
			matches = append(matches, m)
		}
	}
	slices.Sort(matches)
	return start, slices.Compact(matches), true
}

// safeComplete keeps a plugin's panicking completer from ending the player's session.
func safeComplete(c *Command, inv Invocation) (out []string) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	return c.Complete(inv)
}

// Labels lists the labels src may use that start with prefix (any case), sorted:
// the root completion of clients before 1.13.
func (s *Set) Labels(src Source, prefix string) []string {
	var out []string
	prefix = strings.ToLower(prefix)
	for label, c := range s.byLabel {
		if strings.HasPrefix(label, prefix) && c.Allowed(src) {
			out = append(out, label)
		}
	}
	slices.Sort(out)
	return out
}

// Run carries out inv with c, recovering a panic into an error, and tells the
// player how it went wrong when it did.
func Run(ctx context.Context, c *Command, inv Invocation, usage func(label, synopsis string) string, failed func(err error) string) {
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("internal error (%v)", r)
			}
		}()
		return c.Run(ctx, inv)
	}()
	switch {
	case err == nil:
	case errors.Is(err, ErrUsage):
		inv.Source.Tell(usage(inv.Label, c.Usage))
	default:
		inv.Source.Tell(failed(err))
	}
}
