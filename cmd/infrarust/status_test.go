package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/fakemc"
)

func runMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestStatusPing(t *testing.T) {
	b, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: "x", MOTD: "§aGreen §lbold", Online: 2, Max: 10, Legacy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	out, errOut, code := runMain(t, "status", "ping", "play.example.com", "--address", b.Addr())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Not a terminal: colour codes are stripped.
	for _, want := range []string{"play.example.com (" + b.Addr() + ")", "  Green bold", "players  2/10", "latency"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if hs := b.Handshakes(); len(hs) != 1 || hs[0].ServerAddress != "play.example.com" {
		t.Fatalf("the handshake must carry HOST: %+v", hs)
	}

	for _, flag := range [][]string{{"--json"}, {"-o", "json"}} {
		out, _, code = runMain(t, append([]string{"status", "ping", "h", "--address", b.Addr()}, flag...)...)
		var res pingResult
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Online != 2 || res.Max != 10 || res.MOTD != "§aGreen §lbold" {
			t.Fatalf("%v: code %d %s", flag, code, out)
		}
	}
	if _, errOut, code := runMain(t, "status", "ping", "h", "--address", b.Addr(), "-o", "yaml"); code == 0 || !strings.Contains(errOut, "use table or json") {
		t.Fatalf("-o yaml: code %d %s", code, errOut)
	}

	out, _, code = runMain(t, "status", "ping", "h", "--address", b.Addr(), "--legacy")
	if code != 0 || !strings.Contains(out, "players  2/10") {
		t.Fatalf("legacy: code %d %s", code, out)
	}

	_, errOut, code = runMain(t, "status", "ping", "127.0.0.1:1", "--timeout", "1s")
	if code == 0 || !strings.Contains(errOut, "127.0.0.1:1 unreachable") {
		t.Fatalf("unreachable: code %d %q", code, errOut)
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "infrarust.toml")
	os.MkdirAll(filepath.Join(dir, "servers"), 0o755)
	os.WriteFile(cfg, []byte("bind = \"0.0.0.0:25565\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "servers", "lobby.toml"), []byte("domains = [\"a.com\"]\naddresses = [{ address = \"x:1\", weight = 3 }, \"y:1\"]\n"), 0o644)

	out, errOut, code := runMain(t, "config", "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "1 server(s)") || !strings.Contains(out, "warning:") {
		t.Fatalf("valid config: code %d\n%s%s", code, out, errOut)
	}

	os.WriteFile(filepath.Join(dir, "servers", "lobby.toml"), []byte("domains = [\"a.com\"]\n\nbalanse = \"least_conn\"\n"), 0o644)
	_, errOut, code = runMain(t, "config", "check", "--config", cfg)
	if code != 1 || !strings.Contains(errOut, "lobby.toml:3: unknown key \"balanse\"") {
		t.Fatalf("broken config: code %d %q", code, errOut)
	}

	_, errOut, code = runMain(t, "config", "check", "--config", filepath.Join(dir, "missing.toml"))
	if code == 0 || !strings.Contains(errOut, "missing.toml") {
		t.Fatalf("a named missing file must fail: code %d %q", code, errOut)
	}
}
