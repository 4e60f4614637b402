package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/testutil"
)

// section returns the body of a man page's .SH title section ("" when absent).
func section(page, title string) string {
	start := strings.Index(page, "\n.SH "+title+"\n")
	if start < 0 {
		return ""
	}
	body := page[start+len("\n.SH "+title+"\n"):]
	if end := strings.Index(body, "\n.SH "); end >= 0 {
		body = body[:end]
	}
	return body
}

// manPages renders every documented command's page as gendocs writes it.
func manPages(t *testing.T) map[*cobra.Command]string {
	t.Helper()
	out := map[*cobra.Command]string{}
	for _, c := range documented(docsTree(true)) {
		b, err := manPage(c)
		if err != nil {
			t.Fatal(err)
		}
		out[c] = string(b)
	}
	return out
}

// Every backends, bans, servers and status command has examples; the man page's
// EXAMPLES section is exactly the Example field --help prints, in man-pages(7)
// order with EXIT STATUS, ENVIRONMENT and FILES, all before SEE ALSO.
func TestManPagesHaveTheOperatorSections(t *testing.T) {
	for c, page := range manPages(t) {
		path := c.CommandPath()
		needsExamples := false
		for _, group := range []string{"infrarust backends", "infrarust bans", "infrarust servers", "infrarust status"} {
			needsExamples = needsExamples || under(c, group)
		}
		if needsExamples && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", path)
		}
		if strings.Contains(page, "\n.SH EXAMPLE\n") {
			t.Errorf("%s: cobra's EXAMPLE section is still there", path)
		}
		if c.Example != "" {
			ex := section(page, "EXAMPLES")
			for _, line := range strings.Split(c.Example, "\n") {
				if want := roffText(strings.TrimPrefix(line, "  ")); !strings.Contains(ex, want+"\n") {
					t.Errorf("%s: EXAMPLES lacks %q:\n%s", path, want, ex)
				}
			}
		}
		last := 0
		for _, title := range []string{"EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"} {
			i := strings.Index(page, "\n.SH "+title+"\n")
			if i < 0 {
				if title == "EXIT STATUS" || (title == "EXAMPLES" && c.Example != "") {
					t.Errorf("%s: no %s section", path, title)
				}
				continue
			}
			if i < last {
				t.Errorf("%s: %s is out of man-pages(7) order", path, title)
			}
			last = i
		}
		exit := section(page, "EXIT STATUS")
		if !strings.Contains(exit, "\\fB0\\fP\nSuccess.") || !strings.Contains(exit, "\\fB1\\fP\n") {
			t.Errorf("%s: EXIT STATUS lacks 0 and 1:\n%s", path, exit)
		}
		if isGroup(c) != strings.Contains(exit, "\\fB2\\fP\nThe command line names a subcommand") {
			t.Errorf("%s: a group (and only a group) documents exit 2 for an unknown subcommand:\n%s", path, exit)
		}
		if talksToAdmin(c) {
			env, files := section(page, "ENVIRONMENT"), section(page, "FILES")
			for _, want := range []string{envAdminURL, envAPIKey} {
				if !strings.Contains(env, "\\fB"+want+"\\fP") {
					t.Errorf("%s talks to the admin API but ENVIRONMENT lacks %s", path, want)
				}
			}
			if !strings.Contains(files, "admin.key") {
				t.Errorf("%s talks to the admin API but FILES lacks admin.key", path)
			}
		}
	}
}

// The exit statuses a page documents are the ones the command returns.
func TestDocumentedExitStatusesAreReturned(t *testing.T) {
	pages := map[string]string{}
	for c, page := range manPages(t) {
		pages[c.CommandPath()] = section(page, "EXIT STATUS")
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "infrarust.toml")
	if err := os.WriteFile(bad, []byte("connect_timeout = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		page string
		args []string
		want int
		what string // the documented meaning
	}{
		{"infrarust status ping", []string{"status", "ping", testutil.RefusedAddr(t), "--timeout", "2s"}, exitUnreachable, "could not be reached"},
		{"infrarust config check", []string{"config", "check", "--config", bad}, exitInvalidConfig, "configuration is invalid"},
		{"infrarust backends", []string{"backends", "lst"}, exitUsage, "subcommand that does not exist"},
		{"infrarust", []string{"sever"}, exitUsage, "subcommand that does not exist"},
	} {
		code, _, errOut := runEntry(t, tc.args...)
		if code != tc.want {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.want, errOut)
		}
		entry := fmt.Sprintf("\\fB%s\\fP\n", strconv.Itoa(tc.want))
		i := strings.Index(pages[tc.page], entry)
		if i < 0 || !strings.Contains(pages[tc.page][i:], tc.what) {
			t.Errorf("%s: EXIT STATUS does not document %d as %q:\n%s", tc.page, tc.want, tc.what, pages[tc.page])
		}
	}
}

func TestRoffEscaping(t *testing.T) {
	for in, want := range map[string]string{
		`infrarust backends list -o json`: `infrarust backends list \-o json`,
		".hidden request":                 `\&.hidden request`,
		"'quoted":                         `\&'quoted`,
		`C:\path`:                         `C:\epath`,
		"a\n.b":                           "a\n\\&.b",
	} {
		if got := roffText(in); got != want {
			t.Errorf("roffText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := roffInline(".x-y"); got != `.x\-y` {
		t.Errorf("roffInline = %q", got)
	}
}
