package config

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// DefaultTOML is the commented starter infrarust.toml (embedded default and `config init`).
//
//go:embed default.toml
var DefaultTOML string

// ExampleServerTOML is the commented starter servers/example.toml for `config init`.
//
//go:embed example-server.toml
var ExampleServerTOML string

// Error is a configuration problem tied to a file and, when known, a line.
type Error struct {
	File string
	Line int
	// Key is the dotted path of the key the problem is about ("rate_limit.window",
	// "addresses[2].weight"); "" when it is about the whole file.
	Key string
	Msg string
	// Kind classifies the problem for callers (errors.Is); nil for most errors.
	Kind error
}

// ErrDomainConflict marks a domain claimed by two servers: a reload rejects the file
// that claims a domain another server holds, and keeps applying the others.
var ErrDomainConflict = errors.New("domain claimed by two servers")

// Unwrap exposes Kind to errors.Is.
func (e *Error) Unwrap() error { return e.Kind }

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Load reads path and its servers_dir. When the file does not exist and mustExist is
// false (the operator did not name a file), the embedded default is used. Like serve,
// it reads INFRARUST_API_KEY from the environment, because that decides whether the
// admin API can start.
func Load(path string, mustExist bool) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !mustExist {
		cfg, perr := Parse([]byte(DefaultTOML), "<embedded default>")
		if perr != nil {
			return nil, perr
		}
		cfg.ServersPath = cfg.ServersDir
		cfg.resolveSecretFile(".")
		return cfg, loadServers(cfg, true)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config file %s does not exist: %w (create one with 'infrarust config init', or leave out --config to use the embedded default)", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, serversOK, mainErr := parseFile(data, path)
	if cfg == nil {
		return nil, mainErr
	}
	// The server files are checked even when infrarust.toml has errors, so one run
	// shows every problem; only a servers_dir that did not decode stops that.
	if !serversOK {
		return nil, mainErr
	}
	if err := errors.Join(mainErr, loadServers(cfg, false)); err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadMain re-reads the proxy-wide file at path for a reload: the servers
// are not loaded (the caller merges servers_dir, keeping a broken file's
// previous version); any error rejects the whole file.
func LoadMain(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, _, err := parseFile(data, path)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseFile is parseMain of the file at path, with its relative paths made
// relative to the file's folder.
func parseFile(data []byte, path string) (*Config, bool, error) {
	cfg, serversOK, mainErr := parseMain(data, path, path, os.Getenv(APIKeyEnv))
	if cfg == nil {
		return nil, false, mainErr
	}
	// Relative paths are relative to the config file, so `serve` and the CLI agree
	// whatever folder each was started from.
	cfg.ServersPath = cfg.ServersDir
	if !filepath.IsAbs(cfg.ServersPath) {
		cfg.ServersPath = filepath.Join(filepath.Dir(path), cfg.ServersDir)
	}
	if cfg.Web.DataDir != "" && !filepath.IsAbs(cfg.Web.DataDir) {
		cfg.Web.DataDir = filepath.Join(filepath.Dir(path), cfg.Web.DataDir)
	}
	cfg.resolveSecretFile(filepath.Dir(path))
	return cfg, serversOK, mainErr
}

// resolveSecretFile makes [forwarding] secret_file a path: relative to dir (the
// folder of infrarust.toml); unset, forwarding.secret in dir when one is there
// from before, else in data_dir, which is where state is written (a config
// folder may be read-only, as in the image and on Kubernetes).
func (c *Config) resolveSecretFile(dir string) {
	f := &c.Forwarding.SecretFile
	switch {
	case *f != "" && !filepath.IsAbs(*f):
		*f = filepath.Join(dir, *f)
	case *f == "":
		legacy := filepath.Join(dir, DefaultSecretName)
		if _, err := os.Stat(legacy); err == nil {
			*f = legacy
			return
		}
		*f = filepath.Join(c.Web.DataDir, DefaultSecretName)
	}
}

// Parse decodes and validates the proxy-wide file (servers are not loaded). Relative
// paths in it (favicon) are resolved against the working directory; INFRARUST_API_KEY
// is read from the environment.
func Parse(data []byte, file string) (*Config, error) {
	cfg, _, err := parseMain(data, file, "", os.Getenv(APIKeyEnv))
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseMain decodes data, the contents of source ("" when it is not a file on disk),
// reporting problems under the name file; envKey is INFRARUST_API_KEY's value. Past a
// syntax error it returns the config even with errors (bad values keep their default),
// and serversOK says whether servers_dir decoded, so the caller can still check the
// server files.
func parseMain(data []byte, file, source, envKey string) (cfg *Config, serversOK bool, err error) {
	m, pos, err := parseTOML(data, file)
	if err != nil {
		return nil, false, err
	}
	cfg = Default()
	cfg.Source = source
	r := newReport(file, pos)
	decodeInto(r, m, reflect.ValueOf(cfg))
	cfg.enableWrittenDiscovery(m)
	_, cfg.fleetWritten = m["fleet"]
	cfg.applyEnv(r, os.LookupEnv) // flag > environment > file > default
	cfg.validate(r, envKey)
	cfg.validateDiscovery(r, m) // [docker], [kubernetes]
	return cfg, !r.bad["servers_dir"], r.err()
}

func loadServers(cfg *Config, optional bool) error {
	servers, errs := LoadServersDir(cfg.ServersPath, cfg)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if servers == nil && !optional {
		if _, err := os.Stat(cfg.ServersPath); err != nil {
			return fmt.Errorf("servers_dir %q: %w (create it or point servers_dir elsewhere)", cfg.ServersPath, err)
		}
	}
	cfg.Servers = servers
	return nil
}

// LoadServersDir loads every *.toml file in dir. A missing dir yields no servers and no
// error. Per-file errors are returned together with the servers that did load, so a
// reload can keep the old version of a broken file. Domain conflicts are errors.
func LoadServersDir(dir string, global *Config) ([]*Server, []error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("read servers_dir: %w", err)}
	}
	var servers, broken []*Server
	var errs []error
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".toml") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("read server file: %w", err))
			continue
		}
		s, err := parseServer(data, path, global)
		if err != nil {
			errs = append(errs, err)
			if s != nil {
				broken = append(broken, s)
			}
			continue
		}
		servers = append(servers, s)
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	if err := CheckDomainConflicts(servers); err != nil {
		errs = append(errs, err)
	}
	// A broken file's domains are checked too, so one run shows a conflict
	// the fix of the file would run into; the error is the broken file's, which
	// is refused anyway (a reload keeps the loaded server as it is).
	owner := map[string]*Server{}
	for _, s := range servers {
		for _, d := range s.Domains {
			owner[d] = s
		}
	}
	for _, b := range broken {
		for i, d := range b.Domains {
			if o := owner[d]; o != nil {
				errs = append(errs, &Error{File: b.File, Line: b.domainLine(i), Key: indexPath("domains", i), Msg: fmt.Sprintf("domain %q is also claimed by server %q (%s)", d, o.ID, o.File)})
			}
		}
	}
	return servers, errs
}

