package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// Servers made through the API are files an operator would write: created
// (and routed at once), refused with config check's message by key and
// nothing written, edited (a bad edit keeps the file), and deleted.
func TestServerFilesThroughTheAPI(t *testing.T) {
	a, b := startBackend(t, "a"), startBackend(t, "b")
	ta := startApp(t, map[string]string{"lobby.toml": serverFile(a.Addr(), "lobby.com")})
	key, err := os.ReadFile(filepath.Join(filepath.Dir(ta.dir), "data", "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	c := admin.NewClient("http://"+ta.adminAddr, strings.TrimSpace(string(key)))
	ctx := context.Background()

	sf, err := c.CreateServer(ctx, "games", map[string]any{"domains": []any{"games.com"}, "addresses": []any{b.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	onDisk, _ := os.ReadFile(filepath.Join(ta.dir, "games.toml"))
	if sf.File != filepath.Join(ta.dir, "games.toml") || string(onDisk) != sf.TOML || !strings.Contains(sf.TOML, "games.com") {
		t.Fatalf("created %+v; on disk:\n%s", sf, onDisk)
	}
	if got := ta.motd(t, "games.com"); got != "motd b" {
		t.Fatalf("games.com answered %q, want the new server's backend", got)
	}

	_, err = c.CreateServer(ctx, "broken", map[string]any{"domains": []any{"broken.com"}, "addresses": []any{"not an address"}})
	var ae *admin.APIError
	if !errorsAs(err, &ae) || ae.Status != 422 || !strings.Contains(ae.Message, "addresses[0]") {
		t.Fatalf("a bad address: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ta.dir, "broken.toml")); !os.IsNotExist(err) {
		t.Fatal("a refused server was written")
	}
	for _, id := range []string{"../evil", "a/b", "Upper", "", ".hidden", strings.Repeat("x", 64)} {
		if _, err = c.CreateServer(ctx, id, map[string]any{"domains": []any{"evil.com"}, "addresses": []any{b.Addr()}}); !errorsAs(err, &ae) || ae.Status != 400 {
			t.Fatalf("server id %q: %v", id, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(ta.dir)); len(entries) != 2 { // servers/ and data/ only
		t.Fatalf("a refused id wrote next to servers_dir: %v", entries)
	}
	if _, err = c.CreateServer(ctx, "games", map[string]any{"domains": []any{"x.com"}, "addresses": []any{b.Addr()}}); !errorsAs(err, &ae) || ae.Status != 409 {
		t.Fatalf("creating an existing server: %v", err)
	}
	// The API key is no shell: a server manager (a local command, a panel's
	// or Docker's credentials) is refused, and a managed server is not edited.
	_, err = c.CreateServer(ctx, "shell", map[string]any{"domains": []any{"shell.com"}, "addresses": []any{b.Addr()},
		"server_manager": map[string]any{"type": "local", "command": "/bin/sh", "args": []any{"-c", "touch /tmp/pwned"}}})
	if !errorsAs(err, &ae) || ae.Status != 422 || !strings.Contains(ae.Message, "server_manager") {
		t.Fatalf("a server manager through the API: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ta.dir, "shell.toml")); !os.IsNotExist(err) {
		t.Fatal("a server with a manager was written")
	}
	writeServerFile(t, ta.dir, "managed.toml", serverFile(b.Addr(), "managed.com")+"[server_manager]\ntype = \"local\"\ncommand = \"true\"\n")
	if _, err = c.EditServer(ctx, "managed", map[string]any{"domains": []any{"managed.com"}, "addresses": []any{b.Addr()}}); !errorsAs(err, &ae) || ae.Status != 422 {
		t.Fatalf("editing a managed server through the API: %v", err)
	}
	if _, err = c.CreateServer(ctx, "steal", map[string]any{"domains": []any{"lobby.com"}, "addresses": []any{b.Addr()}}); !errorsAs(err, &ae) || ae.Status != 422 || !strings.Contains(ae.Message, "lobby") {
		t.Fatalf("a domain another server has: %v", err)
	}

	if _, err = c.EditServer(ctx, "games", map[string]any{"domains": []any{"games.com"}, "addresses": []any{b.Addr()}, "proxy_mode": "sideways"}); !errorsAs(err, &ae) || ae.Status != 422 || !strings.Contains(ae.Message, "proxy_mode") {
		t.Fatalf("a bad edit: %v", err)
	}
	if again, _ := os.ReadFile(filepath.Join(ta.dir, "games.toml")); string(again) != sf.TOML {
		t.Fatalf("a refused edit changed the file:\n%s", again)
	}
	if _, err = c.EditServer(ctx, "games", map[string]any{"domains": []any{"games.com", "play.games.com"}, "addresses": []any{b.Addr()}}); err != nil {
		t.Fatal(err)
	}
	if got := ta.motd(t, "play.games.com"); got != "motd b" {
		t.Fatalf("the edited domain answered %q", got)
	}

	if err := c.DeleteServer(ctx, "games"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ta.dir, "games.toml")); !os.IsNotExist(err) {
		t.Fatal("the deleted server's file is still there")
	}
	for _, s := range ta.proxy.Config().Servers {
		if s.ID == "games" {
			t.Fatal("the deleted server is still configured")
		}
	}
	if err := c.DeleteServer(ctx, "games"); !errorsAs(err, &ae) || ae.Status != 404 {
		t.Fatalf("deleting it twice: %v", err)
	}
}

func errorsAs(err error, target any) bool { return err != nil && errors.As(err, target) }
