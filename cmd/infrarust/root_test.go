package main

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// runEntry runs the binary's entry point with the admin environment cleared and
// returns the exit status and output.
func runEntry(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("INFRARUST_ADMIN_URL", "")
	t.Setenv("INFRARUST_API_KEY", "")
	out, errOut, code := runMain(t, args...)
	return code, out, errOut
}

func TestUnknownSubcommandExitsTwoWithASuggestion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backends", "lst"}, `unknown command "lst" for "infrarust backends"; did you mean list?`},
		{[]string{"bans", "ad", "--ip", "1.2.3.4"}, `unknown command "ad" for "infrarust bans"; did you mean add?`},
		{[]string{"servers", "strat"}, `unknown command "strat" for "infrarust servers"; did you mean start?`},
		{[]string{"players", "sned", "Notch", "lobby"}, `unknown command "sned" for "infrarust players"; did you mean send?`},
		{[]string{"config", "chek"}, `unknown command "chek" for "infrarust config"; did you mean check?`},
		{[]string{"sever"}, `unknown command "sever" for "infrarust"; did you mean serve or servers?`},
		{[]string{"backends", "xyzzy"}, `unknown command "xyzzy" for "infrarust backends"; run 'infrarust backends --help' for the commands`},
	} {
		code, out, errOut := runEntry(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// A group with no subcommand still shows its help and succeeds.
	code, out, _ := runEntry(t, "backends")
	if code != 0 || !strings.Contains(out, "Available Commands") {
		t.Errorf("bare group: exit %d, stdout %q", code, out)
	}
}

func TestVersionFlagMatchesVersionCommand(t *testing.T) {
	code, flagOut, _ := runEntry(t, "--version")
	if code != 0 {
		t.Fatalf("--version exit %d", code)
	}
	code, cmdOut, _ := runEntry(t, "version")
	if code != 0 || flagOut != cmdOut || flagOut != "infrarust "+currentBuild().String()+"\n" {
		t.Fatalf("--version %q and version %q differ or are not %q", flagOut, cmdOut, currentBuild().String())
	}
}

func TestResolveBuild(t *testing.T) {
	unset := buildInfo{"dev", "none", "unknown"}
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		ld   buildInfo
		bi   *debug.BuildInfo
		want buildInfo
	}{
		{"release with ldflags", buildInfo{"v1.2.0", "abc1234", "2026-01-02T03:04:05Z"},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: vcs("vcs.revision", "ffff")},
			buildInfo{"v1.2.0", "abc1234", "2026-01-02T03:04:05Z"}},
		{"go install module@version", unset,
			&debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}},
			buildInfo{"v0.3.0", "none", "unknown"}},
		{"go install from a checkout", unset,
			&debug.BuildInfo{Main: debug.Module{Version: "v0.3.1-0.20260101120000-0123456789ab"},
				Settings: vcs("vcs.revision", "0123456789abcdef", "vcs.time", "2026-01-01T12:00:00Z", "vcs.modified", "false")},
			buildInfo{"v0.3.1-0.20260101120000-0123456789ab", "0123456789abcdef", "2026-01-01T12:00:00Z"}},
		{"go build with local edits", unset,
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "0123", "vcs.modified", "true")},
			buildInfo{"dev", "0123-dirty", "unknown"}},
		{"no build info", unset, nil, unset},
	} {
		if got := resolveBuild(tc.ld, tc.bi, tc.bi != nil); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestJSONOutputMakesErrorsJSON(t *testing.T) {
	url, _ := startTestAdmin(t)
	conn := []string{"--admin-url", url, "--api-key", cliTestKey}
	for _, tc := range []struct {
		args []string
		code string
		exit int
	}{
		{append([]string{"backends", "list", "nosuch", "-o", "json"}, conn...), "NOT_FOUND", 1},
		{append([]string{"backends", "drain", "lobby", "10.9.9.9:25565", "-o", "json"}, conn...), "NOT_FOUND", 1},
		{append([]string{"bans", "add", "--ip", "300.1.1.1", "-o", "json"}, conn...), "BAD_REQUEST", 1},
		{[]string{"backends", "lst", "-o", "json"}, "UNKNOWN_COMMAND", 2},
		{[]string{"bans", "list", "-o", "json", "--admin-url", "http://127.0.0.1:1", "--api-key", cliTestKey}, "ERROR", 1},
	} {
		code, out, errOut := runEntry(t, tc.args...)
		var env admin.ErrorEnvelope
		if err := json.Unmarshal([]byte(errOut), &env); err != nil || env.Error.Code != tc.code || env.Error.Message == "" {
			t.Errorf("%v: stderr %q is not a JSON error with code %s (%v)", tc.args, errOut, tc.code, err)
		}
		if code != tc.exit || out != "" {
			t.Errorf("%v: exit %d stdout %q, want exit %d and nothing on stdout", tc.args, code, out, tc.exit)
		}
	}
	// Without -o json the same error stays a plain line.
	_, _, errOut := runEntry(t, append([]string{"backends", "list", "nosuch"}, conn...)...)
	if !strings.HasPrefix(errOut, "error: ") {
		t.Errorf("table output error %q", errOut)
	}
}
