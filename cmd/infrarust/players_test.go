package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

// wantInOrder fails unless out holds every string of want, in that order.
func wantInOrder(t *testing.T, out string, want ...string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("output lacks %q (in order):\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
}

func whereIs(rt *cliRuntime, name string) string {
	for _, p := range rt.Players("") {
		if p.Name == name {
			return p.Server + " " + p.Address
		}
	}
	return "gone"
}

// The players commands against a real admin API whose fake proxy really moves
// and kicks; each step sees the state the previous ones left.
func TestPlayersCommands(t *testing.T) {
	rt := newCLIRuntime()
	url, _ := startTestAdminWith(t, rt)
	conn := []string{"--admin-url", url, "--api-key", cliTestKey}
	steps := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
		check   func(t *testing.T)
	}{
		{"list", []string{"players", "list"}, []string{
			"NAME", "SERVER", "ADDRESS", "VERSION", "MODE", "ONLINE", "CLIENT", "MOVABLE",
			"Dinnerbone", "lobby", "10.0.0.1:25565", "protocol 999", "offline", "198.51.100.8", "yes",
			"jeb_", "survival", "[2001:db8::1]:25565", "1.8.9", "passthrough", "2001:db8::7", "no",
			"Notch", "lobby", "10.0.0.1:25565", "1.21.4", "offline", "198.51.100.7", "yes"}, "", nil},
		{"list one server", []string{"players", "list", "--server", "survival"}, []string{"jeb_"}, "", nil},
		{"list an empty server", []string{"players", "list", "--server", "hub"}, []string{"no players on hub"}, "", nil},
		{"list an unknown server", []string{"players", "list", "--server", "hubb"}, nil, `no server "hubb"; servers are: hub, lobby, survival`, nil},
		{"send, any case", []string{"players", "send", "notch", "hub"}, []string{"sent Notch to hub (10.0.5.1:25565)"}, "", func(t *testing.T) {
			if got := whereIs(rt, "Notch"); got != "hub 10.0.5.1:25565" {
				t.Fatalf("Notch is on %s", got)
			}
		}},
		{"send a passthrough player", []string{"players", "send", "jeb_", "lobby"}, nil, "jeb_ cannot be moved: the player's server is passthrough", nil},
		{"send to a passthrough server", []string{"players", "send", "Dinnerbone", "survival"}, nil, "Dinnerbone cannot be sent to survival", nil},
		{"send to where they are", []string{"players", "send", "Dinnerbone", "lobby"}, nil, "Dinnerbone is already on lobby", nil},
		{"send nobody", []string{"players", "send", "Herobrine", "hub"}, nil, `no player "Herobrine" is online`, nil},
		{"send without a server", []string{"players", "send", "Notch"}, nil, "players send takes NAME SERVER (got 1 argument(s))", nil},
		{"message", []string{"players", "message", "dinnerbone", "§eRestart", "in", "5", "minutes"}, []string{"told Dinnerbone on lobby: §eRestart in 5 minutes"}, "", nil},
		{"message a passthrough player", []string{"players", "message", "jeb_", "hi"}, nil, "jeb_ cannot be told", nil},
		{"message without text", []string{"players", "message", "Notch"}, nil, "players message takes NAME TEXT...", nil},
		{"broadcast to one server", []string{"players", "broadcast", "--server", "lobby", "Event", "now"}, []string{"told 1 players"}, "", func(t *testing.T) {
			if got := rt.Told(); !slices.Equal(got, []string{"Dinnerbone: §eRestart in 5 minutes", "Dinnerbone: Event now"}) {
				t.Fatalf("told %q", got)
			}
		}},
		{"kick with a reason", []string{"players", "kick", "DINNERBONE", "--reason", "AFK in spawn"}, []string{"kicked Dinnerbone from lobby: AFK in spawn"}, "", func(t *testing.T) {
			if got := rt.Kicks(); !slices.Equal(got, []string{"Dinnerbone: AFK in spawn"}) {
				t.Fatalf("kicks %q", got)
			}
		}},
		{"kick with the default reason", []string{"players", "kick", "jeb_"}, []string{"kicked jeb_ from survival: " + admin.DefaultKickReason}, "", nil},
		{"kick nobody", []string{"players", "kick", "Dinnerbone"}, nil, `no player "Dinnerbone" is online`, nil},
		{"list after", []string{"players", "list"}, []string{"Notch", "hub"}, "", func(t *testing.T) {
			if n := len(rt.Players("")); n != 1 {
				t.Fatalf("%d players left, want 1", n)
			}
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			out, err := runCLI(t, append(st.args, conn...)...)
			if st.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), st.wantErr) {
					t.Fatalf("err %v, want %q", err, st.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantInOrder(t, out, st.want...)
			if st.check != nil {
				st.check(t)
			}
		})
	}
}

