package admin

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/perms"
)

func TestAdminRoutesStoreAndRefuse(t *testing.T) {
	var store *perms.File
	env := newTestEnv(t, func(o *ServerOptions) {
		var err error
		if store, err = perms.OpenFile(o.Web.DataDir); err != nil {
			t.Fatal(err)
		}
		o.Permissions = store
		cfg := config.Default()
		cfg.Permissions.Admins = []string{"Notch"}
		o.Config = func() *config.Config { return cfg }
	})
	c := NewClient(env.http.URL, testKey)
	v, err := c.Op(context.Background(), "Steve")
	if err != nil || !slices.Equal(v.Stored, []string{"steve"}) || !slices.Equal(v.Configured, []string{"Notch"}) {
		t.Fatalf("client Op: %+v %v", v, err)
	}
	if _, err := c.Deop(context.Background(), "Notch"); err == nil || !strings.Contains(err.Error(), "[permissions] admins") {
		t.Fatalf("client Deop of a configured admin: %v", err)
	}
	if v, err := c.Admins(context.Background()); err != nil || len(v.Stored) != 1 {
		t.Fatalf("client Admins: %+v %v", v, err)
	}
	status, _, body := env.call(t, "POST", "/api/v1/permissions/admins", testKey, `{"player": "Steve"}`)
	if status != 200 || !strings.Contains(body, `"stored":["steve"]`) || !strings.Contains(body, `"configured":["Notch"]`) {
		t.Fatalf("op: %d %s", status, body)
	}
	status, _, body = env.call(t, "POST", "/api/v1/permissions/admins", testKey, `{"player": "069A79F444E94726A5BEFCA90E38AAF5"}`)
	if status != 200 || !strings.Contains(body, `"069a79f4-44e9-4726-a5be-fca90e38aaf5"`) {
		t.Fatalf("op by UUID: %d %s", status, body)
	}
	doc, _ := store.Load(context.Background())
	rules := perms.Compile(nil, doc)
	if !rules.Admin(perms.Player{Name: "STEVE", Trusted: true}) || !rules.Admin(perms.Player{Name: "x", UUID: "069a79f4-44e9-4726-a5be-fca90e38aaf5", Trusted: true}) || rules.Admin(perms.Player{Name: "Alex", Trusted: true}) {
		t.Fatal("the stored admins do not match a name in any case and a UUID")
	}
	reopened, err := perms.OpenFile(env.dir)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := reopened.Load(context.Background()); !slices.Equal(again.Groups["admins"].Members, doc.Groups["admins"].Members) {
		t.Fatalf("after a restart: %v, want %v", again.Groups["admins"].Members, doc.Groups["admins"].Members)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/api/v1/permissions/admins", `{"player": "has space"}`, 400, "BAD_REQUEST"},
		{"POST", "/api/v1/permissions/admins", `{}`, 400, "BAD_REQUEST"},
		{"POST", "/api/v1/permissions/admins", `{"player": "x", "role": "god"}`, 400, "BAD_REQUEST"},
		{"DELETE", "/api/v1/permissions/admins/Notch", "", 409, "CONFIGURED"},
	} {
		status, _, body := env.call(t, tc.method, tc.path, testKey, tc.body)
		if status != tc.status || !strings.Contains(body, tc.code) {
			t.Errorf("%s %s %s: %d %s, want %d %s", tc.method, tc.path, tc.body, status, body, tc.status, tc.code)
		}
	}
	if status, _, _ := env.call(t, "GET", "/api/v1/permissions/admins", "wrong-key-wrong-key", ""); status != 401 {
		t.Errorf("a wrong key listed the admins: %d", status)
	}
	status, _, body = env.call(t, "DELETE", "/api/v1/permissions/admins/steve", testKey, "")
	if status != 200 || strings.Contains(body, `"steve"`) {
		t.Fatalf("deop: %d %s", status, body)
	}
	if !strings.Contains(env.logs.String(), "permissions.remove") {
		t.Errorf("no audit line:\n%s", env.logs.String())
	}
}

