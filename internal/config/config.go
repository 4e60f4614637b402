// Package config holds Infrarust's configuration schema, its defaults and the
// loader for infrarust.toml and servers/*.toml. Key names follow the Rust
// Infrarust so existing files keep working.
package config

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the proxy-wide file (infrarust.toml) plus the servers loaded from servers_dir.
type Config struct {
	Bind                string   `toml:"bind"`
	MaxConnections      int      `toml:"max_connections"`
	MaxConnectionsPerIP int      `toml:"max_connections_per_ip"`
	ConnectTimeout      Duration `toml:"connect_timeout"`
	// StatusTimeout bounds one status relay to a backend address (dial and
	// answer), apart from connect_timeout: a server-list ping must not wait as
	// long as a login may.
	StatusTimeout         Duration `toml:"status_timeout"`
	ConnectMaxAttempts    int      `toml:"connect_max_attempts"`
	HandshakeTimeout      Duration `toml:"handshake_timeout"`
	ServersDir            string   `toml:"servers_dir"`
	UnknownDomainBehavior string   `toml:"unknown_domain_behavior"`
	ShutdownTimeout       Duration `toml:"shutdown_timeout"`
	// ShutdownDelay is how long the proxy keeps accepting after SIGTERM with its
	// readiness already off, so load balancers stop sending before it stops.
	ShutdownDelay        Duration     `toml:"shutdown_delay"`
	ReceiveProxyProtocol bool         `toml:"receive_proxy_protocol"`
	TrustedProxies       []string     `toml:"trusted_proxies"`
	Keepalive            Keepalive    `toml:"keepalive"`
	StatusCache          StatusCache  `toml:"status_cache"`
	DefaultMOTD          MOTD         `toml:"default_motd"`
	Web                  Web          `toml:"web"`
	RateLimit            RateLimit    `toml:"rate_limit"`
	ActiveHealth         ActiveHealth `toml:"active_health"`
	IPFilter             IPFilter     `toml:"ip_filter"`
	// CompressionThreshold is the client side's compression threshold on
	// intercepted servers (offline, client_only); -1 turns compression off. When it
	// equals a backend's threshold, compressed frames pass through untouched.
	CompressionThreshold int `toml:"compression_threshold"`
	// Forwarder moves passthrough sessions' bytes: "auto" (epoll on Linux),
	// "epoll", or "goroutine" (two copying goroutines per session, splice on Linux).
	Forwarder ForwarderKind `toml:"forwarder"`
	// StallTimeout moves (or disconnects) an intercepted player whose backend sent
	// nothing at all, not even a keep-alive, for this long; 0 turns it off.
	StallTimeout Duration `toml:"stall_timeout"`
	// FallbackMaxBounces is how many fallbacks a player may make within a minute
	// before the proxy disconnects them with the last reason (two servers that
	// fall back to each other and both kick must not bounce a player forever).
	FallbackMaxBounces int `toml:"fallback_max_bounces"`
	// DuplicateLogin says what a second login of a player already online does:
	// "replace" ends the older session, as vanilla does; "refuse" turns the new
	// one away, as Velocity does.
	DuplicateLogin DuplicateLogin `toml:"duplicate_login"`
	// OfflineNames is a regular expression the names players log in with must
	// match; "" is vanilla's rule (3 to 16 of A-Z a-z 0-9 _).
	OfflineNames string     `toml:"offline_names"`
	Auth         Auth       `toml:"auth"`
	Forwarding   Forwarding `toml:"forwarding"`
	// PluginMessaging is the BungeeCord plugin channel ([plugin_messaging]).
	PluginMessaging PluginMessaging `toml:"plugin_messaging"`
	// Webhooks and Telemetry are described in events.go.
	Webhooks  []Webhook `toml:"webhooks"`
	Telemetry Telemetry `toml:"telemetry"`
	// Docker and Kubernetes discover servers beside servers_dir (discovery.go).
	Docker     Docker     `toml:"docker"`
	Kubernetes Kubernetes `toml:"kubernetes"`
	// Fleet shares operator state, players and wakes with other proxies (fleet.go).
	Fleet Fleet `toml:"fleet"`
	// Commands, Permissions and Messages are the in-game commands (commands.go).
	Commands    Commands    `toml:"commands"`
	Permissions Permissions `toml:"permissions"`
	Messages    Messages    `toml:"messages"`
	// Events holds the plugins' limits (events.go).
	Events Events `toml:"events"`
	// AuthLimbo is the password login of offline servers (authlimbo.go).
	AuthLimbo AuthLimbo `toml:"auth_limbo"`
	// Verify is the bot verification of "verify" servers (verify.go).
	Verify Verify `toml:"verify"`

	// Servers are loaded from ServersDir, sorted by id.
	Servers []*Server `toml:"-"`
	// fleetWritten is whether the file has a [fleet] table (even an empty one).
	fleetWritten bool
	// Source is the file this was read from; "" for the embedded default.
	Source string `toml:"-"`
	// ServersPath is ServersDir resolved against the config file's folder.
	ServersPath string `toml:"-"`
}

