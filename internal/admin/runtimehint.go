package admin

import (
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// A running serve leaves where its admin API is and which key file it made
// in a per-user runtime file, so the CLI finds it from any folder: a proxy
// started without a config file keeps its data_dir (and the generated key)
// relative to the folder it started in, which a CLI run elsewhere cannot
// know. Only the same user reads it (0600 in a 0700 folder): whoever may read
// the key file anyway.

// RuntimeHint is what the runtime file holds.
type RuntimeHint struct {
	URL     string `json:"url"`
	KeyFile string `json:"key_file,omitempty"` // absolute; "" when the key is not in a file the proxy made
	PID     int    `json:"pid"`
}

// runtimeHintPath is $XDG_RUNTIME_DIR/infrarust/admin.json, else in this
// user's cache folder: never a place another user could have made first (a
// shared temp folder would let him point the CLI, and its key, elsewhere).
func runtimeHintPath() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "infrarust", "admin.json")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "infrarust", "admin.json")
	}
	return ""
}

// WriteRuntimeHint records h for the CLI; the returned func removes it (when
// it is still this process's).
func WriteRuntimeHint(h RuntimeHint) (remove func(), err error) {
	path := runtimeHintPath()
	if path == "" {
		return func() {}, errors.New("no runtime or cache folder for this user")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return func() {}, err
	}
	if h.KeyFile != "" {
		if abs, err := filepath.Abs(h.KeyFile); err == nil {
			h.KeyFile = abs
		}
	}
	h.PID = os.Getpid()
	data, _ := json.Marshal(h)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return func() {}, err
	}
	return func() {
		if cur, err := ReadRuntimeHint(); err == nil && cur.PID == h.PID {
			_ = os.Remove(path)
		}
	}, nil
}

// ReadRuntimeHint is the running serve's hint; an error when there is none,
// or its process is gone.
func ReadRuntimeHint() (RuntimeHint, error) {
	var h RuntimeHint
	path := runtimeHintPath()
	if path == "" {
		return h, errors.New("no runtime or cache folder for this user")
	}
	if err := ownedByMe(path); err != nil {
		return h, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(data, &h); err != nil || !loopbackURL(h.URL) {
		return h, errors.New("the runtime hint is not readable, or names an address off this machine")
	}
	if runtime.GOOS != "windows" && h.PID > 0 {
		if p, err := os.FindProcess(h.PID); err != nil || p.Signal(syscall.Signal(0)) != nil {
			return h, errors.New("the proxy that left the runtime hint is gone")
		}
	}
	return h, nil
}

// loopbackURL is an http URL of this machine, the only place a hint may send
// the CLI (and its key).
func loopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

func dirOf(path string) string { return filepath.Dir(path) }
