//go:build unix

package admin

import (
	"errors"
	"os"
	"syscall"
)

// ownedByMe refuses a file (or its folder) that another user owns or may
// write, or that is a symbolic link.
func ownedByMe(path string) error {
	for _, p := range []string{path, dirOf(path)} {
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if fi.Mode()&os.ModeSymlink != 0 || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o022 != 0 {
			return errors.New(p + " is not this user's alone; the runtime hint is not followed")
		}
	}
	return nil
}
