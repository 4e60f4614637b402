package config

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// [motd.maintenance] is a MOTD table like the others: its keys load, its favicon
// is read at load and is an error of its own line, and a misspelt key or table
// is refused with a suggestion.
func TestMaintenanceMOTDTable(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	png, err := base64.StdEncoding.DecodeString(tinyPNG)
	if err != nil {
		t.Fatal(err)
	}
	path := writeTree(t, "", map[string]string{
		"a.toml": "domains = [\"a\"]\n[motd.maintenance]\ntext = \"§cBack at 18:00\"\nversion_name = \"Closed\"\nmax_players = 50\nfavicon = \"icons/maint.png\"\n",
	})
	icon := filepath.Join(filepath.Dir(path), "icons", "maint.png")
	if err := os.MkdirAll(filepath.Dir(icon), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(icon, png, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Servers[0].MOTD.Maintenance
	want := MOTD{Text: "§cBack at 18:00", VersionName: "Closed", MaxPlayers: 50, Favicon: "data:image/png;base64," + tinyPNG}
	if m == nil || *m != want {
		t.Fatalf("[motd.maintenance] loaded as %+v, want %+v", m, want)
	}

	if err := os.WriteFile(icon, []byte("GIF89a..."), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, true); err == nil || !strings.Contains(err.Error(), "a.toml:6: motd.maintenance.favicon:") || !strings.Contains(err.Error(), "not a PNG") {
		t.Fatalf("a maintenance favicon that is not a PNG must be an error at its line: %v", err)
	}
	os.Remove(icon)
	if _, err := Load(path, true); err == nil || !strings.Contains(err.Error(), "a.toml:6: motd.maintenance.favicon: cannot read the icon") {
		t.Fatalf("a missing maintenance favicon must be an error at its line: %v", err)
	}

	for _, tc := range []struct{ toml, want string }{
		{"domains = [\"a\"]\n[motd.maintenence]\ntext = \"x\"\n", "s.toml:2: unknown key \"motd.maintenence\"; did you mean maintenance?"},
		{"domains = [\"a\"]\n[motd.maintenance]\ntxt = \"x\"\n", "s.toml:3: unknown key \"motd.maintenance.txt\"; did you mean text?"},
		{"domains = [\"a\"]\n[motd.maintenance]\nprotocol = -1\n", "s.toml:3: unknown key \"motd.maintenance.protocol\""},
	} {
		if _, err := ParseServer([]byte(tc.toml), "s.toml", Default()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want it to contain %q", tc.toml, err, tc.want)
		}
	}
}
