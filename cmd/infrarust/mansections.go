package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/sdnotify"
)

// The man pages' EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES sections (and the same
// sections of docs/cli.md) are derived from the command tree itself: which flags a
// command has, whether it is a group, the exit codes it declares next to the code
// that returns them, and its Example field, which --help prints too. So a page
// cannot describe another binary.

// annExitStatus is the cobra annotation where a command declares its own exit
// statuses, one "CODE<TAB>meaning" per line, beside the RunE that returns them.
const annExitStatus = "infrarust.exit_status"

// exitStatusAnnotation builds the annExitStatus value for code and meaning.
func exitStatusAnnotation(code int, meaning string) map[string]string {
	return map[string]string{annExitStatus: strconv.Itoa(code) + "\t" + meaning}
}

// manEntry is one tagged paragraph: a term (exit code, variable, path) and what it means.
type manEntry struct{ term, text string }

// manSection is one extra section of a command's page.
type manSection struct {
	title   string // man page heading, upper case
	entries []manEntry
	literal string // preformatted text (examples) instead of entries
	italic  bool   // terms are paths: italic in man pages
}

// manSections lists the extra sections of c's page in man-pages(7) order; empty
// sections are left out.
func manSections(c *cobra.Command) []manSection {
	var out []manSection
	for _, s := range []manSection{
		{title: "EXIT STATUS", entries: manExitStatus(c)},
		{title: "ENVIRONMENT", entries: manEnvironment(c)},
		{title: "FILES", entries: manFiles(c), italic: true},
		{title: "EXAMPLES", literal: examples(c)},
	} {
		if len(s.entries) > 0 || s.literal != "" {
			out = append(out, s)
		}
	}
	return out
}