// Auth configures the Mojang authentication of client_only servers.
type Auth struct {
	// SessionServer is the base URL of the session server (hasJoined).
	SessionServer string `toml:"session_server"`
	// PreventProxyConnections sends the client's IP with hasJoined, as vanilla's
	// prevent-proxy-connections does, so Mojang refuses a login from another address.
	PreventProxyConnections bool `toml:"prevent_proxy_connections"`
	// Timeout bounds one hasJoined call.
	Timeout Duration `toml:"timeout"`
}

// Forwarding says how intercepted servers' backends (online-mode=false) learn the
// player's identity.
type Forwarding struct {
	RawMode string `toml:"mode"`
	// Mode is RawMode parsed; a server's forwarding_mode overrides it.
	Mode ForwardingMode `toml:"-"`
	// SecretFile holds the velocity / bungeeguard secret; created (0600) with a
	// random secret when missing. Relative to infrarust.toml's folder; unset, it
	// is <data_dir>/forwarding.secret (or forwarding.secret beside
	// infrarust.toml when a file is there from before, so no backend loses it).
	SecretFile string `toml:"secret_file"`
	// Secret is the secret itself, from INFRARUST_FORWARDING_SECRET[_FILE] (never
	// from the file): set, no secret file is read or created.
	Secret string `toml:"-"`
}

// DefaultSecretName is the forwarding secret's file name in <data_dir> (and,
// for configurations from before, beside infrarust.toml).
const DefaultSecretName = "forwarding.secret"

// NeedsForwardingSecret reports whether a server of c forwards with a secret
// (velocity, bungeeguard) in an intercepted mode, so the secret must be there.
func (c *Config) NeedsForwardingSecret() bool {
	for _, sc := range c.Servers {
		if sc.ProxyMode.Intercepted() && c.EffectiveForwarding(sc).NeedsSecret() {
			return true
		}
	}
	return false
}

// PluginMessaging is the BungeeCord plugin channel backends' plugins use to ask
// the proxy things (Connect, PlayerCount, ...), as the Rust Infrarust names it.
type PluginMessaging struct {
	// BungeeCord answers the channel's requests from the servers that set
	// bungeecord_channel; off, every message goes on to the client.
	BungeeCord bool `toml:"bungeecord"`
	// BungeeCordPermissions says which of those requests are carried out.
	BungeeCordPermissions ChannelPermissions `toml:"bungeecord_permissions"`
}

// Keepalive configures TCP keepalive on both sides, which is how dead peers are found
// (no per-read deadlines on the forwarding path).
type Keepalive struct {
	Time     Duration `toml:"time"`
	Interval Duration `toml:"interval"`
	Retries  int      `toml:"retries"`
}

// StatusCache bounds how often server-list pings reach a backend.
type StatusCache struct {
	TTL Duration `toml:"ttl"`
	// MaxStale is how long the last good answer may stand in when the backend errors.
	MaxStale Duration `toml:"max_stale"`
}

