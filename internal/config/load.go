package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/infrarust-go/infrarust/internal/ipfilter"
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
	Msg  string
	// Kind classifies the problem for callers (errors.Is); nil for most errors.
	Kind error
}

// ErrDomainConflict marks a domain claimed by two servers: a reload must reject the
// whole set of files, not just one of them.
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
// false (the operator did not name a file), the embedded default is used.
func Load(path string, mustExist bool) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !mustExist {
		cfg, perr := Parse([]byte(DefaultTOML), "<embedded default>")
		if perr != nil {
			return nil, perr
		}
		cfg.ServersPath = cfg.ServersDir
		return cfg, loadServers(cfg, true)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config file %s does not exist: %w (create one with 'infrarust config init', or leave out --config to use the embedded default)", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	cfg.Source = path
	// Relative paths are relative to the config file, so `serve` and the CLI agree
	// whatever folder each was started from.
	cfg.ServersPath = cfg.ServersDir
	if !filepath.IsAbs(cfg.ServersPath) {
		cfg.ServersPath = filepath.Join(filepath.Dir(path), cfg.ServersDir)
	}
	if cfg.Web.DataDir != "" && !filepath.IsAbs(cfg.Web.DataDir) {
		cfg.Web.DataDir = filepath.Join(filepath.Dir(path), cfg.Web.DataDir)
	}
	return cfg, loadServers(cfg, false)
}

// Parse decodes and validates the proxy-wide file (servers are not loaded).
func Parse(data []byte, file string) (*Config, error) {
	cfg := Default()
	if err := decodeStrict(data, file, cfg); err != nil {
		return nil, err
	}
	if err := cfg.validate(file, data); err != nil {
		return nil, err
	}
	return cfg, nil
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
	var servers []*Server
	var errs []error
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".toml") {
			continue
		}
		s, err := LoadServerFile(filepath.Join(dir, e.Name()), global)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		servers = append(servers, s)
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	if err := CheckDomainConflicts(servers); err != nil {
		errs = append(errs, err)
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

// ParseServer decodes and validates one server file.
func ParseServer(data []byte, path string, global *Config) (*Server, error) {
	s := &Server{}
	serverDefaults(s)
	// A per-server [active_health] inherits the keys it leaves out from the global block,
	// so the pointer is pre-filled when (and only when) the file has that table.
	var keys map[string]any
	if toml.Unmarshal(data, &keys) == nil {
		if _, ok := keys["active_health"]; ok {
			ah := global.ActiveHealth
			ah.MaxConcurrent = 0
			s.ActiveHealth = &ah
		}
	}
	if err := decodeStrict(data, path, s); err != nil {
		return nil, err
	}
	s.File = path
	s.ID = strings.TrimSuffix(filepath.Base(path), ".toml")
	if err := s.validate(data, global); err != nil {
		return nil, err
	}
	return s, nil
}

func decodeStrict(data []byte, file string, v any) error {
	err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(v)
	if err == nil {
		return nil
	}
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var errs []error
		for _, de := range strict.Errors {
			row, _ := de.Position()
			errs = append(errs, &Error{File: file, Line: row, Msg: fmt.Sprintf("unknown key %q (see docs/configuration.md for the keys this file takes)", strings.Join(de.Key(), "."))})
		}
		return errors.Join(errs...)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		msg := de.Error()
		if k := de.Key(); len(k) > 0 {
			msg = fmt.Sprintf("key %q: %s", strings.Join(k, "."), msg)
		}
		return &Error{File: file, Line: row, Msg: strings.TrimPrefix(msg, "toml: ")}
	}
	return &Error{File: file, Msg: err.Error()}
}

// lineOf finds the first line holding needle (after key, when given), for errors on values
// that go-toml hands over without a position. 0 when not found.
func lineOf(data []byte, key, needle string) int {
	start := 0
	if key != "" {
		re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(key) + `\s*=`)
		if loc := re.FindIndex(data); loc != nil {
			start = loc[0]
		}
	}
	idx := start
	if needle != "" {
		i := bytes.Index(data[start:], []byte(needle))
		if i < 0 {
			return bytes.Count(data[:start], []byte("\n")) + 1
		}
		idx = start + i
	}
	return bytes.Count(data[:idx], []byte("\n")) + 1
}

