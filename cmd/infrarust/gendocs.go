package main

//go:generate go run . gen-docs ../..

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/infrarust-go/infrarust/internal/config"
)

// newGenDocsCmd writes the shell completions, man pages and docs/cli.md from the
// command tree, so the shipped reference can never describe another binary.
// Hidden: it is a build step (`go generate ./...`), not an operator command.
func newGenDocsCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:    "gen-docs DIR",
		Short:  "Write completions/, man/, docs/cli.md and packaging/infrarust.toml under DIR (the repository root)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := generateDocs(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "wrote %d files under %s\n", files, args[0])
			return nil
		},
	}
}

// docsTree builds a fresh command tree for documentation, so the output does not
// depend on which command runs the generator or on flags already parsed.
// Help text is rendered as markdown (in docs/cli.md and, through md2man, in the man
// pages), so characters markdown would swallow (<data_dir> as an HTML tag, *.toml as
// emphasis) are escaped; escapeFlags also escapes flag usages, which the man pages
// render as markdown but docs/cli.md shows verbatim in a code block.
func docsTree(escapeFlags bool) *cobra.Command {
	root := newRootCmd(io.Discard, io.Discard)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true // no "generated on <date>" lines: output must be reproducible
		c.Short = escapeMarkdown(c.Short)
		c.Long = escapeMarkdown(c.Long)
		if escapeFlags {
			for _, fs := range []*pflag.FlagSet{c.LocalNonPersistentFlags(), c.PersistentFlags()} {
				fs.VisitAll(func(f *pflag.Flag) { f.Usage = escapeMarkdown(f.Usage) })
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return root
}

// escapeMarkdown backslash-escapes '<' and '*' outside `code spans`.
func escapeMarkdown(s string) string {
	var b strings.Builder
	inCode := false
	for _, r := range s {
		switch {
		case r == '`':
			inCode = !inCode
		case !inCode && (r == '<' || r == '*'):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// documented lists root and every command a user can run, depth first in name order
// (cobra sorts Commands()), skipping hidden, deprecated and help commands.
func documented(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		out = append(out, documented(sub)...)
	}
	return out
}

// generateDocs writes every generated file under dir and returns how many it wrote.
// Stale man pages (of commands that no longer exist) are removed.
func generateDocs(dir string) (int, error) {
	root := docsTree(false)
	manRoot := docsTree(true)
	plain := newRootCmd(io.Discard, io.Discard) // completion scripts carry no help text
	files := map[string][]byte{}

	completions := []struct {
		name string
		gen  func(io.Writer) error
	}{
		{"infrarust.bash", func(w io.Writer) error { return plain.GenBashCompletionV2(w, true) }},
		{"_infrarust", plain.GenZshCompletion},
		{"infrarust.fish", func(w io.Writer) error { return plain.GenFishCompletion(w, true) }},
		{"infrarust.ps1", plain.GenPowerShellCompletionWithDesc},
	}
	for _, c := range completions {
		var b bytes.Buffer
		if err := c.gen(&b); err != nil {
			return 0, fmt.Errorf("generate %s completion: %w", c.name, err)
		}
		files[filepath.Join("completions", c.name)] = b.Bytes()
	}

	for _, c := range documented(manRoot) {
		page, err := manPage(c)
		if err != nil {
			return 0, err
		}
		files[filepath.Join("man", strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")] = page
	}

	md, err := cliMarkdown(documented(root))
	if err != nil {
		return 0, err
	}
	files[filepath.Join("docs", "cli.md")] = md

	pkgCfg, err := packagedConfig()
	if err != nil {
		return 0, err
	}
	files[filepath.Join("packaging", "infrarust.toml")] = pkgCfg

	for _, sub := range []string{"completions", "man", "docs", "packaging"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return 0, fmt.Errorf("create %s: %w", sub, err)
		}
	}
	old, err := filepath.Glob(filepath.Join(dir, "man", "infrarust*.1"))
	if err != nil {
		return 0, err
	}
	for _, p := range old {
		rel, _ := filepath.Rel(dir, p)
		if _, keep := files[rel]; !keep {
			if err := os.Remove(p); err != nil {
				return 0, fmt.Errorf("remove stale man page: %w", err)
			}
		}
	}
	for rel, data := range files {
		if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
			return 0, fmt.Errorf("write %s: %w", rel, err)
		}
	}
	return len(files), nil
}

// packagedConfig is the starter infrarust.toml the deb/rpm packages install in
// /etc/infrarust: the embedded default with data_dir pointing at the systemd
// StateDirectory, so the CLI finds admin.key from any working directory.
func packagedConfig() ([]byte, error) {
	const from, to = `data_dir = "./data"`, `data_dir = "/var/lib/infrarust"`
	if strings.Count(config.DefaultTOML, from) != 1 {
		return nil, fmt.Errorf("packaged config: the embedded default no longer has exactly one line %s; update packagedConfig", from)
	}
	header := "# /etc/infrarust/infrarust.toml, installed by the infrarust package.\n" +
		"# Generated from internal/config/default.toml by `go generate ./cmd/infrarust`.\n" +
		"# Put one file per server in /etc/infrarust/servers/ (see /usr/share/doc/infrarust/examples).\n\n"
	return []byte(header + strings.Replace(config.DefaultTOML, from, to, 1)), nil
}

// manEpoch is a placeholder date that is blanked out of the .TH line afterwards;
// cobra always prints a date, and a date would make every regeneration a diff.
var manEpoch = time.Unix(0, 0).UTC()

// manPage renders one command's man page in section 1 without a date, with the
// EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES sections (mansections.go) before
// SEE ALSO, where man-pages(7) puts them.
func manPage(c *cobra.Command) ([]byte, error) {
	var b bytes.Buffer
	header := &doc.GenManHeader{Section: "1", Date: &manEpoch, Source: "Infrarust", Manual: "Infrarust Manual"}
	example := c.Example
	c.Example = "" // cobra would print it as "EXAMPLE" after OPTIONS; it goes in EXAMPLES below
	err := doc.GenMan(c, header, &b)
	c.Example = example
	if err != nil {
		return nil, fmt.Errorf("generate man page for %q: %w", c.CommandPath(), err)
	}
	page := insertBefore(b.Bytes(), []byte(".SH SEE ALSO"), roffSections(manSections(c)))
	lines := bytes.Split(page, []byte("\n"))
	placeholder := []byte(`"` + manEpoch.Format("Jan 2006") + `"`)
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte(".TH ")) {
			if !bytes.Contains(l, placeholder) {
				return nil, fmt.Errorf("man page for %q: no date to blank in %q", c.CommandPath(), l)
			}
			// .TH turns hyphenation back on, which cobra's leading .nh meant to
			// prevent ("/etc/in-frarust"): say it again after it.
			lines[i] = append(bytes.Replace(l, placeholder, []byte(`""`), 1), "\n.nh"...)
			return bytes.Join(lines, []byte("\n")), nil
		}
	}
	return nil, fmt.Errorf("man page for %q has no .TH line", c.CommandPath())
}

// cliMarkdown concatenates every command's markdown into one page with in-page links.
func cliMarkdown(cmds []*cobra.Command) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Command-line reference\n\n")
	b.WriteString("<!-- Generated by `go generate ./cmd/infrarust` from the command tree; do not edit by hand. -->\n\n")
	b.WriteString("Every command also prints this with `--help`, and `man infrarust-<command>` shows the same text.\n\n")
	for _, c := range cmds {
		b.WriteString("- [" + c.CommandPath() + "](" + anchor(c.CommandPath()) + ") — " + c.Short + "\n")
	}
	b.WriteString("\n")
	link := func(file string) string {
		return anchor(strings.ReplaceAll(strings.TrimSuffix(file, ".md"), "_", " "))
	}
	for _, c := range cmds {
		var one bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &one, link); err != nil {
			return nil, fmt.Errorf("generate markdown for %q: %w", c.CommandPath(), err)
		}
		b.Write(insertBefore(one.Bytes(), []byte("### SEE ALSO"), []byte(markdownSections(manSections(c)))))
		b.WriteString("\n")
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n'), nil
}

// insertBefore puts add in front of the first line that starts with marker, or at
// the end when there is none.
func insertBefore(doc, marker, add []byte) []byte {
	i := bytes.Index(doc, append([]byte("\n"), marker...))
	if i < 0 {
		return append(append(bytes.TrimRight(doc, "\n"), "\n\n"...), add...)
	}
	out := append([]byte{}, doc[:i+1]...)
	out = append(out, add...)
	return append(out, doc[i+1:]...)
}

// anchor is the GitHub heading anchor of "## <command path>".
func anchor(path string) string {
	return "#" + strings.ReplaceAll(strings.ToLower(path), " ", "-")
}
