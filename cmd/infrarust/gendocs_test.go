package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
)

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateDocsIsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if _, err := generateDocs(a); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000") // must not leak into the output either
	if _, err := generateDocs(b); err != nil {
		t.Fatal(err)
	}
	ta, tb := readTree(t, a), readTree(t, b)
	if len(ta) != len(tb) {
		t.Fatalf("two runs wrote %d and %d files", len(ta), len(tb))
	}
	for name, data := range ta {
		if !bytes.Equal(data, tb[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

func TestGenerateDocsCoversEveryCommand(t *testing.T) {
	dir := t.TempDir()
	// A man page of a command that no longer exists must disappear.
	if err := os.MkdirAll(filepath.Join(dir, "man"), 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "man", "infrarust-removed.1")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := generateDocs(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale man page survived: %v", err)
	}
	for _, f := range []string{"completions/infrarust.bash", "completions/_infrarust", "completions/infrarust.fish", "completions/infrarust.ps1"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.Contains(b, []byte("__complete")) {
			t.Errorf("%s: missing or not a dynamic cobra completion (err %v)", f, err)
		}
	}
	cli, err := os.ReadFile(filepath.Join(dir, "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	root := docsTree(false)
	cmds := documented(root)
	if len(cmds) < 4 {
		t.Fatalf("only %d commands documented", len(cmds))
	}
	var names []string
	for _, c := range cmds {
		names = append(names, c.CommandPath())
		page := filepath.Join(dir, "man", strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		b, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("no man page for %q: %v", c.CommandPath(), err)
			continue
		}
		th := string(b[bytes.Index(b, []byte(".TH ")):])
		th = th[:strings.IndexByte(th, '\n')]
		if !strings.Contains(th, `"1" "" "Infrarust"`) {
			t.Errorf("%s: .TH line must carry no date: %s", page, th)
		}
		if bytes.Contains(b, []byte("Auto generated")) {
			t.Errorf("%s carries an auto-generated stamp", page)
		}
		if !bytes.Contains(cli, []byte("\n## "+c.CommandPath()+"\n")) {
			t.Errorf("docs/cli.md has no section for %q", c.CommandPath())
		}
	}
	for _, want := range []string{"infrarust version", "infrarust config init", "infrarust completion bash"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("%q is not documented; documented: %v", want, names)
		}
	}
	for _, c := range root.Commands() {
		if c.Hidden && bytes.Contains(cli, []byte("## "+c.CommandPath())) {
			t.Errorf("hidden command %q is documented", c.CommandPath())
		}
	}
	if bytes.Contains(cli, []byte("](infrarust")) {
		t.Error("docs/cli.md links to per-command files instead of in-page anchors")
	}

	pkg, err := os.ReadFile(filepath.Join(dir, "packaging", "infrarust.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(pkg, []byte(`data_dir = "/var/lib/infrarust"`)) {
		t.Error("packaged config must keep state in /var/lib/infrarust")
	}
	if _, err := config.Parse(pkg, "packaging/infrarust.toml"); err != nil {
		t.Errorf("packaged config does not load: %v", err)
	}
}

func TestEscapeMarkdown(t *testing.T) {
	for in, want := range map[string]string{
		"<data_dir>/admin.key":    `\<data_dir>/admin.key`,
		"servers/*.toml and *.x":  `servers/\*.toml and \*.x`,
		"run `a <b> *c` then <d>": "run `a <b> *c` then \\<d>",
		"nothing to escape_here":  "nothing to escape_here",
	} {
		if got := escapeMarkdown(in); got != want {
			t.Errorf("escapeMarkdown(%q) = %q, want %q", in, got, want)
		}
	}
}
