package admin

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"

	"github.com/infrarust-go/infrarust/internal/bans"
)

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClientRoundTrip(t *testing.T) {
	env := newTestEnv(t)
	c := NewClient(env.http.URL+"/", testKey)
	ctx := ctx5(t)
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	servers, err := c.Servers(ctx)
	if err != nil || len(servers) != 2 {
		t.Fatalf("servers %v %v", servers, err)
	}
	b, err := c.Backends(ctx, "lobby")
	if err != nil || len(b.Backends) != 3 || b.Server != "lobby" {
		t.Fatalf("backends %+v %v", b, err)
	}
	all, err := c.AllBackends(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("all %v %v", all, err)
	}
	res, err := c.Drain(ctx, "lobby", "[2001:db8::1]:25565")
	if err != nil || res.Backend.State != "draining" || res.Action != "drain" {
		t.Fatalf("drain %+v %v", res, err)
	}
	if res, err = c.Enable(ctx, "lobby", "[2001:db8::1]:25565"); err != nil || res.Backend.State != "unhealthy" {
		t.Fatalf("enable %+v %v", res, err)
	}
	if res, err = c.Reset(ctx, "lobby", "[2001:db8::1]:25565"); err != nil || res.Backend.Ejections != 0 {
		t.Fatalf("reset %+v %v", res, err)
	}
	st, err := c.Stats(ctx)
	if err != nil || st.ConnectionsActive != 9 {
		t.Fatalf("stats %+v %v", st, err)
	}
	ban, err := c.AddBan(ctx, BanRequest{Type: "name", Value: "Griefer", Reason: "tnt", Duration: "1h"})
	if err != nil || ban.Type != bans.TypeUsername || ban.Value != "griefer" || ban.ExpiresAt == nil {
		t.Fatalf("add ban %+v %v", ban, err)
	}
	if _, err := c.AddBan(ctx, BanRequest{Type: "ip", Value: "2001:db8::/48"}); err != nil {
		t.Fatal(err)
	}
	list, err := c.Bans(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("bans %+v %v", list, err)
	}
	for _, r := range [][2]string{{"username", "GRIEFER"}, {"ip", "2001:db8::/48"}} {
		if _, err := c.RemoveBan(ctx, bans.Type(r[0]), r[1]); err != nil {
			t.Fatalf("remove %v: %v", r, err)
		}
	}
	var ae *APIError
	if _, err := c.RemoveBan(ctx, bans.TypeIP, "2001:db8::/48"); !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("second remove: %v", err)
	}
}

func TestClientErrors(t *testing.T) {
	env := newTestEnv(t)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	defer garbage.Close()
	refused := "http://" + testutil.RefusedAddr(t)
	hinted := NewClient(env.http.URL, "wrong-key-wrong-key")
	hinted.SetKeyFileHint("/var/lib/infrarust/admin.key")

	tests := []struct {
		name   string
		call   func(context.Context) error
		status int
		want   string
	}{
		{"refused", func(ctx context.Context) error { _, err := NewClient(refused, testKey).Servers(ctx); return err }, 0,
			"no admin API at " + refused + " — is `infrarust serve` running?"},
		{"refused stream", func(ctx context.Context) error { _, err := NewClient(refused, testKey).Events(ctx); return err }, 0,
			"no admin API at " + refused},
		{"missing key", func(ctx context.Context) error { _, err := NewClient(env.http.URL, "").Servers(ctx); return err }, 401,
			"wrong or missing API key; set INFRARUST_API_KEY or pass --api-key (the key is in <data_dir>/admin.key)"},
		{"wrong key with hint", func(ctx context.Context) error { _, err := hinted.Drain(ctx, "lobby", "10.0.0.1:25565"); return err }, 401,
			"(the key is in /var/lib/infrarust/admin.key)"},
		{"wrong key on stream", func(ctx context.Context) error { _, err := hinted.Events(ctx); return err }, 401, "wrong or missing API key"},
		{"unknown address", func(ctx context.Context) error {
			_, err := NewClient(env.http.URL, testKey).Drain(ctx, "lobby", "10.0.0.9:25565")
			return err
		}, 404, "server lobby has no address 10.0.0.9:25565; addresses are: 10.0.0.1:25565, 10.0.0.2:25565, [2001:db8::1]:25565"},
		{"unknown server", func(ctx context.Context) error {
			_, err := NewClient(env.http.URL, testKey).Backends(ctx, "nether")
			return err
		}, 404,
			`no server "nether"; servers are: lobby, survival`},
		{"bad address", func(ctx context.Context) error {
			_, err := NewClient(env.http.URL, testKey).Reset(ctx, "lobby", "a b:1")
			return err
		}, 400,
			"invalid host"},
		{"not the admin API", func(ctx context.Context) error { _, err := NewClient(garbage.URL, testKey).Stats(ctx); return err }, 502,
			"answered 502 Bad Gateway: <html>bad gateway</html>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(ctx5(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to contain %q", err, tc.want)
			}
			var ae *APIError
			switch {
			case tc.status == 0 && !errors.Is(err, ErrNoAdminAPI):
				t.Errorf("refused connection does not match ErrNoAdminAPI: %v", err)
			case tc.status != 0 && (!errors.As(err, &ae) || ae.Status != tc.status):
				t.Errorf("want *APIError with status %d, got %#v", tc.status, err)
			}
		})
	}
}

func TestClientRateLimitedMessage(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Web.RequestsPerMinute = 1 })
	c := NewClient(env.http.URL, testKey)
	ctx := ctx5(t)
	if _, err := c.Servers(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := c.Servers(ctx)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 429 || ae.Code != "RATE_LIMITED" || !strings.Contains(ae.Message, "retry in 60 s") {
		t.Fatalf("err %#v", err)
	}
}

func TestNewClientURL(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080":          "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/":  "http://127.0.0.1:8080",
		" https://proxy.example ": "https://proxy.example",
	} {
		if got := NewClient(in, "").BaseURL(); got != want {
			t.Errorf("NewClient(%q).BaseURL() = %q, want %q", in, got, want)
		}
	}
}