// The group routes change the stored groups, show the file's beside them,
// and refuse what cannot be stored or removed, saying why.
func TestGroupRoutes(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) {
		store, err := perms.OpenFile(o.Web.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		o.Permissions = store
		cfg := config.Default()
		cfg.Permissions.Groups = map[string]config.PermissionGroup{"helper": {Permissions: []string{"infrarust.command.find"}, Members: []string{"Hana"}}}
		o.Config = func() *config.Config { return cfg }
	})
	c := NewClient(env.http.URL, testKey)
	ctx := context.Background()
	for _, ch := range []perms.Change{
		{Op: perms.OpGrant, Group: "moderator", Value: "infrarust.command.kick"},
		{Op: perms.OpAdd, Group: "moderator", Value: "Kate"},
		{Op: perms.OpCreate, Group: "lobby-staff", Servers: []string{"lobby"}},
		{Op: perms.OpGrant, Group: "lobby-staff", Value: "infrarust.command.*"},
		{Op: perms.OpGrant, Group: "helper", Value: "infrarust.command.glist"},
	} {
		if _, err := c.ChangePermissions(ctx, ch); err != nil {
			t.Fatalf("%+v: %v", ch, err)
		}
	}
	v, err := c.Permissions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]GroupView{}
	for _, g := range v.Groups {
		byName[g.Name] = g
	}
	if g := byName["moderator"]; g.Stored == nil || !slices.Equal(g.Stored.Members, []string{"kate"}) || !slices.Equal(g.Stored.Permissions, []string{"infrarust.command.kick"}) || g.Configured != nil {
		t.Errorf("moderator: %+v", g)
	}
	if g := byName["helper"]; g.Configured == nil || g.Stored == nil || !slices.Equal(g.Stored.Permissions, []string{"infrarust.command.glist"}) {
		t.Errorf("helper (file and stored): %+v", g)
	}
	if g := byName["default"]; g.Configured == nil || !slices.Contains(g.Configured.Permissions, "infrarust.command.server") {
		t.Errorf("default (player_commands): %+v", g)
	}
	if g := byName["lobby-staff"]; g.Stored == nil || !slices.Equal(g.Stored.Servers, []string{"lobby"}) {
		t.Errorf("lobby-staff: %+v", g)
	}
	if v.Version != 5 || !strings.HasSuffix(v.Store, "permissions.json") {
		t.Errorf("store %q version %d", v.Store, v.Version)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/api/v1/permissions/groups/moderator/permissions", `{"permission": "infrarust command"}`, 400, "BAD_REQUEST"},
		{"POST", "/api/v1/permissions/groups/Bad%20Name/permissions", `{"permission": "infrarust.command.kick"}`, 400, "BAD_REQUEST"},
		{"POST", "/api/v1/permissions/groups/admins/permissions", `{"permission": "infrarust.command.kick"}`, 400, "BAD_REQUEST"},
		{"POST", "/api/v1/permissions/groups/default/members", `{"player": "Kate"}`, 400, "BAD_REQUEST"},
		{"DELETE", "/api/v1/permissions/groups/moderator/permissions/infrarust.command.send", "", 404, "NOT_STORED"},
		{"DELETE", "/api/v1/permissions/groups/helper/members/Hana", "", 409, "CONFIGURED"},
		{"DELETE", "/api/v1/permissions/groups/nobody", "", 404, "NOT_STORED"},
		{"PUT", "/api/v1/permissions/groups/x", `{"servers": ["a b"]}`, 400, "BAD_REQUEST"},
		{"PUT", "/api/v1/permissions/groups/helper", `{"servers": ["lobby"]}`, 409, "CONFIGURED"},
		{"DELETE", "/api/v1/permissions/groups/default", "", 409, "group default is in"},
	} {
		status, _, body := env.call(t, tc.method, tc.path, testKey, tc.body)
		if status != tc.status || !strings.Contains(body, tc.code) {
			t.Errorf("%s %s %s: %d %s, want %d %s", tc.method, tc.path, tc.body, status, body, tc.status, tc.code)
		}
	}
	if _, err := c.ChangePermissions(ctx, perms.Change{Op: perms.OpDelete, Group: "moderator"}); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Permissions(ctx); v.Version != 6 {
		t.Errorf("after the delete: version %d", v.Version)
	}
	if !strings.Contains(env.logs.String(), "permissions.grant") || !strings.Contains(env.logs.String(), "permissions.delete") {
		t.Errorf("no audit lines:\n%s", env.logs.String())
	}
}

