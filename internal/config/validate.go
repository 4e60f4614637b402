package config

import (
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Validation happens here, once, for `serve`, `config check` and reloads alike: whatever
// `serve` would refuse at startup because of a configured value is an error of the file
// and line that holds it, so `config check` passing means `serve` can start.

// APIKeyEnv is the environment variable the admin API key may come from instead of
// [web] api_key; the loader reads it too, because it decides whether serve can start.
const APIKeyEnv = "INFRARUST_API_KEY"

// MinAPIKeyLen is the shortest admin API key accepted, so a guessable key never
// protects drains and bans.
const MinAPIKeyLen = 16

// CheckBind reports whether bind is an address a listener can use: host:port with a
// numeric port from 1 to 65535, and as the host an IP address, "localhost" or nothing
// (every interface). A hostname other than localhost is refused: listening on it would
// depend on DNS answering when the proxy starts. `serve --bind` should pass the same test.
func CheckBind(bind string) error {
	host, port, err := net.SplitHostPort(bind)
	if err != nil {
		return fmt.Errorf("%q is not host:port", bind)
	}
	n, err := strconv.ParseUint(port, 10, 64)
	switch {
	case port == "":
		return fmt.Errorf("%q has no port", bind)
	case err != nil && strings.Trim(port, "0123456789") == "":
		return fmt.Errorf("%q has an invalid port %s; use 1-65535", bind, port)
	case err != nil:
		return fmt.Errorf("%q has a port that is not a number (%q); write the port as digits", bind, port)
	case n == 0:
		return fmt.Errorf("%q has port 0, which picks a random port at every start; pick a fixed port (1-65535)", bind)
	case n > 65535:
		return fmt.Errorf("%q has an invalid port %d; use 1-65535", bind, n)
	}
	if host == "" || strings.EqualFold(host, "localhost") {
		return nil
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return fmt.Errorf("%q: the host %q is not an IP address; listen on an address of this machine (e.g. 0.0.0.0, [::] or 10.0.0.2), or on localhost", bind, host)
	}
	return nil
}

// IsLoopbackBind reports whether bind only accepts connections from this machine.
// "localhost" counts; an empty host or a wildcard address does not.
func IsLoopbackBind(bind string) bool {
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

// CheckAdminKey applies the admin API's key rules to [web] and the value of
// INFRARUST_API_KEY (env): a configured key, else the environment's, must have at least
// MinAPIKeyLen characters, and a bind reachable from other machines needs one of them
// (only a loopback bind may fall back to a generated key file). It returns the key path
// the problem belongs to ("web.api_key", "web.bind", or "web" for the environment).
func CheckAdminKey(web Web, env string) (path string, err error) {
	for i, v := range web.ViewerKeys {
		switch k := strings.TrimSpace(v); {
		case len(k) < MinAPIKeyLen:
			return indexPath("web.viewer_keys", i), fmt.Errorf("the key is %d characters; use at least %d (e.g. `openssl rand -hex 32`)", len(k), MinAPIKeyLen)
		case k == strings.TrimSpace(web.APIKey) || k == strings.TrimSpace(env):
			return indexPath("web.viewer_keys", i), fmt.Errorf("a viewer key is the API key: it would only read; give viewers a key of their own")
		}
	}
	if k := strings.TrimSpace(web.APIKey); k != "" {
		if len(k) < MinAPIKeyLen {
			return "web.api_key", fmt.Errorf("the key is %d characters; use at least %d (e.g. `openssl rand -hex 32`)", len(k), MinAPIKeyLen)
		}
		return "", nil
	}
	if k := strings.TrimSpace(env); k != "" {
		if len(k) < MinAPIKeyLen {
			return "web", fmt.Errorf("%s is %d characters; use at least %d (e.g. `openssl rand -hex 32`)", APIKeyEnv, len(k), MinAPIKeyLen)
		}
		return "", nil
	}
	if !IsLoopbackBind(web.Bind) {
		return "web.bind", fmt.Errorf("%q is reachable from other machines and no API key is set: set [web] api_key (at least %d characters) or %s in the environment serve runs in, or bind 127.0.0.1, or set [web] enabled = false", web.Bind, MinAPIKeyLen, APIKeyEnv)
	}
	return "", nil
}

// validate checks the proxy-wide file. envKey is the value of INFRARUST_API_KEY.
func (c *Config) validate(r *report, envKey string) {
	if err := CheckBind(c.Bind); err != nil {
		r.check("bind", "%v (for example \"0.0.0.0:25565\")", err)
	}
	if c.MaxConnections < 0 {
		r.check("max_connections", "must be 0 (unlimited) or more")
	}
	if c.MaxConnectionsPerIP < 0 {
		r.check("max_connections_per_ip", "must be 0 (off) or more")
	}
	if c.ConnectTimeout <= 0 {
		r.check("connect_timeout", "must be more than 0")
	}
	if c.StatusTimeout <= 0 {
		r.check("status_timeout", "must be more than 0 (the default is 2s)")
	}
	if c.ConnectMaxAttempts < 0 {
		r.check("connect_max_attempts", "must be 0 (every address) or more")
	}
	if c.HandshakeTimeout <= 0 {
		r.check("handshake_timeout", "must be more than 0")
	}
	if c.ShutdownTimeout < 0 {
		r.check("shutdown_timeout", "must not be negative")
	}
	if c.ShutdownDelay < 0 {
		r.check("shutdown_delay", "must not be negative")
	}
	switch c.UnknownDomainBehavior {
	case "default_motd", "drop":
	default:
		r.check("unknown_domain_behavior", "%q is not one of default_motd, drop", c.UnknownDomainBehavior)
	}
	checkPrefixes(r, "trusted_proxies", c.TrustedProxies)
	if c.Keepalive.Retries < 0 {
		r.check("keepalive.retries", "must be 0 or more")
	}
	if c.StatusCache.TTL < 0 {
		r.check("status_cache.ttl", "must not be negative")
	}
	if c.StatusCache.MaxStale < 0 {
		r.check("status_cache.max_stale", "must not be negative")
	}
	if fav, err := loadFavicon(c.DefaultMOTD.Favicon, configDir(c.Source)); err != nil {
		r.check("default_motd.favicon", "%v", err)
	} else {
		c.DefaultMOTD.Favicon = fav
	}
	if c.Web.Enabled {
		if err := CheckBind(c.Web.Bind); err != nil {
			r.check("web.bind", "%v (for example \"127.0.0.1:8080\")", err)
		} else if path, err := CheckAdminKey(c.Web, envKey); err != nil {
			r.check(path, "%v", err)
		}
		if sameListener(c.Bind, c.Web.Bind) {
			r.check("web.bind", "%q is where players connect (bind = %q); the admin API needs its own port", c.Web.Bind, c.Bind)
		}
		if c.Web.RequestsPerMinute < 0 {
			r.check("web.requests_per_minute", "must be 0 (off) or more")
		}
	}
	rl := c.RateLimit
	if rl.Enabled {
		if rl.MaxConnections < 1 {
			r.check("rate_limit.max_connections", "must be at least 1 while [rate_limit] is enabled")
		}
		if rl.StatusMax < 1 {
			r.check("rate_limit.status_max", "must be at least 1 while [rate_limit] is enabled")
		}
		if rl.Window <= 0 {
			r.check("rate_limit.window", "must be more than 0 while [rate_limit] is enabled")
		}
		if rl.StatusWindow <= 0 {
			r.check("rate_limit.status_window", "must be more than 0 while [rate_limit] is enabled")
		}
	}
	if rl.IPv6Prefix < 0 || rl.IPv6Prefix > 128 {
		r.check("rate_limit.ipv6_prefix", "must be between 0 and 128")
	}
	if rl.MaxTracked < 0 {
		r.check("rate_limit.max_tracked", "must be 0 (the built-in cap) or more")
	}
	if k, err := ParseForwarderKind(string(c.Forwarder)); err != nil {
		r.check("forwarder", "%v", err)
	} else {
		c.Forwarder = k
	}
	if c.StallTimeout < 0 {
		r.check("stall_timeout", "must be 0 (off) or more")
	}
	switch c.DuplicateLogin {
	case DuplicateReplace, DuplicateRefuse:
	default:
		r.check("duplicate_login", "%q is not one of replace (end the older session, as vanilla does), refuse (turn the new login away, as Velocity does)", c.DuplicateLogin)
	}
	if c.OfflineNames != "" {
		if _, err := regexp.Compile(c.OfflineNames); err != nil {
			r.check("offline_names", "not a regular expression: %v (e.g. offline_names = '^[A-Za-z0-9_.-]{2,16}$')", err)
		}
	}
	if c.FallbackMaxBounces < 1 {
		r.check("fallback_max_bounces", "must be 1 or more (the default is 3): every player's fallbacks have a budget")
	}
	if c.CompressionThreshold < -1 || c.CompressionThreshold > 1<<21 {
		r.check("compression_threshold", "must be -1 (off) or between 0 and %d", 1<<21)
	}
	if u, err := url.Parse(c.Auth.SessionServer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		r.check("auth.session_server", "%q is not an http(s) URL (the default is https://sessionserver.mojang.com)", c.Auth.SessionServer)
	}
	if c.Auth.Timeout <= 0 {
		r.check("auth.timeout", "must be more than 0")
	}
	if m, err := ParseForwardingMode(c.Forwarding.RawMode); err != nil {
		r.check("forwarding.mode", "%s", notOneOf(c.Forwarding.RawMode, ForwardingModeNames()))
	} else {
		c.Forwarding.Mode = m
	}
	c.validateFleet(r)
	validateActiveHealth(r, "active_health", c.ActiveHealth)
	if c.ActiveHealth.MaxConcurrent < 1 {
		r.check("active_health.max_concurrent", "must be at least 1")
	}
	checkPrefixes(r, "ip_filter.allow", c.IPFilter.Allow)
	checkPrefixes(r, "ip_filter.deny", c.IPFilter.Deny)
	c.validateEvents(r)
	c.validateCommands(r)
	c.validateAuthLimbo(r)
	c.validateVerify(r)
	if c.Events.TransportFilterTimeout <= 0 {
		r.check("events.transport_filter_timeout", "must be more than 0 (the default is 1s)")
	}
}

func checkPrefixes(r *report, path string, list []string) {
	for i, p := range list {
		if _, err := ParsePrefix(p); err != nil {
			r.check(indexPath(path, i), "%v", err)
		}
	}
}

func validateActiveHealth(r *report, path string, a ActiveHealth) {
	if _, err := ParseHealthKind(string(a.Kind)); err != nil {
		r.check(joinPath(path, "kind"), "%v", err)
	}
	if a.Timeout <= 0 {
		r.check(joinPath(path, "timeout"), "must be more than 0")
	}
	if a.UnhealthyInterval <= 0 {
		r.check(joinPath(path, "unhealthy_interval"), "must be more than 0")
	}
	if a.Interval <= 0 {
		r.check(joinPath(path, "interval"), "must be more than 0")
	}
}

var validDomain = regexp.MustCompile(`^[a-z0-9*?]([a-z0-9*?.-]*[a-z0-9*?])?$`)

// validate checks one server file and fills the fields parsed by hand (Addresses,
// DomainRewrite) and the defaults of the optional tables.
func (s *Server) validate(r *report, global *Config) {
	if len(s.Domains) == 0 {
		r.check("domains", "at least one domain is required (for example domains = [\"play.example.com\"])")
	}
	s.domainLines = make([]int, len(s.Domains))
	for i, d := range s.Domains {
		p := indexPath("domains", i)
		s.domainLines[i] = r.pos.line(p)
		n := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
		if !validDomain.MatchString(n) {
			r.check(p, "%q is not a hostname or wildcard pattern", d)
		}
		s.Domains[i] = n
	}
	s.Addresses = nil
	first := map[string]int{}
	for i, raw := range s.RawAddresses {
		p := indexPath("addresses", i)
		a, probs := parseAddressEntry(raw)
		for _, pr := range probs {
			pp := p
			if pr.key != "" {
				pp = joinPath(p, pr.key)
			}
			r.check(pp, "%v", pr.err)
		}
		if len(probs) > 0 {
			continue
		}
		if j, ok := first[a.Address]; ok {
			r.check(p, "%s is listed twice (also addresses[%d])", a.Address, j)
			continue
		}
		first[a.Address] = i
		s.Addresses = append(s.Addresses, a)
	}
	if st, err := ParseStrategy(string(s.Balance)); err != nil {
		r.check("balance", "%s", notOneOf(string(s.Balance), StrategyNames()))
	} else {
		s.Balance = st
	}
	if s.SlowStart < 0 {
		r.check("slow_start", "must not be negative")
	}
	if s.SlowStartAggression <= 0 {
		r.check("slow_start_aggression", "must be more than 0 (1.0 is linear)")
	}
	if s.DegradedLatency < 0 {
		r.check("degraded_latency", "must not be negative")
	}
	if !slices.Contains(supportedModes, s.ProxyMode) {
		r.check("proxy_mode", "%s", notOneOf(string(s.ProxyMode), strings.Split(modeList(supportedModes), ", ")))
	}
	for i, h := range s.LimboHandlers {
		if !slices.Contains(limboHandlers, h) {
			r.check(indexPath("limbo_handlers", i), "%s", notOneOf(string(h), []string{"wake", "queue", "maintenance", "auth", "verify"}))
		} else if !s.ProxyMode.Intercepted() {
			r.check(indexPath("limbo_handlers", i), "limbo handlers need an intercepted proxy_mode (offline or client_only): only then can the proxy hold a player")
		} else if h == LimboAuth && s.ProxyMode != ModeOffline {
			r.check(indexPath("limbo_handlers", i), "\"auth\" is the password login of offline servers: client_only players are authenticated by Mojang already; use proxy_mode = \"offline\" or remove \"auth\"")
		}
	}
	if s.BungeeCordChannel && !s.ProxyMode.Intercepted() {
		r.check("bungeecord_channel", "the BungeeCord channel needs an intercepted proxy_mode (offline or client_only): a passthrough server's messages are bytes the proxy does not read")
	}
	if s.RawForwardingMode != "" {
		if m, err := ParseForwardingMode(s.RawForwardingMode); err != nil {
			r.check("forwarding_mode", "%v", err)
		} else {
			s.ForwardingMode = &m
		}
	}
	dr, err := parseDomainRewrite(s.RawDomainRewrite)
	if err != nil {
		r.check("domain_rewrite", "%v", err)
	}
	s.DomainRewrite = dr
	if s.ActiveHealth != nil {
		validateActiveHealth(r, "active_health", *s.ActiveHealth)
	}
	checkPrefixes(r, "ip_filter.allow", s.IPFilter.Allow)
	checkPrefixes(r, "ip_filter.deny", s.IPFilter.Deny)
	for _, m := range []struct {
		state string
		motd  *MOTD
	}{{"online", s.MOTD.Online}, {"offline", s.MOTD.Offline}, {"sleeping", s.MOTD.Sleeping}, {"starting", s.MOTD.Starting}, {"crashed", s.MOTD.Crashed}, {"maintenance", s.MOTD.Maintenance}} {
		if m.motd == nil {
			continue
		}
		fav, err := loadFavicon(m.motd.Favicon, configDir(global.Source))
		if err != nil {
			r.check("motd."+m.state+".favicon", "%v", err)
			continue
		}
		m.motd.Favicon = fav
	}
	if pc := s.MOTD.PlayerCount; pc != "" && !slices.Contains(PlayerCounts, pc) {
		r.check("motd.player_count", "%q is not one of %s", pc, strings.Join(PlayerCounts, ", "))
	}
	if s.FullKickPatterns == nil {
		s.FullKickPatterns = DefaultFullKickPatterns
	}
	if sm := s.ServerManager; sm != nil {
		validateServerManager(r, sm)
	}
}

// configDir is the folder relative paths in a config are resolved against: the folder
// of infrarust.toml, or the working directory for the embedded default.
func configDir(source string) string {
	if source == "" {
		return ""
	}
	return filepath.Dir(source)
}

// maxFaviconBytes bounds what a favicon file may cost; a server-list icon is a 64×64 PNG.
const maxFaviconBytes = 1 << 20

// loadFavicon turns a favicon setting into what the status answer carries: a data URI
// stays as it is, a PNG file (relative to dir) becomes a data URI. Reading it here makes
// a missing file an error of the line that names it, for the default MOTD as for servers.
func loadFavicon(v, dir string) (string, error) {
	if v == "" || strings.HasPrefix(v, "data:image/") {
		return v, nil
	}
	path := v
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the icon: %w (a relative path is relative to the folder of infrarust.toml)", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFaviconBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxFaviconBytes {
		return "", fmt.Errorf("%s is larger than 1 MiB; a server-list icon is a 64×64 PNG", path)
	}
	if len(b) < 8 || string(b[:8]) != "\x89PNG\r\n\x1a\n" {
		return "", fmt.Errorf("%s is not a PNG file", path)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b), nil
}

func validateServerManager(r *report, sm *ServerManager) {
	for _, d := range []struct {
		key string
		v   Duration
	}{{"start_timeout", sm.StartTimeout}, {"poll_interval", sm.PollInterval}, {"shutdown_after", sm.ShutdownAfter}, {"shutdown_timeout", sm.ShutdownTimeout}} {
		if d.v < 0 {
			r.check("server_manager."+d.key, "must not be negative")
		}
	}
	*sm = sm.WithDefaults()
	switch sm.Type {
	case "local":
		if sm.Command == "" {
			r.check("server_manager", "type \"local\" needs command (the program that runs the server, e.g. \"java\")")
		}
		if sm.ReadyPattern != "" {
			if _, err := regexp.Compile(sm.ReadyPattern); err != nil {
				r.check("server_manager.ready_pattern", "not a valid regular expression: %v", err)
			}
		}
		if !slices.Contains(ManagerOutputs, sm.Output) {
			r.check("server_manager.output", "%s", notOneOf(sm.Output, ManagerOutputs))
		}
	case "pterodactyl":
		if sm.URL == "" {
			r.check("server_manager", "type \"pterodactyl\" needs url (the panel's address)")
		} else if u, err := url.Parse(sm.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			r.check("server_manager.url", "%q is not an http(s) panel address like https://panel.example.com", sm.URL)
		}
		if sm.ServerID == "" {
			r.check("server_manager", "type \"pterodactyl\" needs server_id (the short id in the panel's server URL)")
		}
		if name, ok := strings.CutPrefix(sm.APIKey, "env:"); sm.APIKey == "" || ok && name == "" {
			r.check("server_manager", "type \"pterodactyl\" needs api_key: a client API key (ptlc_...) from the panel's account page, or \"env:VAR\"")
		}
	default:
		if !validateManagerType(r, sm) { // manager_types.go
			r.check("server_manager.type", "%s", notOneOf(sm.Type, ManagerTypes))
		}
	}
}

// entryProblem is one thing wrong with an addresses entry: key names the inner key
// it is about ("weight"), "" when it is the entry as a whole.
type entryProblem struct {
	key string
	err error
}

// parseAddressEntry reads one addresses entry and reports every problem in it
// (a table with a quoted weight and a quoted priority is told about both).
func parseAddressEntry(raw any) (Address, []entryProblem) {
	switch v := raw.(type) {
	case string:
		addr, err := ParseAddress(v)
		if err != nil {
			return Address{}, []entryProblem{{"", err}}
		}
		return Address{Address: addr, Weight: 1}, nil
	case map[string]any:
		a := Address{Weight: 1}
		var probs []entryProblem
		bad := func(k string, err error) { probs = append(probs, entryProblem{k, err}) }
		for _, k := range sortedKeys(v) {
			val := v[k]
			switch k {
			case "address":
				s, ok := val.(string)
				if !ok {
					bad(k, fmt.Errorf("expected a \"host:port\" string, got %s", tomlKind(val)))
					continue
				}
				addr, err := ParseAddress(s)
				if err != nil {
					bad(k, err)
					continue
				}
				a.Address = addr
			case "weight":
				n, ok := val.(int64)
				if !ok || n < 1 || n > 1000000 {
					bad(k, fmt.Errorf("expected a whole number from 1 to 1000000, got %s%s", describe(val), quotedHint(val, reflect.TypeFor[int]())))
					continue
				}
				a.Weight = int(n)
			case "priority":
				n, ok := val.(int64)
				if !ok || n < 0 || n > 1000 {
					bad(k, fmt.Errorf("expected a whole number from 0 to 1000, got %s%s", describe(val), quotedHint(val, reflect.TypeFor[int]())))
					continue
				}
				a.Priority = int(n)
			default:
				hint := "an address table takes address, weight, priority"
				if best := closestKey(k, []string{"address", "priority", "weight"}); best != "" {
					hint = "did you mean " + best + "?"
				}
				bad(k, fmt.Errorf("unknown key %q in an address table; %s", k, hint))
			}
		}
		if _, has := v["address"]; !has {
			bad("", fmt.Errorf("an address table needs address = \"host:port\""))
		}
		return a, probs
	default:
		return Address{}, []entryProblem{{"", fmt.Errorf("each entry is \"host:port\" or { address = \"host:port\", weight = N, priority = N }, not %s", tomlKind(raw))}}
	}
}

// describe shows a number as itself and anything else by its TOML kind.
func describe(v any) string {
	if n, ok := v.(int64); ok {
		return strconv.FormatInt(n, 10)
	}
	return tomlKind(v)
}

func parseDomainRewrite(raw any) (DomainRewrite, error) {
	switch v := raw.(type) {
	case nil:
		return DomainRewrite{Mode: RewriteNone}, nil
	case string:
		switch v {
		case string(RewriteNone), string(RewriteFromBackend):
			return DomainRewrite{Mode: RewriteMode(v)}, nil
		}
		return DomainRewrite{}, fmt.Errorf("%q is not one of \"none\", \"from_backend\", { explicit = \"host\" }", v)
	case map[string]any:
		if len(v) == 1 {
			if s, ok := v["explicit"].(string); ok && s != "" {
				return DomainRewrite{Mode: RewriteExplicit, Value: s}, nil
			}
		}
		return DomainRewrite{}, fmt.Errorf("a table must be { explicit = \"host\" }")
	default:
		return DomainRewrite{}, fmt.Errorf("expected \"none\", \"from_backend\" or { explicit = \"host\" }, got %s", tomlKind(raw))
	}
}

// sameListener reports whether two listen addresses would take the same socket: the
// same port on the same host, or on a wildcard host (0.0.0.0, ::) and any other.
func sameListener(a, b string) bool {
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil || pa != pb {
		return false
	}
	wild := func(h string) bool {
		ip, err := netip.ParseAddr(h)
		return h == "" || (err == nil && ip.IsUnspecified())
	}
	return ha == hb || wild(ha) || wild(hb)
}
