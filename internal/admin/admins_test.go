package admin

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
)

func TestAdminRoutesStoreAndRefuse(t *testing.T) {
	var store *AdminStore
	env := newTestEnv(t, func(o *ServerOptions) {
		var err error
		if store, err = OpenAdminStore(o.Web.DataDir); err != nil {
			t.Fatal(err)
		}
		o.Admins = store
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
	if !store.Contains("STEVE", "") || !store.Contains("x", "069a79f4-44e9-4726-a5be-fca90e38aaf5") || store.Contains("Alex", "") {
		t.Fatal("Contains does not match a name in any case and a UUID")
	}
	reopened, err := OpenAdminStore(env.dir)
	if err != nil || !slices.Equal(reopened.List(), store.List()) {
		t.Fatalf("after a restart: %v %v, want %v", reopened.List(), err, store.List())
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
	if !strings.Contains(env.logs.String(), "permissions.deop") {
		t.Errorf("no audit line:\n%s", env.logs.String())
	}
}

func TestAdminStoreRefusesCorruptFile(t *testing.T) {
	for _, content := range []string{`{"steve": true}`, `null`, `["ste`} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, AdminsFileName), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenAdminStore(dir); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("%q: %v, want a corrupt-file error", content, err)
		}
	}
}

// Every route's body is bounded and no error repeats it: a body far over the
// limit is refused on every route that reads one, and a long value a route
// refuses is not sent back (a 200 MB body cost 1.67 GB, and its 400 echoed it).
func TestBodiesBoundedAndNeverEchoed(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) {
		store, err := OpenAdminStore(o.Web.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		o.Admins = store
	})
	huge := `{"player": "` + strings.Repeat("A", 4*maxBodyBytes) + `"}`
	long := `{"player": "` + strings.Repeat("B", 1000) + `"}`
	for _, path := range []string{
		"/api/v1/permissions/admins", "/api/v1/auth/accounts/Steve/password", "/api/v1/servers/lobby/maintenance",
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