// MOTD is one server-list answer the proxy builds itself.
type MOTD struct {
	Text        string `toml:"text"`
	VersionName string `toml:"version_name"`
	MaxPlayers  int    `toml:"max_players"`
	Online      int    `toml:"online"`
	// Favicon is a path to a 64x64 PNG, or an inline "data:image/png;base64,..." string.
	Favicon string `toml:"favicon"`
}

// Web configures the admin HTTP API.
type Web struct {
	Enabled bool   `toml:"enabled"`
	Bind    string `toml:"bind"`
	APIKey  string `toml:"api_key"`
	DataDir string `toml:"data_dir"`
	// MetricsPublic serves /metrics without the API key (for scrapers on a private network).
	MetricsPublic     bool `toml:"metrics_public"`
	RequestsPerMinute int  `toml:"requests_per_minute"`
	// ViewerKeys read every route and change nothing (a moderator's
	// dashboard, a shared screen).
	ViewerKeys []string `toml:"viewer_keys"`
	// UI serves the dashboard at / of the admin listener.
	UI bool `toml:"ui"`
}

// RateLimit is the per-IP limiter: one bucket for logins and transfers, one for status pings.
type RateLimit struct {
	Enabled        bool     `toml:"enabled"`
	MaxConnections int      `toml:"max_connections"`
	Window         Duration `toml:"window"`
	StatusMax      int      `toml:"status_max"`
	StatusWindow   Duration `toml:"status_window"`
	IPv6Prefix     int      `toml:"ipv6_prefix"`
	MaxTracked     int      `toml:"max_tracked"`
}

// ActiveHealth configures the background prober; a server may override the whole block.
type ActiveHealth struct {
	Enabled           bool       `toml:"enabled"`
	Kind              HealthKind `toml:"kind"`
	UnhealthyInterval Duration   `toml:"unhealthy_interval"`
	ProbeHealthy      bool       `toml:"probe_healthy"`
	Interval          Duration   `toml:"interval"`
	Timeout           Duration   `toml:"timeout"`
	MaxConcurrent     int        `toml:"max_concurrent"`
}

// IPFilter holds allow and deny CIDR lists; deny wins, a non-empty allow admits only its ranges.
type IPFilter struct {
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
}

// Server is one servers/*.toml file: the domains it answers and the addresses behind it.
type Server struct {
	ID   string `toml:"-"`
	File string `toml:"-"`

	Name                string         `toml:"name"`
	Domains             []string       `toml:"domains"`
	RawAddresses        []any          `toml:"addresses"`
	Addresses           []Address      `toml:"-"`
	Balance             Strategy       `toml:"balance"`
	SlowStart           Duration       `toml:"slow_start"`
	SlowStartAggression float64        `toml:"slow_start_aggression"`
	DegradedLatency     Duration       `toml:"degraded_latency"`
	ActiveHealth        *ActiveHealth  `toml:"active_health"`
	ProxyMode           ProxyMode      `toml:"proxy_mode"`
	SendProxyProtocol   bool           `toml:"send_proxy_protocol"`
	RawDomainRewrite    any            `toml:"domain_rewrite"`
	DomainRewrite       DomainRewrite  `toml:"-"`
	MOTD                ServerMOTDs    `toml:"motd"`
	DisconnectMessage   string         `toml:"disconnect_message"`
	IPFilter            IPFilter       `toml:"ip_filter"`
	FullKickPatterns    []string       `toml:"full_kick_patterns"`
	ServerManager       *ServerManager `toml:"server_manager"`
	RawForwardingMode   string         `toml:"forwarding_mode"`
	// Network groups intercepted servers that can exchange players (switches,
	// fallback); servers with the same value (empty included) form one network.
	Network string `toml:"network"`
	// FallbackServers are tried in order when the player's backend kicks them,
	// closes or stalls and no other address of this server takes them.
	FallbackServers []string `toml:"fallback_servers"`
	// FallbackSkipKicks are kick texts (case-insensitive substrings) that end the
	// session instead of moving the player (a ban is meant to end it).
	FallbackSkipKicks []string `toml:"fallback_skip_kicks"`
	// LimboHandlers hold intercepted players in the proxy's void world instead of
	// refusing them: "wake" (the server is asleep), "queue" (every address is
	// full), "maintenance" (the server is in maintenance), "auth" (offline
	// servers: /register or /login first), "verify" (bot verification first).
	LimboHandlers []LimboHandler `toml:"limbo_handlers"`
	// BungeeCordChannel lets this server's plugins use the BungeeCord channel when
	// [plugin_messaging] bungeecord is on (intercepted servers only).
	BungeeCordChannel bool `toml:"bungeecord_channel"`
	// QueuePriority are player names or UUIDs that go to the head of the queue.
	QueuePriority []string `toml:"queue_priority"`
	// MaintenanceStaff are player names or UUIDs let through during maintenance.
	MaintenanceStaff []string `toml:"maintenance_staff"`
	// FleetPlayerCount makes the status answer count this server's players on
	// every proxy of the [fleet] instead of what the backend says (fleet.go).
	FleetPlayerCount bool `toml:"fleet_player_count"`
	// ForwardingMode is RawForwardingMode parsed; nil means the global [forwarding] mode.
	ForwardingMode *ForwardingMode `toml:"-"`
	// Discovered names the discovery source that produced this server ("docker",
	// "kubernetes"); "" for a servers_dir file. A file wins over a discovered server.
	Discovered string `toml:"-"`

	// domainLines[i] is the line Domains[i] is written on, for conflict errors.
	domainLines []int
}

