package perms

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/seal"
)

func TestRules(t *testing.T) {
	file := FileGroups(config.Permissions{
		Admins:         []string{"Notch"},
		PlayerCommands: []string{"server", "GLIST"},
		Groups: map[string]config.PermissionGroup{
			"moderator":   {Permissions: []string{"infrarust.command.kick", "infrarust.command.find"}, Members: []string{"Kate", "069a79f4-44e9-4726-a5be-fca90e38aaf5"}},
			"lobby-staff": {Permissions: []string{"infrarust.command.*"}, Members: []string{"Bob"}, Servers: []string{"lobby"}},
		},
	})
	stored := Doc{Groups: map[string]Group{"moderator": {Permissions: []string{"infrarust.command.broadcast"}}, "builders": {Permissions: []string{"plugin.build"}, Members: []string{"kate"}}}}
	r := Compile(file, stored)
	kate := Player{Name: "KATE", Trusted: true}
	byUUID := Player{Name: "Renamed", UUID: "069a79f4-44e9-4726-a5be-fca90e38aaf5", Trusted: true}
	bob := Player{Name: "Bob", Trusted: true}
	anon := Player{Name: "Alex", Trusted: true}
	for _, tc := range []struct {
		who    Player
		server string
		perm   string
		want   bool
	}{
		{anon, "", "infrarust.command.server", true},
		{anon, "", "infrarust.command.glist", true},
		{anon, "", "infrarust.command.kick", false},
		{kate, "", "infrarust.command.kick", true},
		{kate, "", "infrarust.command.send", false},
		{kate, "", "infrarust.command.broadcast", true}, // the stored half of moderator
		{kate, "", "plugin.build", true},
		{byUUID, "", "infrarust.command.find", true},
		{Player{Name: "Kate"}, "", "infrarust.command.kick", false}, // not trusted: default only
		{Player{Name: "Kate"}, "", "infrarust.command.server", true},
		{bob, "lobby", "infrarust.command.send", true},
		{bob, "survival", "infrarust.command.send", false},
		{bob, "", "infrarust.command.send", false},
		{bob, "lobby", "plugin.other", false},
		{Player{Name: "notch", Trusted: true}, "survival", "anything.at.all", true},
		{Player{Name: "notch"}, "survival", "infrarust.command.send", false},
	} {
		if got := r.Allows(tc.who, tc.server, tc.perm); got != tc.want {
			t.Errorf("%+v on %q asking %s: %v, want %v", tc.who, tc.server, tc.perm, got, tc.want)
		}
	}
	if !r.Admin(Player{Name: "Notch", Trusted: true}) || r.Admin(kate) || r.Admin(bob) {
		t.Error("Admin")
	}
	if got := r.GroupsOf(kate, ""); !slices.Equal(got, []string{"builders", "default", "moderator"}) {
		t.Errorf("kate's groups: %v", got)
	}
	// A file default group replaces player_commands.
	r = Compile(FileGroups(config.Permissions{PlayerCommands: []string{"server"}, Groups: map[string]config.PermissionGroup{"default": {Permissions: []string{"infrarust.command.find"}}}}), Doc{})
	if r.Allows(anon, "", "infrarust.command.server") || !r.Allows(anon, "", "infrarust.command.find") {
		t.Error("a [permissions.groups.default] does not replace player_commands")
	}
}

