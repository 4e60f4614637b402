package admin

import (
	"context"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/accounts"
)

func TestAccountRoutes(t *testing.T) {
	var svc *accounts.Service
	env := newTestEnv(t, func(o *ServerOptions) {
		store, err := accounts.OpenBolt(o.Web.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		svc = &accounts.Service{Store: store, Hasher: accounts.NewHasher(accounts.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1}, 1),
			Rules: accounts.Rules{MinLength: 6, MaxLength: 32}}
		o.Accounts = func() *accounts.Service { return svc }
	})
	ctx := context.Background()
	if r := svc.Handle(ctx, "Steve", "203.0.113.7", "register hunter22 hunter22"); !r.Authenticated {
		t.Fatal(r)
	}
	c := NewClient(env.http.URL, testKey)
	list, err := c.Accounts(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "Steve" || list[0].RegisteredIP != "203.0.113.7" {
		t.Fatalf("Accounts: %+v %v", list, err)
	}
	status, _, body := env.call(t, "GET", "/api/v1/auth/accounts/steve", testKey, "")
	if status != 200 || strings.Contains(body, "argon2") || strings.Contains(body, "hash") {
		t.Fatalf("an account's answer: %d %s (the hash must never leave the proxy)", status, body)
	}
	if _, err := c.ResetPassword(ctx, "STEVE", "operator1"); err != nil {
		t.Fatal(err)
	}
	if r := svc.Handle(ctx, "Steve", "203.0.113.7", "login operator1"); r.Reply != accounts.ReplyLoggedIn {
		t.Fatalf("login with the reset password: %+v", r)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"GET", "/api/v1/auth/accounts/Alex", "", 404, "NOT_FOUND"},
		{"GET", "/api/v1/auth/accounts/bad%20name", "", 400, "BAD_REQUEST"},
		{"POST", "/api/v1/auth/accounts/Steve/password", `{"password": "abc"}`, 400, "BAD_REQUEST"},
		{"POST", "/api/v1/auth/accounts/Steve/password", `{"password": "has space1"}`, 400, "BAD_REQUEST"},
		{"POST", "/api/v1/auth/accounts/Steve/password", `{"pw": "x"}`, 400, "BAD_REQUEST"},
		{"POST", "/api/v1/auth/accounts/Alex/password", `{"password": "longenough"}`, 404, "NOT_FOUND"},
		{"DELETE", "/api/v1/auth/accounts/Alex", "", 404, "NOT_FOUND"},
		{"GET", "/api/v1/auth/accounts", "", 401, ""},
	} {
		key := testKey
		if tc.status == 401 {
			key = "wrong-key-wrong-key-wrong-key-00"
		}
		status, _, body := env.call(t, tc.method, tc.path, key, tc.body)
		if status != tc.status || !strings.Contains(body, tc.code) {
			t.Errorf("%s %s %s: %d %s, want %d %s", tc.method, tc.path, tc.body, status, body, tc.status, tc.code)
		}
	}
	if err := c.Unregister(ctx, "steve"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Account(ctx, "Steve"); err == nil || !strings.Contains(err.Error(), "no account") {
		t.Fatalf("after unregister: %v", err)
	}
}

// Without a server using "auth" the routes say why, not 404.
func TestAccountRoutesWithoutAuthLimbo(t *testing.T) {
	env := newTestEnv(t, func(*ServerOptions) {})
	status, _, body := env.call(t, "GET", "/api/v1/auth/accounts", testKey, "")
	if status != 503 || !strings.Contains(body, `limbo_handlers = [\"auth\"]`) {
		t.Fatalf("%d %s", status, body)
	}
}
