package nmp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// npmCITimeout bounds one `npm ci` (a clean install downloads about 80 packages).
const npmCITimeout = 10 * time.Minute

// ensureInstalled makes test/nmp/node_modules match package-lock.json. Test binaries of
// several packages may run at once, so the check and the install happen under a file
// lock; whoever comes second finds the packages installed and does nothing. It reports
// whether it ran npm ci.
func ensureInstalled(dir string) (bool, error) {
	if err := installedMatchesLock(dir); err == nil {
		return false, nil
	}
	unlock, err := lockFile(filepath.Join(dir, ".install.lock"))
	if err != nil {
		return false, fmt.Errorf("lock %s for npm ci: %w", dir, err)
	}
	defer unlock()
	stale := installedMatchesLock(dir)
	if stale == nil {
		return false, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return false, fmt.Errorf("test/nmp needs its npm packages (%v) and npm is not on PATH: install npm (e.g. `apt-get install npm`), or run `npm ci --prefix test/nmp` once", stale)
	}
	ctx, cancel := context.WithTimeout(context.Background(), npmCITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	out := newTailBuffer(16 << 10)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return true, fmt.Errorf("npm ci in %s (needed because %v): %w\n%s", dir, stale, err, out)
	}
	if err := installedMatchesLock(dir); err != nil {
		return true, fmt.Errorf("npm ci in %s finished but the install still differs from package-lock.json: %w", dir, err)
	}
	return true, nil
}

// lockfile is the part of an npm v2/v3 package-lock.json the freshness check reads.
type lockfile struct {
	LockfileVersion int                    `json:"lockfileVersion"`
	Packages        map[string]lockPackage `json:"packages"`
}

type lockPackage struct {
	Version         string            `json:"version"`
	Optional        bool              `json:"optional"`
	Link            bool              `json:"link"`
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
}

// installedMatchesLock says why dir's node_modules does not match its package-lock.json
// (nil when it does): package.json's dependencies must be the lock's, and every locked
// package must be installed at its locked version. It reads no network and works however
// the packages were installed (by this package or by `npm ci` in CI).
func installedMatchesLock(dir string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	var lock lockfile
	if err := json.Unmarshal(raw, &lock); err != nil {
		return fmt.Errorf("package-lock.json: %w", err)
	}
	if lock.LockfileVersion < 2 {
		return fmt.Errorf("package-lock.json is lockfileVersion %d; regenerate it with npm 7+", lock.LockfileVersion)
	}
	var manifest lockPackage
	raw, err = os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return fmt.Errorf("package.json: %w", err)
	}
	root := lock.Packages[""]
	if !sameDeps(manifest.Dependencies, root.Dependencies) || !sameDeps(manifest.DevDependencies, root.DevDependencies) {
		return errors.New("package.json and package-lock.json list different dependencies (run `npm install` in test/nmp and commit the lock)")
	}
	for path, p := range lock.Packages {
		if !strings.HasPrefix(path, "node_modules/") || p.Link {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path), "package.json"))
		if errors.Is(err, fs.ErrNotExist) {
			if p.Optional {
				continue // platform-specific optional packages are legitimately absent
			}
			return fmt.Errorf("%s is not installed", path)
		}
		if err != nil {
			return err
		}
		var installed lockPackage
		if err := json.Unmarshal(raw, &installed); err != nil {
			return fmt.Errorf("%s/package.json: %w", path, err)
		}
		if installed.Version != p.Version {
			return fmt.Errorf("%s is %s, the lock wants %s", path, installed.Version, p.Version)
		}
	}
	return nil
}

func sameDeps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
