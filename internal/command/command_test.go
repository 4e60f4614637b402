package command

import (
	"github.com/infrarust-go/infrarust/internal/player"

	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fakeSource is a player on the lobby.
func fakeSource(name string, perms map[string]bool) *player.Fake {
	return &player.Fake{Username: name, On: "lobby", Permissions: perms}
}

func noop(context.Context, Invocation) error { return nil }

func testSet(t *testing.T) *Set {
	t.Helper()
	s, err := NewSet(
		&Command{Name: "server", Aliases: []string{"hub"}, Permission: "p.server", Args: []Arg{{Name: "server", Optional: true}}, Run: noop,
			Complete: func(Invocation) []string { return []string{"survival", "lobby", "creative"} }},
		&Command{Name: "kick", Permission: "p.kick", Args: []Arg{{Name: "player"}, {Name: "reason", Greedy: true, Optional: true}}, Run: noop,
			Complete: func(Invocation) []string { return []string{"Steve", "Alex"} }},
		&Command{Name: "ping", Run: noop},
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseFindsOnlyCommandsThePlayerMayUse(t *testing.T) {
	s := testSet(t)
	player := fakeSource("p", map[string]bool{"p.server": true})
	c, inv := s.Parse(player, "HUB survival")
	if c == nil || c.Name != "server" || inv.Label != "hub" || !slices.Equal(inv.Args, []string{"survival"}) {
		t.Fatalf("Parse(HUB survival) = %v %+v", c, inv)
	}
	if c, _ := s.Parse(player, "kick Steve"); c != nil {
		t.Fatal("a player without p.kick got /kick: it must go to the backend untouched")
	}
	if c, _ := s.Parse(player, "say hello"); c != nil {
		t.Fatal("a backend command was taken")
	}
	if c, _ := s.Parse(player, "ping"); c == nil {
		t.Fatal("a command without permission is for everyone")
	}
	admin := fakeSource("", map[string]bool{"p.kick": true})
	_, inv = s.Parse(admin, "kick Steve  griefing the  spawn")
	if !slices.Equal(inv.Args, []string{"Steve", "griefing the  spawn"}) {
		t.Fatalf("greedy reason = %q", inv.Args)
	}
}

func TestNewSetRefusesTwoCommandsOnOneLabel(t *testing.T) {
	_, err := NewSet(&Command{Name: "server", Run: noop}, &Command{Name: "hub", Aliases: []string{"Server"}, Run: noop})
	if err == nil || !strings.Contains(err.Error(), `"server" and "hub"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewSet(&Command{Name: "bad name", Run: noop}); err == nil {
		t.Fatal("a label with a space was accepted")
	}
	if _, err := NewSet(&Command{Name: "x"}); err == nil {
		t.Fatal("a command without Run was accepted")
	}
}

func TestCompleteAnswersOnlyInsideTheProxysCommands(t *testing.T) {
	s := testSet(t)
	player := fakeSource("", map[string]bool{"p.server": true})
	start, m, ok := s.Complete(player, "server su")
	if !ok || start != len("server ") || !slices.Equal(m, []string{"survival"}) {
		t.Fatalf("Complete(server su) = %d %v %v", start, m, ok)
	}
	start, m, ok = s.Complete(player, "hub ")
	if !ok || start != len("hub ") || !slices.Equal(m, []string{"creative", "lobby", "survival"}) {
		t.Fatalf("Complete(hub ) = %d %v %v", start, m, ok)
	}
	if _, _, ok := s.Complete(player, "serv"); ok {
		t.Fatal("a label being typed is the root's completion (the client's tree, or the backend before 1.13)")
	}
	if _, _, ok := s.Complete(player, "kick St"); ok {
		t.Fatal("a command the player may not use was completed")
	}
	if _, m, ok := s.Complete(player, "server lobby extra"); !ok || m != nil {
		t.Fatalf("past the last argument: %v %v", m, ok)
	}
	admin := fakeSource("", map[string]bool{"p.kick": true})
	if _, m, _ := s.Complete(admin, "kick Steve gri"); m != nil {
		t.Fatalf("a greedy argument got suggestions %v", m)
	}
}

func TestLabelsForTheRootCompletion(t *testing.T) {
	s := testSet(t)
	player := fakeSource("", map[string]bool{"p.server": true})
	if got := s.Labels(player, "s"); !slices.Equal(got, []string{"server"}) {
		t.Fatalf("Labels(s) = %v", got)
	}
	if got := s.Labels(player, ""); !slices.Equal(got, []string{"hub", "ping", "server"}) {
		t.Fatalf("Labels() = %v", got)
	}
}

func TestRunTellsUsageAndErrorsAndSurvivesAPanic(t *testing.T) {
	src := fakeSource("", nil)
	usage := func(label, synopsis string) string { return "usage /" + label + " " + synopsis }
	failed := func(err error) string { return "failed: " + err.Error() }
	inv := Invocation{Source: src, Label: "x"}
	Run(context.Background(), &Command{Usage: "<a>", Run: func(context.Context, Invocation) error { return ErrUsage }}, inv, usage, failed)
	Run(context.Background(), &Command{Run: func(context.Context, Invocation) error { return errors.New("boom") }}, inv, usage, failed)
	Run(context.Background(), &Command{Run: func(context.Context, Invocation) error { panic("plugin bug") }}, inv, usage, failed)
	want := []string{"usage /x <a>", "failed: boom", "failed: internal error (plugin bug)"}
	if !slices.Equal(src.Told, want) {
		t.Fatalf("told %q, want %q", src.Told, want)
	}
	// A panicking completer suggests nothing instead of ending the session.
	s, _ := NewSet(&Command{Name: "p", Args: []Arg{{Name: "a"}}, Run: noop, Complete: func(Invocation) []string { panic("x") }})
	if _, m, ok := s.Complete(src, "p "); !ok || m != nil {
		t.Fatalf("panicking completer: %v %v", m, ok)
	}
}
