package config_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
)

// TestLoaderAgreesWithTheAdminAPIOnKeys runs the admin API's own key resolution and the
// loader over the same grid of binds, keys and environments: whenever the admin API
// would refuse to start, `config check` must fail too, and the other way round.
func TestLoaderAgreesWithTheAdminAPIOnKeys(t *testing.T) {
	binds := []string{"127.0.0.1:8080", "[::1]:8080", "localhost:8080", "0.0.0.0:8080", "[::]:8080", ":8080", "10.1.2.3:8080"}
	keys := []string{"", "   ", "0123456789abcde", "0123456789abcdef", " 0123456789abcde "}
	envs := []string{"", "0123456789abcde", "0123456789abcdef0123"}
	for _, bind := range binds {
		for _, key := range keys {
			for _, env := range envs {
				name := fmt.Sprintf("bind=%s key=%q env=%q", bind, key, env)
				t.Run(name, func(t *testing.T) {
					web := config.Web{Enabled: true, Bind: bind, APIKey: key, DataDir: t.TempDir()}
					if strings.TrimSpace(env) != "" {
						web.APIKey = env // serve gets [web] from the loader, which applies the environment over the file
					}
					_, _, adminErr := admin.ResolveAPIKey(web, env)

					t.Setenv(config.APIKeyEnv, env)
					src := fmt.Sprintf("[web]\nbind = %q\napi_key = %q\n", bind, key)
					_, loadErr := config.Parse([]byte(src), "f.toml")
					if (adminErr == nil) != (loadErr == nil) {
						t.Fatalf("admin API: %v\nconfig check: %v\nthey must agree", adminErr, loadErr)
					}
				})
			}
		}
	}
}

// TestLoaderRefusesBindsTheListenerRefuses: each of these makes net.Listen fail at
// serve; the loader must say so first, at the line of the key.
func TestLoaderRefusesBindsTheListenerRefuses(t *testing.T) {
	t.Setenv(config.APIKeyEnv, "")
	for _, bind := range []string{"0.0.0.0:99999", "127.0.0.1:mc", "0.0.0.0", "127.0.0.1:-1", "127.0.0.1:65536", "[::1", "127.0.0.1:25565:1"} {
		ln, err := net.Listen("tcp", bind)
		if err == nil {
			ln.Close()
			t.Fatalf("net.Listen(%q) succeeded; the case is wrong", bind)
		}
		for _, key := range []string{"bind", "web.bind"} {
			src := fmt.Sprintf("bind = %q\n", bind)
			if key == "web.bind" {
				src = fmt.Sprintf("[web]\nbind = %q\n", bind)
			}
			_, lerr := config.Parse([]byte(src), "f.toml")
			want := fmt.Sprintf("f.toml:%d: %s:", strings.Count(src, "\n"), key)
			if lerr == nil || !strings.Contains(lerr.Error(), want) {
				t.Errorf("%s = %q: net.Listen says %v; config check says %v (want %q)", key, bind, err, lerr, want)
			}
		}
	}
}