func (c *Config) validate(file string, data []byte) error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, &Error{File: file, Line: lineOf(data, key, ""), Msg: key + ": " + fmt.Sprintf(format, a...)})
	}
	if _, _, err := net.SplitHostPort(c.Bind); err != nil {
		bad("bind", "%q is not host:port (for example \"0.0.0.0:25565\")", c.Bind)
	}
	if c.MaxConnections < 0 {
		bad("max_connections", "must be 0 (unlimited) or more")
	}
	if c.MaxConnectionsPerIP < 0 {
		bad("max_connections_per_ip", "must be 0 (off) or more")
	}
	if c.ConnectTimeout <= 0 {
		bad("connect_timeout", "must be more than 0")
	}
	if c.ConnectMaxAttempts < 0 {
		bad("connect_max_attempts", "must be 0 (every address) or more")
	}
	if c.HandshakeTimeout <= 0 {
		bad("handshake_timeout", "must be more than 0")
	}
	switch c.UnknownDomainBehavior {
	case "default_motd", "drop":
	default:
		bad("unknown_domain_behavior", "%q is not one of default_motd, drop", c.UnknownDomainBehavior)
	}
	for _, p := range c.TrustedProxies {
		if _, err := ipfilter.ParsePrefix(p); err != nil {
			bad("trusted_proxies", "%v", err)
		}
	}
	if c.StatusCache.TTL < 0 || c.StatusCache.MaxStale < 0 {
		bad("status_cache", "durations must not be negative")
	}
	if c.Web.Enabled {
		if _, _, err := net.SplitHostPort(c.Web.Bind); err != nil {
			bad("bind", "[web] bind %q is not host:port", c.Web.Bind)
		}
		if c.Web.RequestsPerMinute < 0 {
			bad("requests_per_minute", "must be 0 (off) or more")
		}
	}
	rl := c.RateLimit
	if rl.Enabled && (rl.MaxConnections < 1 || rl.StatusMax < 1 || rl.Window <= 0 || rl.StatusWindow <= 0) {
		bad("rate_limit", "max_connections, status_max, window and status_window must be positive when enabled")
	}
	if rl.IPv6Prefix < 0 || rl.IPv6Prefix > 128 {
		bad("ipv6_prefix", "must be between 0 and 128")
	}
	if err := validateActiveHealth(c.ActiveHealth); err != nil {
		bad("active_health", "%v", err)
	}
	if c.ActiveHealth.MaxConcurrent < 1 {
		bad("max_concurrent", "must be at least 1")
	}
	for _, list := range [][]string{c.IPFilter.Allow, c.IPFilter.Deny} {
		for _, p := range list {
			if _, err := ipfilter.ParsePrefix(p); err != nil {
				bad("ip_filter", "%v", err)
			}
		}
	}
	return errors.Join(errs...)
}

func validateActiveHealth(a ActiveHealth) error {
	if a.Kind != "tcp" && a.Kind != "status_ping" {
		return fmt.Errorf("kind %q is not one of tcp, status_ping", a.Kind)
	}
	if a.Timeout <= 0 || a.UnhealthyInterval <= 0 || a.Interval <= 0 {
		return fmt.Errorf("timeout, unhealthy_interval and interval must be more than 0")
	}
	return nil
}

var validDomain = regexp.MustCompile(`^[a-z0-9*?]([a-z0-9*?.-]*[a-z0-9*?])?$`)

func (s *Server) validate(data []byte, global *Config) error {
	var errs []error
	bad := func(key, needle, format string, a ...any) {
		errs = append(errs, &Error{File: s.File, Line: lineOf(data, key, needle), Msg: fmt.Sprintf(format, a...)})
	}
	if len(s.Domains) == 0 {
		bad("domains", "", "domains: at least one domain is required (for example domains = [\"play.example.com\"])")
	}
	for i, d := range s.Domains {
		n := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
		if !validDomain.MatchString(n) {
			bad("domains", d, "domains: %q is not a hostname or wildcard pattern", d)
		}
		s.Domains[i] = n
	}
	s.Addresses = nil
	for _, raw := range s.RawAddresses {
		a, needle, err := parseAddressEntry(raw)
		if err != nil {
			bad("addresses", needle, "addresses: %v", err)
			continue
		}
		s.Addresses = append(s.Addresses, a)
	}
	seen := map[string]bool{}
	for _, a := range s.Addresses {
		if seen[a.Address] {
			bad("addresses", a.Address, "addresses: %s is listed twice", a.Address)
		}
		seen[a.Address] = true
	}
	found := false
	for _, st := range Strategies {
		found = found || st == s.Balance
	}
	if !found {
		bad("balance", "", "balance: %q is not one of %s", s.Balance, strings.Join(Strategies, ", "))
	}
	if s.SlowStart < 0 {
		bad("slow_start", "", "slow_start: must not be negative")
	}
	if s.SlowStartAggression <= 0 {
		bad("slow_start_aggression", "", "slow_start_aggression: must be more than 0 (1.0 is linear)")
	}
	switch s.ProxyMode {
	case "passthrough", "zero_copy":
	case "client_only", "offline", "server_only":
		bad("proxy_mode", "", "proxy_mode: %q is not supported yet by Infrarust (Go); use \"passthrough\" or \"zero_copy\"", s.ProxyMode)
	default:
		bad("proxy_mode", "", "proxy_mode: %q is not one of passthrough, zero_copy", s.ProxyMode)
	}
	dr, err := parseDomainRewrite(s.RawDomainRewrite)
	if err != nil {
		bad("domain_rewrite", "", "domain_rewrite: %v", err)
	}
	s.DomainRewrite = dr
	if s.ActiveHealth != nil {
		if err := validateActiveHealth(*s.ActiveHealth); err != nil {
			bad("active_health", "", "[active_health]: %v", err)
		}
	}
	for _, list := range [][]string{s.IPFilter.Allow, s.IPFilter.Deny} {
		for _, p := range list {
			if _, err := ipfilter.ParsePrefix(p); err != nil {
				bad("", p, "ip_filter: %v", err)
			}
		}
	}
	if s.FullKickPatterns == nil {
		s.FullKickPatterns = DefaultFullKickPatterns
	}
	if sm := s.ServerManager; sm != nil {
		if err := validateServerManager(sm); err != nil {
			bad("type", "", "[server_manager]: %v", err)
		}
	}
	return errors.Join(errs...)
}