// Every route's body is bounded and no error repeats it: a body far over the
// limit is refused on every route that reads one, and a long value a route
// refuses is not sent back (a 200 MB body cost 1.67 GB, and its 400 echoed it).
func TestBodiesBoundedAndNeverEchoed(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) {
		store, err := perms.OpenFile(o.Web.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		o.Permissions = store
	})
	huge := `{"player": "` + strings.Repeat("A", 4*maxBodyBytes) + `"}`
	long := `{"player": "` + strings.Repeat("B", 1000) + `"}`
	for _, path := range []string{
		"/api/v1/permissions/admins", "/api/v1/permissions/groups/mod/permissions", "/api/v1/permissions/groups/mod/members", "/api/v1/auth/accounts/Steve/password", "/api/v1/servers/lobby/maintenance",
		"/api/v1/bans", "/api/v1/players/Steve/send", "/api/v1/players/Steve/kick",
	} {
		status, _, body := env.call(t, "POST", path, testKey, huge)
		if status < 400 || status == 500 || len(body) > 1024 || strings.Contains(body, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") {
			t.Errorf("POST %s with a %d-byte body: %d, %d bytes back: %.200s", path, len(huge), status, len(body), body)
		}
	}
	status, _, body := env.call(t, "POST", "/api/v1/permissions/admins", testKey, long)
	if status != 400 || strings.Contains(body, strings.Repeat("B", 50)) {
		t.Errorf("a refused long name: %d %.300s", status, body)
	}
}

// DELETE /api/v1/verify/passes/{who} forgets a name's or an address's passes,
// refuses anything else, and answers 503 where the proxy keeps none.
func TestForgetVerifiedRoute(t *testing.T) {
	var got []string
	env := newTestEnv(t, func(o *ServerOptions) {
		o.ForgetVerified = func(_ context.Context, who string) (int, error) {
			got = append(got, who)
			return 2, nil
		}
	})
	c := NewClient(env.http.URL, testKey)
	for _, who := range []string{"Steve", "203.0.113.7", "2001:db8::7"} {
		if res, err := c.ForgetVerified(context.Background(), who); err != nil || res.Forgotten != 2 || res.Who != who {
			t.Fatalf("forget %s: %+v, %v", who, res, err)
		}
	}
	if !slices.Equal(got, []string{"Steve", "203.0.113.7", "2001:db8::7"}) {
		t.Fatalf("forgot %v", got)
	}
	if status, _, body := env.call(t, "DELETE", "/api/v1/verify/passes/not%20a%20name", testKey, ""); status != 400 || strings.Contains(body, "not a name") {
		t.Fatalf("a bad name: %d %s", status, body)
	}
	if status, _, _ := env.call(t, "DELETE", "/api/v1/verify/passes/Steve", "", ""); status != 401 {
		t.Fatalf("without a key: %d", status)
	}
	none := newTestEnv(t)
	if status, _, _ := none.call(t, "DELETE", "/api/v1/verify/passes/Steve", testKey, ""); status != 503 {
		t.Fatalf("a proxy without passes: %d", status)
	}
}
