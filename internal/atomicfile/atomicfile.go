// Package atomicfile replaces small state files (bans, drains, permissions)
// so that a crash at any instant leaves the old file or the new one, never a
// torn one.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// tempPattern names the temp files Write leaves beside path until the rename.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".tmp-*" }

// Write replaces path with data: a temp file in the same directory (created
// with mode 0600, and the directory with 0700 when missing), fsync, rename,
// fsync of the directory.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return fmt.Errorf("in %s: %w", dir, err)
	}
	name := tmp.Name()
	fail := func(step string, err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("%s: %s: %w", path, step, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail("write", err)
	}
	if err := tmp.Sync(); err != nil {
		return fail("fsync", err)
	}
	if err := tmp.Close(); err != nil {
		return fail("close", err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("%s: rename: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable across a power loss. Best effort: the
// rename already happened (failing now would report an error for a change
// that is in place), and some platforms cannot fsync a directory.
func syncDir(dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Clean deletes what interrupted writes of path left beside it. Best effort:
// a file that cannot be removed is only clutter, never read.
func Clean(path string) {
	names, _ := filepath.Glob(filepath.Join(filepath.Dir(path), tempPattern(path)))
	for _, n := range names {
		_ = os.Remove(n)
	}
}