// LoadServerFile reads one server; its id is the file name without .toml.
func LoadServerFile(path string, global *Config) (*Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read server file: %w", err)
	}
	return ParseServer(data, path, global)
}

// ParseServer decodes and validates one server file; global supplies what a server
// inherits (the [active_health] block) and the folder relative paths start from (nil
// means the built-in defaults).
func ParseServer(data []byte, path string, global *Config) (*Server, error) {
	s, err := parseServer(data, path, global)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// parseServer is ParseServer that also returns what decoded of a file with
// errors (nil only when the file is not TOML), for cross-file checks.
func parseServer(data []byte, path string, global *Config) (*Server, error) {
	if global == nil {
		global = Default()
	}
	m, pos, err := parseTOML(data, path)
	if err != nil {
		return nil, err
	}
	s := &Server{}
	serverDefaults(s)
	// A per-server [active_health] inherits the keys it leaves out from the global block,
	// so the pointer is pre-filled when (and only when) the file has that table.
	if _, ok := m["active_health"]; ok {
		ah := global.ActiveHealth
		ah.MaxConcurrent = 0
		s.ActiveHealth = &ah
	}
	r := newReport(path, pos)
	decodeInto(r, m, reflect.ValueOf(s))
	s.File = path
	s.ID = strings.TrimSuffix(filepath.Base(path), ".toml")
	s.validate(r, global)
	return s, r.err()
}

// CheckDomainConflicts refuses a domain claimed by two servers, naming both files.
func CheckDomainConflicts(servers []*Server) error {
	owner := map[string]*Server{}
	var errs []error
	for _, s := range servers {
		for i, d := range s.Domains {
			if o, ok := owner[d]; ok && o != s {
				errs = append(errs, &Error{File: s.File, Line: s.domainLine(i), Key: indexPath("domains", i), Msg: fmt.Sprintf("domain %q is already claimed by server %q (%s)", d, o.ID, o.File), Kind: ErrDomainConflict})
				continue
			}
			owner[d] = s
		}
	}
	return errors.Join(errs...)
}