func TestPlayersJSON(t *testing.T) {
	url, _ := startTestAdmin(t)
	conn := []string{"--admin-url", url, "--api-key", cliTestKey, "-o", "json"}
	out, err := runCLI(t, append([]string{"players", "list"}, conn...)...)
	var list []admin.Player
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list) != 3 || !list[2].Since.Equal(cliPlayersSince) {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	out, err = runCLI(t, append([]string{"players", "list", "--server", "hub"}, conn...)...)
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Fatalf("an empty list must be [] in JSON: %v %q", err, out)
	}
	out, err = runCLI(t, append([]string{"players", "send", "Notch", "hub"}, conn...)...)
	var p admin.Player
	if err != nil || json.Unmarshal([]byte(out), &p) != nil || p.Server != "hub" || p.ProxyMode != "client_only" {
		t.Fatalf("send -o json: %v\n%s", err, out)
	}
	out, err = runCLI(t, append([]string{"players", "kick", "Notch", "--reason", "bye"}, conn...)...)
	var k admin.KickResult
	if err != nil || json.Unmarshal([]byte(out), &k) != nil || k.Reason != "bye" || k.Player.Name != "Notch" {
		t.Fatalf("kick -o json: %v\n%s", err, out)
	}
}

func TestBackendsDrainMove(t *testing.T) {
	rt := newCLIRuntime()
	url, dir := startTestAdminWith(t, rt)
	conn := []string{"--admin-url", url, "--api-key", cliTestKey}

	out, err := runCLI(t, append([]string{"backends", "drain", "--move", "lobby", "10.0.0.1:25565"}, conn...)...)
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder(t, out, "drained 10.0.0.1:25565 on lobby: now draining, 0 active connection(s), 0 ejection(s); moved 2 player(s), 0 stayed\n")
	for _, who := range []string{"Notch", "Dinnerbone"} {
		if got := whereIs(rt, who); got != "lobby 10.0.0.2:25565" {
			t.Fatalf("%s on %s, want lobby's other address", who, got)
		}
	}
	store, err := admin.OpenDrainStore(dir)
	if err != nil || !store.Drained("lobby", "10.0.0.1:25565") {
		t.Fatalf("the drain was not stored: %v", err)
	}

	// lobby's last address: its players go to the fallback, hub.
	out, err = runCLI(t, append([]string{"backends", "drain", "lobby", "10.0.0.2:25565", "--move", "-o", "json"}, conn...)...)
	var res admin.ActionResult
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Move == nil || *res.Move != (admin.MoveResult{Moved: 2}) {
		t.Fatalf("drain --move -o json: %v\n%s", err, out)
	}
	if got := whereIs(rt, "Notch"); got != "hub 10.0.5.1:25565" {
		t.Fatalf("Notch on %s, want hub", got)
	}
	// hub has one address and no fallback: both stay, and the output says why.
	out, err = runCLI(t, append([]string{"backends", "drain", "--move", "hub", "10.0.5.1:25565"}, conn...)...)
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder(t, out, "drained 10.0.5.1:25565 on hub", "moved 0 player(s), 2 stayed (no other address or fallback server took them")

	// A passthrough server: the drain stands, nobody moves, the command fails with why.
	_, err = runCLI(t, append([]string{"backends", "drain", "--move", "survival", "[2001:db8::1]:25565"}, conn...)...)
	if err == nil || !strings.Contains(err.Error(), "drained [2001:db8::1]:25565 on survival (the drain stands), but its players were not moved") {
		t.Fatalf("err %v", err)
	}
	// --move belongs to drain alone.
	if _, err := runCLI(t, append([]string{"backends", "enable", "--move", "lobby", "10.0.0.1:25565"}, conn...)...); err == nil || !strings.Contains(err.Error(), "unknown flag: --move") {
		t.Fatalf("enable --move: %v", err)
	}
}