// EffectiveForwarding is the forwarding mode the server's backends expect.
func (c *Config) EffectiveForwarding(s *Server) ForwardingMode {
	if s.ForwardingMode != nil {
		return *s.ForwardingMode
	}
	return c.Forwarding.Mode
}

// HasLimbo reports whether the server holds players in the limbo for h.
func (s *Server) HasLimbo(h LimboHandler) bool { return slices.Contains(s.LimboHandlers, h) }

// DuplicateLogin is the duplicate_login policy.
type DuplicateLogin string

// Duplicate login policies.
const (
	DuplicateReplace DuplicateLogin = "replace"
	DuplicateRefuse  DuplicateLogin = "refuse"
)

// VanillaNames is vanilla's rule for player names, the default of offline_names.
const VanillaNames = `^[A-Za-z0-9_]{3,16}$`

// VanillaName reports whether name follows VanillaNames. It is the check every
// login pays by default, written out: 6 ns against a regexp's 177 (docs/benchmarks.md).
func VanillaName(name string) bool {
	if len(name) < 3 || len(name) > 16 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// NameRule is the compiled offline_names; nil means vanilla's rule (VanillaName).
// Validation has checked it compiles.
func (c *Config) NameRule() *regexp.Regexp {
	if c.OfflineNames == "" {
		return nil
	}
	re, err := regexp.Compile(c.OfflineNames)
	if err != nil {
		return nil
	}
	return re
}

// Intercepted reports whether the proxy terminates the server's logins itself.
func (m ProxyMode) Intercepted() bool { return m == ModeClientOnly || m == ModeOffline }

// domainLine is the line of Domains[i] in the file, 0 when unknown (a server built in code).
func (s *Server) domainLine(i int) int {
	if i < len(s.domainLines) {
		return s.domainLines[i]
	}
	return 0
}

// Address is one replica of a server.
type Address struct {
	Address  string // normalised host:port
	Weight   int
	Priority int
}

// DomainRewrite says what hostname the backend sees in the forwarded handshake.
type DomainRewrite struct {
	Mode  RewriteMode
	Value string // the explicit hostname
}

// ServerMOTDs are the answers the proxy gives for a server in each state.
type ServerMOTDs struct {
	Online   *MOTD `toml:"online"`
	Offline  *MOTD `toml:"offline"`
	Sleeping *MOTD `toml:"sleeping"`
	Starting *MOTD `toml:"starting"`
	Crashed  *MOTD `toml:"crashed"`
	// Maintenance is shown while an operator has the server in maintenance; keys
	// left unset take the built-in maintenance answer's.
	Maintenance *MOTD `toml:"maintenance"`
	// PlayerCount is whose players the server list counts: "backend" (what the
	// backend says; the default), "server" (this server's, on every proxy of a
	// fleet), "network" (every server of its network, on every proxy), "fleet"
	// (every player of every proxy).
	PlayerCount string `toml:"player_count"`
}

// PlayerCountOf is whose players s's server list counts ([motd] player_count,
// or "server" for the older fleet_player_count).
func (s *Server) PlayerCountOf() string {
	switch {
	case s.MOTD.PlayerCount != "":
		return s.MOTD.PlayerCount
	case s.FleetPlayerCount:
		return "server"
	}
	return "backend"
}

// PlayerCounts are the values of [motd] player_count.
var PlayerCounts = []string{"backend", "server", "network", "fleet"}

// ServerManager lets the proxy start a sleeping server when a player arrives.
type ServerManager struct {
	Type            string            `toml:"type"`
	StartTimeout    Duration          `toml:"start_timeout"`
	PollInterval    Duration          `toml:"poll_interval"`
	ShutdownAfter   Duration          `toml:"shutdown_after"`
	ShutdownTimeout Duration          `toml:"shutdown_timeout"`
	Command         string            `toml:"command"`
	Args            []string          `toml:"args"`
	WorkingDir      string            `toml:"working_dir"`
	Env             map[string]string `toml:"env"`
	ReadyPattern    string            `toml:"ready_pattern"`
	// Output is where a local server's console goes: "file" (the default,
	// <data_dir>/server-logs/<id>.log), "log" (a proxy log line per line), "off".
	Output   string `toml:"output"`
	URL      string `toml:"url"`
	APIKey   string `toml:"api_key"`
	ServerID string `toml:"server_id"`
	// Container, Endpoint: type "docker"; Namespace, Workload, Replicas: type
	// "kubernetes" (manager_types.go).
	Container string `toml:"container"`
	Endpoint  string `toml:"endpoint"`
	Namespace string `toml:"namespace"`
	Workload  string `toml:"workload"`
	Replicas  int    `toml:"replicas"`
}

// WithDefaults fills the timings left unset; validation and the server manager both
// use it, so a hand-built config can never mean "time out at once" or "poll in a busy loop".
func (sm ServerManager) WithDefaults() ServerManager {
	if sm.StartTimeout <= 0 {
		sm.StartTimeout = Duration(60 * time.Second)
	}
	if sm.PollInterval <= 0 {
		sm.PollInterval = Duration(5 * time.Second)
	}
	if sm.ShutdownTimeout <= 0 {
		sm.ShutdownTimeout = Duration(30 * time.Second)
	}
	if sm.Replicas <= 0 {
		sm.Replicas = 1
	}
	if sm.Output == "" {
		sm.Output = ManagerOutputs[0]
	}
	return sm
}

// DefaultPort is Minecraft's port, used when an address leaves it out.
const DefaultPort = 25565

// DefaultFullKickPatterns match vanilla's and common plugins' "server is full" kicks.
var DefaultFullKickPatterns = []string{"The server is full", "Server is full", "server is currently full"}

// Default returns the built-in configuration used when no file exists.
func Default() *Config {
	return &Config{
		Bind:                  "0.0.0.0:25565",
		ConnectTimeout:        Duration(5 * time.Second),
		StatusTimeout:         Duration(2 * time.Second),
		ConnectMaxAttempts:    3,
		HandshakeTimeout:      Duration(10 * time.Second),
		ServersDir:            "./servers",
		UnknownDomainBehavior: "default_motd",
		ShutdownTimeout:       Duration(30 * time.Second),
		TrustedProxies:        []string{"127.0.0.0/8", "::1/128"},
		Keepalive:             Keepalive{Time: Duration(30 * time.Second), Interval: Duration(10 * time.Second), Retries: 3},
		StatusCache:           StatusCache{TTL: Duration(5 * time.Second), MaxStale: Duration(60 * time.Second)},
		DefaultMOTD: MOTD{
			Text:        "§bInfrarust§r — no server is configured for this address",
			VersionName: "Infrarust",
			MaxPlayers:  0,
		},
		Web: Web{Enabled: true, Bind: "127.0.0.1:8080", DataDir: "./data", RequestsPerMinute: 60, UI: true},
		RateLimit: RateLimit{
			MaxConnections: 3, Window: Duration(10 * time.Second),
			StatusMax: 300, StatusWindow: Duration(10 * time.Second),
			IPv6Prefix: 64, MaxTracked: 1 << 20,
		},
		CompressionThreshold: 256,
		Forwarder:            ForwarderAuto,
		StallTimeout:         Duration(30 * time.Second),
		FallbackMaxBounces:   3,
		DuplicateLogin:       DuplicateReplace,
		Auth:                 Auth{SessionServer: "https://sessionserver.mojang.com", Timeout: Duration(5 * time.Second)},
		Forwarding: Forwarding{
			RawMode: "none", Mode: ForwardingNone,
		},
		PluginMessaging: PluginMessaging{BungeeCordPermissions: DefaultChannelPermissions()},
		Fleet:           defaultFleet(),
		ActiveHealth: ActiveHealth{
			Enabled: true, Kind: HealthTCP, UnhealthyInterval: Duration(10 * time.Second),
			Interval: Duration(30 * time.Second), Timeout: Duration(3 * time.Second), MaxConcurrent: 8,
		},
		Telemetry:   defaultTelemetry(),
		Docker:      DefaultDocker(),
		Kubernetes:  DefaultKubernetes(),
		Commands:    defaultCommands(),
		Permissions: defaultPermissions(),
		Messages:    DefaultMessages(),
		Events:      Events{TransportFilterTimeout: Duration(time.Second)},
		AuthLimbo:   defaultAuthLimbo(),
		Verify:      defaultVerify(),
	}
}

// ServerDefaults fills what a server file leaves out.
func serverDefaults(s *Server) {
	s.FallbackSkipKicks = []string{"banned"}
	s.Balance = FirstAvailable
	s.SlowStartAggression = 1.0
	s.ProxyMode = ModePassthrough
	s.DisconnectMessage = "§cServer is unreachable, please try again later"
}

// ParseAddress normalises "host", "host:port" or "[v6]:port" to host:port with the default port.
func ParseAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("empty address")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		// No port: a bare hostname, IPv4, or an unbracketed IPv6 literal.
		if a, perr := netip.ParseAddr(strings.Trim(s, "[]")); perr == nil {
			return net.JoinHostPort(a.String(), strconv.Itoa(DefaultPort)), nil
		}
		if strings.ContainsAny(s, ":[] /") {
			return "", fmt.Errorf("address %q is not host:port", s)
		}
		return net.JoinHostPort(strings.ToLower(s), strconv.Itoa(DefaultPort)), nil
	}
	if host == "" {
		return "", fmt.Errorf("address %q has no host", s)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("address %q has an invalid port (1-65535)", s)
	}
	if strings.ContainsAny(host, " /") {
		return "", fmt.Errorf("address %q has an invalid host", s)
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}

