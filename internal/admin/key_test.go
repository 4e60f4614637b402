package admin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
)

func TestResolveAPIKey(t *testing.T) {
	long := strings.Repeat("k", 20)
	tests := []struct {
		name      string
		web       config.Web
		env       string
		wantKey   string
		wantFile  bool
		wantError string
	}{
		{"config key wins", config.Web{Bind: "0.0.0.0:8080", APIKey: long}, "env-env-env-env-env", long, false, ""},
		{"env key", config.Web{Bind: "0.0.0.0:8080"}, long, long, false, ""},
		{"short config key", config.Web{Bind: "127.0.0.1:8080", APIKey: "short"}, "", "", false, "[web] api_key is 5 characters; use at least 16"},
		{"short env key", config.Web{Bind: "127.0.0.1:8080"}, "short", "", false, "INFRARUST_API_KEY is 5 characters"},
		{"public bind without key", config.Web{Bind: "0.0.0.0:8080"}, "", "", false, "set [web] api_key"},
		{"v6 wildcard without key", config.Web{Bind: "[::]:8080"}, "", "", false, "reachable from other machines"},
		{"lan address without key", config.Web{Bind: "192.168.1.5:8080"}, "", "", false, "reachable from other machines"},
		{"loopback generates", config.Web{Bind: "127.0.0.1:8080"}, "", "", true, ""},
		{"v6 loopback generates", config.Web{Bind: "[::1]:8080"}, "", "", true, ""},
		{"localhost generates", config.Web{Bind: "localhost:8080"}, "", "", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.web.DataDir = filepath.Join(t.TempDir(), "nested", "data")
			key, path, err := ResolveAPIKey(tc.web, tc.env)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("err %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.wantFile {
				if key != tc.wantKey || path != "" {
					t.Fatalf("key %q path %q, want %q and no file", key, path, tc.wantKey)
				}
				return
			}
			if len(key) != 64 || path != filepath.Join(tc.web.DataDir, KeyFileName) {
				t.Fatalf("generated key %q at %q", key, path)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
			}
			di, _ := os.Stat(tc.web.DataDir)
			if di.Mode().Perm() != 0o700 {
				t.Errorf("data dir mode %v, want 0700", di.Mode().Perm())
			}
			again, path2, err := ResolveAPIKey(tc.web, "")
			if err != nil || again != key || path2 != path {
				t.Fatalf("second start: key %q (%v), want the same key reused", again, err)
			}
		})
	}
}

func TestResolveAPIKeyRejectsShortKeyFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, KeyFileName), []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := ResolveAPIKey(config.Web{Bind: "127.0.0.1:8080", DataDir: dir}, "")
	if err == nil || !strings.Contains(err.Error(), "delete it to generate a new key") {
		t.Fatalf("err %v", err)
	}
}
