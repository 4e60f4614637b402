package admin

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/infrarust-go/infrarust/internal/config"
)

// MinAPIKeyLen is the shortest key accepted, so a guessable key never protects drains and bans.
const MinAPIKeyLen = 16

// KeyFileName is the generated key's file in the data dir; the CLI on the same machine reads it.
const KeyFileName = "admin.key"

// ResolveAPIKey picks the admin API key: [web] api_key, else env (the value of
// INFRARUST_API_KEY), else, on a loopback bind only, the key in <data_dir>/admin.key,
// generated on first start. generatedPath is the key file's path when the key came
// from it (so serve can log where the CLI finds it), empty otherwise.
func ResolveAPIKey(web config.Web, env string) (key string, generatedPath string, err error) {
	if k := strings.TrimSpace(web.APIKey); k != "" {
		if len(k) < MinAPIKeyLen {
			return "", "", fmt.Errorf("[web] api_key is %d characters; use at least %d (e.g. `openssl rand -hex 32`)", len(k), MinAPIKeyLen)
		}
		return k, "", nil
	}
	if k := strings.TrimSpace(env); k != "" {
		if len(k) < MinAPIKeyLen {
			return "", "", fmt.Errorf("INFRARUST_API_KEY is %d characters; use at least %d (e.g. `openssl rand -hex 32`)", len(k), MinAPIKeyLen)
		}
		return k, "", nil
	}
	if !isLoopbackBind(web.Bind) {
		return "", "", fmt.Errorf("the admin API binds %q, which is reachable from other machines, and no API key is set: set [web] api_key (at least %d characters) or INFRARUST_API_KEY, or bind 127.0.0.1, or set [web] enabled = false", web.Bind, MinAPIKeyLen)
	}
	dir := web.DataDir
	if dir == "" {
		dir = "."
	}
	path := filepath.Join(dir, KeyFileName)
	k, err := readKeyFile(path)
	if err == nil {
		return k, path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	k, err = writeNewKey(dir, path)
	if err != nil {
		return "", "", err
	}
	return k, path, nil
}

// readKeyFile reads and checks a key file left by an earlier start.
func readKeyFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("read admin key %s: %w (fix its permissions, or delete it to generate a new key)", path, err)
	}
	k := strings.TrimSpace(string(data))
	if len(k) < MinAPIKeyLen {
		return "", fmt.Errorf("admin key file %s holds %d characters, fewer than %d; delete it to generate a new key", path, len(k), MinAPIKeyLen)
	}
	return k, nil
}

// writeNewKey creates a random key readable only by the proxy's user. O_EXCL makes a
// concurrent second start read the first one's key instead of overwriting it.
func writeNewKey(dir, path string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create data dir %s for the admin key: %w", dir, err)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate admin key: %w", err)
	}
	k := hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readKeyFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("write admin key %s: %w (set [web] api_key or INFRARUST_API_KEY instead)", path, err)
	}
	if _, err := f.WriteString(k + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("write admin key %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("write admin key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("write admin key %s: %w", path, err)
	}
	return k, nil
}

// isLoopbackBind reports whether bind only accepts connections from this machine.
// "localhost" counts; an empty host or a wildcard address does not.
func isLoopbackBind(bind string) bool {
	host, _, err := net.SplitHostPort(bind)
	if err != nil {
		host = bind
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