// Warnings the operator should see at startup and in `config check`.
func (c *Config) Warnings() []string {
	var w []string
	if c.fleetWritten && !c.Fleet.Enabled() {
		w = append(w, "[fleet] is written but has no redis: this proxy runs alone (set redis = \"redis://host:6379/0\", or remove the table)")
	}
	for _, s := range c.Servers {
		w = append(w, s.Warnings()...)
		if !s.ProxyMode.Intercepted() && s.ForwardingMode == nil && c.Forwarding.Mode != ForwardingNone {
			w = append(w, fmt.Sprintf("%s: proxy_mode %q forwards the player's bytes as they are, so [forwarding] mode = %q does not reach this server: a backend that expects it kicks every login; set proxy_mode = \"offline\" or \"client_only\", or forwarding_mode = \"none\" for a backend without it", s.File, s.ProxyMode, c.Forwarding.RawMode))
		}
	}
	return append(w, c.crossReferences()...)
}

// crossReferences are the problems only the whole configuration shows: a
// fallback that names no server or one a player cannot be moved to, handlers
// that can never act, a manager command that is not there. They are warnings,
// not errors: a server discovered from Docker or Kubernetes is known only at
// run time, and a command may be installed before the first wake.
func (c *Config) crossReferences() []string {
	var w []string
	byID := map[string]*Server{}
	var ids []string
	for _, s := range c.Servers {
		byID[s.ID] = s
		ids = append(ids, s.ID)
	}
	for _, s := range c.Servers {
		if len(s.FallbackServers) > 0 && !s.ProxyMode.Intercepted() {
			w = append(w, fmt.Sprintf("%s: fallback_servers has no effect: a %s server's players cannot be moved (the proxy only forwards their stream); set proxy_mode = \"offline\" or \"client_only\"", s.File, s.ProxyMode))
		}
		for _, id := range s.FallbackServers {
			f := byID[id]
			switch {
			case f == nil:
				hint := ""
				if best := closestKey(id, ids); best != "" {
					hint = fmt.Sprintf("; did you mean %q?", best)
				}
				w = append(w, fmt.Sprintf("%s: fallback_servers: %q is no server of servers_dir%s (a server discovered from Docker or Kubernetes is found at run time)", s.File, id, hint))
			case !f.ProxyMode.Intercepted():
				w = append(w, fmt.Sprintf("%s: fallback_servers: %q is a %s server: players can only be moved to intercepted servers", s.File, id, f.ProxyMode))
			case f.Network != s.Network && s.ProxyMode.Intercepted():
				w = append(w, fmt.Sprintf("%s: fallback_servers: %q is on network %q and this server on %q: players are never moved across networks; set the same network", s.File, id, f.Network, s.Network))
			}
		}
		if s.HasLimbo(LimboWake) && s.ServerManager == nil {
			w = append(w, fmt.Sprintf("%s: limbo_handlers has \"wake\" but the server has no [server_manager]: nothing can wake it, so players would wait for nothing; add [server_manager] or remove \"wake\"", s.File))
		}
		if sm := s.ServerManager; sm != nil && sm.Type == "local" && sm.Command != "" {
			if err := findCommand(sm.Command, sm.WorkingDir); err != nil {
				w = append(w, fmt.Sprintf("%s: server_manager.command: %v; the first wake would fail", s.File, err))
			}
		}
	}
	return w
}