func TestPlayersCompletion(t *testing.T) {
	url, _ := startTestAdmin(t)
	refused := "http://" + testutil.RefusedAddr(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		// Only players who can be moved are offered to send.
		{"send: movable players", []string{"players", "send", ""}, []string{"Dinnerbone", "Notch"}},
		{"send: servers but their own", []string{"players", "send", "notch", ""}, []string{"hub", "survival"}},
		{"send: nothing after the server", []string{"players", "send", "Notch", "hub", ""}, nil},
		{"kick: every player", []string{"players", "kick", ""}, []string{"Dinnerbone", "jeb_", "Notch"}},
		{"kick: one name only", []string{"players", "kick", "Notch", ""}, nil},
		{"list --server", []string{"players", "list", "--server", ""}, []string{"hub", "lobby", "survival"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The connection flags go right after the subcommand, before any flag
			// whose value is being completed.
			args := append([]string{cobra.ShellCompNoDescRequestCmd}, tc.args[:2]...)
			args = append(args, "--admin-url", url, "--api-key", cliTestKey)
			out, err := runCLI(t, append(args, tc.args[2:]...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got := completionCandidates(out); !slices.Equal(got, tc.want) {
				t.Fatalf("candidates %q, want %q\n%s", got, tc.want, out)
			}
		})
	}
	t.Run("unreachable completes nothing", func(t *testing.T) {
		out, err := runCLI(t, cobra.ShellCompNoDescRequestCmd, "players", "kick", "--admin-url", refused, "")
		if err != nil || len(completionCandidates(out)) != 0 {
			t.Fatalf("%v %q", err, out)
		}
	})
	t.Run("descriptions say where the player is", func(t *testing.T) {
		out, err := runCLI(t, cobra.ShellCompRequestCmd, "players", "kick", "--admin-url", url, "--api-key", cliTestKey, "")
		if err != nil || !strings.Contains(out, "Notch\ton lobby (10.0.0.1:25565)") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}

func TestOnlineFor(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		since time.Time
		want  string
	}{
		{time.Time{}, "-"},
		{now.Add(time.Second), "0s"},
		{now.Add(-42 * time.Second), "42s"},
		{now.Add(-(3*time.Minute + 5*time.Second)), "3m05s"},
		{now.Add(-(2*time.Hour + 7*time.Minute)), "2h07m"},
		{now.Add(-(50 * time.Hour)), "2d02h"},
	} {
		if got := onlineFor(tc.since, now); got != tc.want {
			t.Errorf("onlineFor(%v) = %q, want %q", now.Sub(tc.since), got, tc.want)
		}
	}
}

// sleepyRuntime is the CLI runtime with hub asleep: a send there waits for
// its start (here, a pause) before the move.
type sleepyRuntime struct{ *cliRuntime }

func (r sleepyRuntime) Servers(now time.Time) []admin.ServerInfo {
	out := r.cliRuntime.Servers(now)
	for i := range out {
		if out[i].ID == "hub" {
			out[i].State = "sleeping"
		}
	}
	return out
}

func (r sleepyRuntime) SendPlayer(ctx context.Context, name, target string, force bool) (admin.Player, error) {
	time.Sleep(250 * time.Millisecond) // the server starting
	return r.cliRuntime.SendPlayer(ctx, name, target, force)
}

// A send to a sleeping server says what it waits for while it waits, then
// what happened; a send to an online one says nothing extra.
func TestPlayersSendShowsAWake(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 50 * time.Millisecond
	url, _ := startTestAdminWith(t, sleepyRuntime{newCLIRuntime()})
	out, errOut, err := runCLIStderr(t, "players", "send", "Notch", "hub", "--admin-url", url, "--api-key", cliTestKey)
	if err != nil || !strings.Contains(out, "sent Notch to hub") {
		t.Fatalf("send: %v\n%s%s", err, out, errOut)
	}
	wantInOrder(t, errOut, "hub is sleeping: the player is moved once it is online", "waiting for hub to start…")
	out, errOut, err = runCLIStderr(t, "players", "send", "Notch", "lobby", "--admin-url", url, "--api-key", cliTestKey)
	if err != nil || errOut != "" || !strings.Contains(out, "sent Notch to lobby") {
		t.Fatalf("send to an online server: %v\n%s%s", err, out, errOut)
	}
}
