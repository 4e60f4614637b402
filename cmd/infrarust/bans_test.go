package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
)

func TestBansCommands(t *testing.T) {
	url, _ := startTestAdmin(t)
	conn := []string{"--admin-url", url, "--api-key", cliTestKey}
	steps := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{"empty list", []string{"bans", "list"}, []string{"no bans"}, ""},
		{"add ip", []string{"bans", "add", "--ip", "203.0.113.7", "--reason", "bot joins", "--duration", "7d"}, []string{"banned ip 203.0.113.7 until"}, ""},
		{"add name", []string{"bans", "add", "--name", "Griefer123", "--reason", "griefing"}, []string{"banned username griefer123 permanently"}, ""},
		{"add cidr", []string{"bans", "add", "--ip", "2001:db8::/48"}, []string{"banned ip 2001:db8::/48"}, ""},
		{"list", []string{"bans", "list"}, []string{"TYPE", "REASON", "ip", "203.0.113.7", "bot joins", "username", "griefer123", "never", "cli"}, ""},
		// remove names a ban the way add made it...
		{"remove name", []string{"bans", "remove", "--name", "GRIEFER123"}, []string{"removed username ban on griefer123"}, ""},
		{"remove cidr", []string{"bans", "rm", "--ip", "2001:db8::/48"}, []string{"removed ip ban on 2001:db8::/48"}, ""},
		{"remove missing", []string{"bans", "remove", "--uuid", "069a79f444e94726a5befca90e38aaf5"}, nil, "no uuid ban on"},
		{"remove two targets", []string{"bans", "remove", "--ip", "1.2.3.4", "--name", "x"}, nil, "none of the others can be"},
		{"remove nothing", []string{"bans", "remove"}, nil, "say which ban"},
		{"remove bare value", []string{"bans", "remove", "1.2.3.4"}, nil, "bans remove --ip 1.2.3.4"},
		// ...and the old positional form still works, with a deprecation note.
		{"add again", []string{"bans", "add", "--name", "Old"}, []string{"banned username old"}, ""},
		{"remove deprecated form", []string{"bans", "remove", "username", "Old"}, []string{"removed username ban on old"}, ""},
		{"deprecated and flag", []string{"bans", "remove", "ip", "1.2.3.4", "--ip", "1.2.3.4"}, nil, "not both"},
		{"two targets", []string{"bans", "add", "--ip", "1.2.3.4", "--name", "x"}, nil, "none of the others can be"},
		{"no target", []string{"bans", "add", "--reason", "x"}, nil, "at least one of the flags"},
		{"bad duration", []string{"bans", "add", "--ip", "1.2.3.4", "--duration", "forever"}, nil, "--duration: invalid duration"},
		{"bad ip", []string{"bans", "add", "--ip", "300.1.1.1"}, nil, "invalid IP"},
		{"bad type", []string{"bans", "remove", "mac", "x"}, nil, "use ip, username or uuid"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			out, err := runCLI(t, append(st.args, conn...)...)
			if st.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), st.wantErr) {
					t.Fatalf("err %v, want %q", err, st.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rest := out
			for _, w := range st.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}

	out, err := runCLI(t, append([]string{"bans", "list", "-o", "json"}, conn...)...)
	if err != nil {
		t.Fatal(err)
	}
	var list []bans.Ban
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].Value != "203.0.113.7" || list[0].ExpiresAt == nil {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	out, err = runCLI(t, append(append([]string{"__completeNoDesc", "bans", "remove"}, conn...), "--ip", "")...)
	if err != nil || !strings.Contains(out, "203.0.113.7") {
		t.Fatalf("completion of ban values: %v\n%s", err, out)
	}
	out, err = runCLI(t, append([]string{"bans", "remove", "--ip", "203.0.113.7", "-o", "json"}, conn...)...)
	var removed bans.Ban
	if err != nil || json.Unmarshal([]byte(out), &removed) != nil || removed.Value != "203.0.113.7" || removed.Reason != "bot joins" {
		t.Fatalf("remove -o json prints the removed ban: %v\n%s", err, out)
	}
}

func TestExpiryTextShowsShortBansExactly(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{20 * time.Second, "(20s)"},
		{45 * time.Second, "(45s)"},
		{90 * time.Second, "(1m 30s)"},
		{90 * time.Minute, "(1h 30m)"},
		{7 * 24 * time.Hour, "(7d)"},
	} {
		// The ban was stored a moment before it is printed.
		exp := now.Add(tc.d)
		got := expiryText(bans.Ban{ExpiresAt: &exp}, now.Add(15*time.Millisecond))
		if !strings.HasSuffix(got, tc.want) {
			t.Errorf("%v ban printed %q, want it to end in %q", tc.d, got, tc.want)
		}
	}
}