// findCommand says whether a local manager's command can be started: a name
// is looked up in PATH, a path (relative to working_dir, as the start is) must
// be an executable file.
func findCommand(command, dir string) error {
	if !strings.ContainsRune(command, filepath.Separator) && !strings.ContainsRune(command, '/') {
		if _, err := exec.LookPath(command); err != nil {
			return fmt.Errorf("%q is not in PATH", command)
		}
		return nil
	}
	path := command
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("%s does not exist", path)
	case st.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case runtime.GOOS != "windows" && st.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not executable (chmod +x)", path)
	}
	return nil
}

// Warnings of one server file.
func (s *Server) Warnings() []string {
	var w []string
	if s.Balance == FirstAvailable && len(s.Addresses) > 1 {
		weighted := false
		for _, a := range s.Addresses {
			if a.Weight != 1 {
				weighted = true
			}
		}
		if weighted {
			w = append(w, fmt.Sprintf("%s: weights are set but balance is first_available, which ignores them; set balance = \"least_conn\" or \"round_robin\"", s.File))
		}
		if s.SlowStart > 0 {
			w = append(w, fmt.Sprintf("%s: slow_start is set but balance is first_available, which has no weights to ramp", s.File))
		}
	}
	if s.ActiveHealth != nil && s.ActiveHealth.MaxConcurrent != 0 {
		w = append(w, fmt.Sprintf("%s: [active_health] max_concurrent is read from infrarust.toml only; the per-server value is ignored", s.File))
	}
	if len(s.Addresses) == 0 && s.ServerManager == nil {
		w = append(w, fmt.Sprintf("%s: no addresses; logins for %v will be refused", s.File, s.Domains))
	}
	return w
}

// EffectiveActiveHealth is the server's own block when it has one, else the global one.
func (c *Config) EffectiveActiveHealth(s *Server) ActiveHealth {
	if s.ActiveHealth != nil {
		ah := *s.ActiveHealth
		ah.MaxConcurrent = c.ActiveHealth.MaxConcurrent
		return ah
	}
	return c.ActiveHealth
}