// examples is c.Example without cobra's two-space indent.
func examples(c *cobra.Command) string {
	lines := strings.Split(strings.TrimRight(c.Example, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func isGroup(c *cobra.Command) bool { return c.HasAvailableSubCommands() }

// talksToAdmin reports whether c reaches a running proxy through the admin API.
func talksToAdmin(c *cobra.Command) bool { return c.Flag("admin-url") != nil }

func hasJSONOutput(c *cobra.Command) bool { return c.Flag("output") != nil }

// under reports whether c is path or one of its subcommands.
func under(c *cobra.Command, path string) bool {
	p := c.CommandPath()
	return p == path || strings.HasPrefix(p, path+" ")
}

func manExitStatus(c *cobra.Command) []manEntry {
	out := []manEntry{{"0", "Success."}}
	declared := map[string]string{}
	for _, line := range strings.Split(c.Annotations[annExitStatus], "\n") {
		if code, meaning, ok := strings.Cut(line, "\t"); ok {
			declared[code] = meaning
		}
	}
	errText := "An error; the message on standard error says what went wrong and what to do"
	if hasJSONOutput(c) {
		errText += " (with -o json, a JSON error envelope on standard error)"
	}
	if talksToAdmin(c) {
		errText += ". This includes a proxy that cannot be reached and a request the admin API refused"
	}
	if m, ok := declared["1"]; ok {
		errText = m + ". Any other error too"
	}
	out = append(out, manEntry{"1", errText + "."})
	if isGroup(c) {
		out = append(out, manEntry{strconv.Itoa(exitUsage), "The command line names a subcommand that does not exist (the message suggests the closest one)."})
	}
	for _, code := range slices.Sorted(maps.Keys(declared)) {
		if code != "1" && code != "0" {
			out = append(out, manEntry{code, declared[code] + "."})
		}
	}
	return out
}

func manEnvironment(c *cobra.Command) []manEntry {
	root := c.Parent() == nil
	serveSide := under(c, "infrarust serve") || under(c, "infrarust config check")
	var out []manEntry
	if root || talksToAdmin(c) {
		out = append(out, manEntry{envAdminURL, "The admin API URL when --admin-url is not given; otherwise http://<[web] bind> of --config."})
	}
	var key []string
	if root || talksToAdmin(c) {
		key = append(key, "The admin API key when --api-key is not given; otherwise [web] api_key, then <data_dir>/admin.key, of --config.")
	}
	if root || serveSide {
		key = append(key, "serve: the admin API's key when [web] api_key is not set (at least 16 characters); without either, a loopback [web] bind generates <data_dir>/admin.key and any other bind refuses to start. config check reads it for the same reason, so run it in the environment serve runs in.")
	}
	if len(key) > 0 {
		out = append(out, manEntry{envAPIKey, strings.Join(key, " ")})
	}
	if root || under(c, "infrarust serve") {
		out = append(out,
			manEntry{sdnotify.EnvSocket, "Set by systemd for a Type=notify unit: serve reports READY=1 once it listens, RELOADING=1 and READY=1 around each reload and STOPPING=1 at shutdown, and removes the variable from the environment of the servers it starts."},
			manEntry{"VAR of api_key = \"env:VAR\"", "serve reads a Pterodactyl [server_manager] api_key from the environment variable it names."})
	}
	if root || under(c, "infrarust top") || under(c, "infrarust status ping") {
		out = append(out, manEntry{"NO_COLOR", "When set to anything, output has no colours (top, status ping)."})
	}
	return out
}

func manFiles(c *cobra.Command) []manEntry {
	root := c.Parent() == nil
	serve, check, initCmd := under(c, "infrarust serve"), under(c, "infrarust config check"), under(c, "infrarust config init")
	var out []manEntry
	if root || serve || check || talksToAdmin(c) {
		what := "The proxy-wide configuration (--config; a relative servers_dir and data_dir are resolved next to it). Installed packages use /etc/infrarust/infrarust.toml."
		if talksToAdmin(c) && !root {
			what = "Read for [web] bind (the admin API URL) and data_dir (where admin.key is) when --admin-url or --api-key is not given. Installed packages use /etc/infrarust/infrarust.toml."
		}
		out = append(out, manEntry{"./infrarust.toml", what})
	}
	if initCmd {
		out = append(out,
			manEntry{"DIR/infrarust.toml", "Written with every proxy-wide key, its default and a comment."},
			manEntry{"DIR/servers/example.toml", "Written with one server to edit."})
	}
	if root || serve || check {
		out = append(out, manEntry{"servers/*.toml", "One file per server (servers_dir); serve watches them and reloads on change or SIGHUP. Packages: /etc/infrarust/servers/."})
	}
	dataDir := " ([web] data_dir, ./data next to the config by default; /var/lib/infrarust in packages)"
	if root || serve || talksToAdmin(c) {
		out = append(out, manEntry{"<data_dir>/admin.key", "The generated admin API key (mode 0600), written by serve on a loopback [web] bind without a key and read by the CLI" + dataDir + "."})
	}
	if root || serve || under(c, "infrarust backends") {
		out = append(out, manEntry{"<data_dir>/drained.json", "The operator's drains, kept by serve and replayed at start."})
	}
	if root || serve || under(c, "infrarust bans") {
		out = append(out, manEntry{"<data_dir>/bans.json", "The bans, kept by serve; they survive restarts."})
	}
	return out
}

// roffSections renders sections as man(7) markup.
func roffSections(secs []manSection) []byte {
	var b strings.Builder
	for _, s := range secs {
		fmt.Fprintf(&b, ".SH %s\n", s.title)
		if s.literal != "" {
			b.WriteString(".PP\n.RS\n.nf\n")
			b.WriteString(roffText(s.literal))
			b.WriteString("\n.fi\n.RE\n\n")
			continue
		}
		font := `\fB`
		if s.italic {
			font = `\fI`
		}
		for _, e := range s.entries {
			fmt.Fprintf(&b, ".TP\n%s%s\\fP\n%s\n", font, roffInline(e.term), roffText(e.text))
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// roffInline makes s safe inside a man(7) line: backslashes are printed, and '-'
// is an ASCII minus (groff would print a hyphen), so a copied option or example
// works in a shell.
func roffInline(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}

// roffText is roffInline for whole lines: a line that starts with a control
// character is printed, not taken as a request.
func roffText(s string) string {
	lines := strings.Split(roffInline(s), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// markdownSections renders sections for docs/cli.md (EXAMPLES is left out: cobra's
// markdown already prints the Example field).
func markdownSections(secs []manSection) string {
	var b strings.Builder
	for _, s := range secs {
		if s.literal != "" {
			continue
		}
		fmt.Fprintf(&b, "### %s\n\n", titleCase(s.title))
		for _, e := range s.entries {
			fmt.Fprintf(&b, "- `%s`: %s\n", e.term, escapeMarkdown(e.text))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func titleCase(s string) string {
	return s[:1] + strings.ToLower(s[1:])
}