func TestChangeChecks(t *testing.T) {
	for _, c := range []Change{
		{Op: OpGrant, Group: "Bad Name", Value: "infrarust.command.kick"},
		{Op: OpGrant, Group: "mod", Value: "infrarust..kick"},
		{Op: OpGrant, Group: "mod", Value: "*.command"},
		{Op: OpGrant, Group: "mod", Value: strings.Repeat("a", 200)},
		{Op: OpGrant, Group: Admins, Value: "infrarust.command.kick"},
		{Op: OpAdd, Group: "mod", Value: "not a name"},
		{Op: OpAdd, Group: Default, Value: "Kate"},
		{Op: OpCreate, Group: Admins, Servers: []string{"lobby"}},
		{Op: "promote", Group: "mod"},
	} {
		if _, err := c.Check(); err == nil {
			t.Errorf("%+v passed", c)
		}
	}
	c, err := Change{Op: OpAdd, Group: " Mod ", Value: "069A79F444E94726A5BEFCA90E38AAF5"}.Check()
	if err != nil || c.Group != "mod" || c.Value != "069a79f4-44e9-4726-a5be-fca90e38aaf5" {
		t.Errorf("normal form: %+v %v", c, err)
	}
}

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	// A store from before groups: its admins become the admins group's members.
	if err := os.WriteFile(filepath.Join(dir, "admins.json"), []byte(`["Steve", "not valid!"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if d, _ := f.Load(ctx); !slices.Equal(d.Groups[Admins].Members, []string{"steve"}) {
		t.Fatalf("imported admins: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "admins.json.imported")); err != nil {
		t.Errorf("the old file was not set aside: %v", err)
	}
	if _, changed, err := f.Update(ctx, Change{Op: OpGrant, Group: "mod", Value: "infrarust.command.kick"}); err != nil || !changed {
		t.Fatal(changed, err)
	}
	if _, changed, err := f.Update(ctx, Change{Op: OpGrant, Group: "mod", Value: "infrarust.command.kick"}); err != nil || changed {
		t.Fatal("a repeated grant changed something", err)
	}
	if _, _, err := f.Update(ctx, Change{Op: OpRevoke, Group: "mod", Value: "infrarust.command.send"}); !errors.Is(err, ErrNotStored) {
		t.Fatalf("revoking what is not stored: %v", err)
	}
	again, err := OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := again.Load(ctx); d.Version != 1 || !slices.Equal(d.Groups["mod"].Permissions, []string{"infrarust.command.kick"}) {
		t.Fatalf("after a restart: %+v", d)
	}
	for _, content := range []string{`["steve"]`, `{"groups": 3}`, `{"gro`} {
		bad := t.TempDir()
		if err := os.WriteFile(filepath.Join(bad, FileName), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenFile(bad); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("%q: %v, want a corrupt-file error", content, err)
		}
	}
}

// In the fleet's Redis the document is signed and only grows: a change made
// through one proxy reaches the other's Follow; an unsigned, forged or older
// document is never applied.
func TestRedisStore(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	s := seal.New([]byte("fleet-secret-0123456789"))
	a, b := NewRedis(rdb, "t:", s), NewRedis(rdb, "t:", s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan Doc, 16)
	refused := make(chan error, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Follow(ctx, func(d Doc) { got <- d }, func(err error) { refused <- err })
	}()
	next := func() Doc {
		t.Helper()
		select {
		case d := <-got:
			return d
		case <-time.After(5 * time.Second):
			t.Fatal("no document followed")
			return Doc{}
		}
	}
	if d := next(); d.Version != 0 {
		t.Fatalf("first: %+v", d)
	}
	if _, _, err := a.Update(ctx, Change{Op: OpAdd, Group: Admins, Value: "Kate"}); err != nil {
		t.Fatal(err)
	}
	v1 := next()
	if v1.Version <= 0 || !slices.Equal(v1.Groups[Admins].Members, []string{"kate"}) {
		t.Fatalf("followed: %+v", v1)
	}
	old, _ := mr.Get("t:permissions")
	if _, _, err := a.Update(ctx, Change{Op: OpRemove, Group: Admins, Value: "Kate"}); err != nil {
		t.Fatal(err)
	}
	v2 := next()
	if v2.Version <= v1.Version || len(v2.Groups[Admins].Members) != 0 {
		t.Fatalf("followed: %+v", v2)
	}
	for _, forged := range []string{
		`{"version":9,"groups":{"admins":{"members":["mallory"]}}}`, // unsigned
		`{"version":9,"groups":{"admins":{"members":["mallory"]}},"seal":"AAAA"}`,
		old, // a replay of version 1, when Kate was an admin
	} {
		mr.Set("t:permissions", forged)
		rdb.Publish(ctx, "t:permissions:changed", "9")
		select {
		case err := <-refused:
			t.Logf("refused: %v", err)
		case d := <-got:
			t.Fatalf("applied %q: %+v", forged, d)
		case <-time.After(5 * time.Second):
			t.Fatalf("%q was neither applied nor refused", forged)
		}
	}
	if d, err := b.Load(ctx); err == nil || len(d.Groups[Admins].Members) != 0 {
		t.Fatalf("after the forgeries: %+v %v", d, err)
	}
	// A change written over a forged document builds on the last good one.
	d3, _, err := b.Update(ctx, Change{Op: OpGrant, Group: "mod", Value: "infrarust.command.kick"})
	if err != nil || d3.Version <= v2.Version || len(d3.Groups[Admins].Members) != 0 {
		t.Fatalf("update over a forgery: %+v %v", d3, err)
	}
	// Redis loses the key (a restart without persistence): the next read
	// puts back the newest document, so a proxy that starts then has it.
	mr.Del("t:permissions")
	if d, err := b.Load(ctx); err != nil || d.Version != d3.Version {
		t.Fatalf("read after the loss: %+v %v", d, err)
	}
	fresh := NewRedis(rdb, "t:", s)
	if d, err := fresh.Load(ctx); err != nil || !slices.Equal(d.Groups["mod"].Permissions, []string{"infrarust.command.kick"}) {
		t.Fatalf("a proxy started after the loss: %+v %v", d, err)
	}
	// A proxy with another secret never read a good document: it refuses to
	// write over the fleet's groups rather than drop them all.
	other := NewRedis(rdb, "t:", seal.New([]byte("another-secret-0123456789")))
	if _, _, err := other.Update(ctx, Change{Op: OpAdd, Group: Admins, Value: "Mallory"}); err == nil || !strings.Contains(err.Error(), "not writing over it") {
		t.Fatalf("another secret's update: %v", err)
	}
	if d, err := fresh.Load(ctx); err != nil || len(d.Groups[Admins].Members) != 0 || len(d.Groups["mod"].Permissions) != 1 {
		t.Fatalf("after the refused update: %+v %v", d, err)
	}
	cancel()
	<-done
}

// The check a command tree's merge makes per command: the roles' Allows
// against the baseline of the check before roles (player_commands alone),
// for a network with 20 groups of 10 permissions and 50 members each.
func BenchmarkAllows(b *testing.B) {
	p := config.Permissions{PlayerCommands: []string{"server", "glist", "find", "hub"}, Admins: []string{"Notch"}, Groups: map[string]config.PermissionGroup{}}
	for g := range 20 {
		var grp config.PermissionGroup
		for i := range 10 {
			grp.Permissions = append(grp.Permissions, fmt.Sprintf("plugin%d.command.c%d", g, i))
		}
		for m := range 50 {
			grp.Members = append(grp.Members, fmt.Sprintf("member%d_%d", g, m))
		}
		p.Groups[fmt.Sprintf("group-%d", g)] = grp
	}
	r := Compile(FileGroups(p), Doc{})
	who := Player{Name: "member19_49", Trusted: true}
	b.Run("baseline_player_commands", func(b *testing.B) {
		for b.Loop() {
			_ = p.IsPlayerCommand("kick")
		}
	})
	b.Run("roles", func(b *testing.B) {
		for b.Loop() {
			_ = r.Allows(who, "lobby", "infrarust.command.kick")
		}
	})
}