// WithDefaults fills the timings left unset; validation and the server manager both
// use it, so a hand-built config can never mean "time out at once" or "poll in a busy loop".
func (sm ServerManager) WithDefaults() ServerManager {
	if sm.StartTimeout <= 0 {
		sm.StartTimeout = Duration(60e9) // 60 s
	}
	if sm.PollInterval <= 0 {
		sm.PollInterval = Duration(5e9) // 5 s
	}
	if sm.ShutdownTimeout <= 0 {
		sm.ShutdownTimeout = Duration(30e9) // 30 s
	}
	return sm
}

func validateServerManager(sm *ServerManager) error {
	*sm = sm.WithDefaults()
	switch sm.Type {
	case "local":
		if sm.Command == "" {
			return fmt.Errorf("type \"local\" needs command")
		}
		if sm.ReadyPattern != "" {
			if _, err := regexp.Compile(sm.ReadyPattern); err != nil {
				return fmt.Errorf("ready_pattern: %w", err)
			}
		}
	case "pterodactyl":
		if sm.URL == "" || sm.ServerID == "" {
			return fmt.Errorf("type \"pterodactyl\" needs url and server_id")
		}
	default:
		return fmt.Errorf("type %q is not one of local, pterodactyl", sm.Type)
	}
	return nil
}

func parseAddressEntry(raw any) (Address, string, error) {
	switch v := raw.(type) {
	case string:
		addr, err := ParseAddress(v)
		return Address{Address: addr, Weight: 1}, v, err
	case map[string]any:
		a := Address{Weight: 1}
		needle := ""
		for k, val := range v {
			switch k {
			case "address":
				s, ok := val.(string)
				if !ok {
					return a, "", fmt.Errorf("address must be a \"host:port\" string")
				}
				needle = s
				addr, err := ParseAddress(s)
				if err != nil {
					return a, s, err
				}
				a.Address = addr
			case "weight":
				n, ok := val.(int64)
				if !ok || n < 1 || n > 1000000 {
					return a, "weight", fmt.Errorf("weight must be a whole number from 1 to 1000000")
				}
				a.Weight = int(n)
			case "priority":
				n, ok := val.(int64)
				if !ok || n < 0 || n > 1000 {
					return a, "priority", fmt.Errorf("priority must be a whole number from 0 to 1000")
				}
				a.Priority = int(n)
			default:
				return a, k, fmt.Errorf("unknown key %q in an address table (takes address, weight, priority)", k)
			}
		}
		if a.Address == "" {
			return a, "{", fmt.Errorf("an address table needs address = \"host:port\"")
		}
		return a, needle, nil
	default:
		return Address{}, "", fmt.Errorf("each entry is \"host:port\" or { address = \"host:port\", weight = N, priority = N }, not %T", raw)
	}
}

func parseDomainRewrite(raw any) (DomainRewrite, error) {
	switch v := raw.(type) {
	case nil:
		return DomainRewrite{Mode: "none"}, nil
	case string:
		switch v {
		case "none", "from_backend":
			return DomainRewrite{Mode: v}, nil
		}
		return DomainRewrite{}, fmt.Errorf("%q is not one of \"none\", \"from_backend\", { explicit = \"host\" }", v)
	case map[string]any:
		if len(v) == 1 {
			if s, ok := v["explicit"].(string); ok && s != "" {
				return DomainRewrite{Mode: "explicit", Value: s}, nil
			}
		}
		return DomainRewrite{}, fmt.Errorf("a table must be { explicit = \"host\" }")
	default:
		return DomainRewrite{}, fmt.Errorf("must be \"none\", \"from_backend\" or { explicit = \"host\" }")
	}
}

// CheckDomainConflicts refuses a domain claimed by two servers, naming both files.
func CheckDomainConflicts(servers []*Server) error {
	owner := map[string]*Server{}
	var errs []error
	for _, s := range servers {
		for _, d := range s.Domains {
			if o, ok := owner[d]; ok && o != s {
				errs = append(errs, &Error{File: s.File, Line: lineOfFile(s.File, d), Msg: fmt.Sprintf("domain %q is already claimed by server %q (%s)", d, o.ID, o.File), Kind: ErrDomainConflict})
				continue
			}
			owner[d] = s
		}
	}
	return errors.Join(errs...)
}

func lineOfFile(path, needle string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return lineOf(data, "domains", needle)
}
