package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/config"
)

// newConfigInitCmd writes a commented starter configuration, so a newcomer edits a
// file that already passes `config check` instead of writing one from the docs.
func newConfigInitCmd(g *globalFlags) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a commented starter infrarust.toml and servers/example.toml",
		Long: `Write DIR/infrarust.toml (every proxy-wide key with its default and a comment) and
DIR/servers/example.toml (one server to edit). DIR defaults to the current directory.

Existing files are never overwritten unless --force is given.`,
		Example: `  infrarust config init
  infrarust config init /etc/infrarust
  infrarust config init --force ./staging`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			written, err := configInit(dir, force)
			if err != nil {
				return err
			}
			for _, p := range written {
				fmt.Fprintf(g.stdout, "wrote %s\n", p)
			}
			cfgPath := written[0]
			flag := ""
			if filepath.Clean(cfgPath) != "infrarust.toml" {
				flag = " --config " + shellQuote(cfgPath)
			}
			fmt.Fprintf(g.stdout, "\nNext: edit %s (domains and addresses), then run\n", written[1])
			fmt.Fprintf(g.stdout, "  infrarust config check%s\n  infrarust serve%s\n", flag, flag)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&force, "force", "f", false, "overwrite existing files")
	return cmd
}

// configInit writes the two starter files under dir and returns their paths. Without
// force it checks both first, so it never leaves half a starter set behind.
func configInit(dir string, force bool) ([]string, error) {
	files := []struct {
		path string
		body string
	}{
		{filepath.Join(dir, "infrarust.toml"), config.DefaultTOML},
		{filepath.Join(dir, "servers", "example.toml"), config.ExampleServerTOML},
	}
	if !force {
		var exist []string
		for _, f := range files {
			if _, err := os.Lstat(f.path); err == nil {
				exist = append(exist, f.path)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("check %s: %w", f.path, err)
			}
		}
		if len(exist) > 0 {
			verb := "exists"
			if len(exist) > 1 {
				verb = "exist"
			}
			return nil, fmt.Errorf("%s already %s; nothing was written (use --force to overwrite, or pick another DIR)", strings.Join(exist, " and "), verb)
		}
	}
	var written []string
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return written, fmt.Errorf("create %s: %w", filepath.Dir(f.path), err)
		}
		flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if !force {
			flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL // a file created meanwhile is not clobbered
		}
		fh, err := os.OpenFile(f.path, flags, 0o644)
		if err != nil {
			return written, fmt.Errorf("write %s: %w", f.path, err)
		}
		_, werr := fh.WriteString(f.body)
		cerr := fh.Close()
		if err := errors.Join(werr, cerr); err != nil {
			return written, fmt.Errorf("write %s: %w", f.path, err)
		}
		written = append(written, f.path)
	}
	return written, nil
}

// shellQuote quotes p for a copy-pasted shell command when it needs it.
func shellQuote(p string) string {
	if p != "" && strings.IndexFunc(p, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=,@", r))
	}) < 0 {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
