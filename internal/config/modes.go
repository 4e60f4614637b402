package config

// ProxyMode is a server's proxy_mode: how the proxy handles its logins. The proxy
// dispatches on it; nothing compares the strings.
type ProxyMode string

// Proxy modes, named as in the Rust Infrarust.
const (
	// ModePassthrough forwards the client's bytes untouched after routing.
	ModePassthrough ProxyMode = "passthrough"
	// ModeZeroCopy is passthrough; the Rust Infrarust's name for its splice forwarder (ours always splices on Linux).
	ModeZeroCopy ProxyMode = "zero_copy"
	// ModeServerOnly is passthrough too: the backend authenticates, as in the Rust Infrarust.
	ModeServerOnly ProxyMode = "server_only"
	// ModeClientOnly terminates the login on the proxy and authenticates players with Mojang.
	ModeClientOnly ProxyMode = "client_only"
	// ModeOffline terminates the login on the proxy without authentication.
	ModeOffline ProxyMode = "offline"
)

// RewriteMode is how domain_rewrite changes the hostname a backend sees.
type RewriteMode string

// Domain rewrite modes, as in the Rust Infrarust.
const (
	// RewriteNone forwards the hostname the player typed (the zero value means the same).
	RewriteNone RewriteMode = "none"
	// RewriteFromBackend uses the host and port of the server's first address.
	RewriteFromBackend RewriteMode = "from_backend"
	// RewriteExplicit uses a fixed hostname: domain_rewrite = { explicit = "host" }.
	RewriteExplicit RewriteMode = "explicit"
)

// Rewrites reports whether the backend sees another hostname than the player typed.
func (d DomainRewrite) Rewrites() bool {
	return d.Mode == RewriteFromBackend || d.Mode == RewriteExplicit
}

// supportedModes are the modes this build serves, in the order error messages list them.
var supportedModes = []ProxyMode{ModePassthrough, ModeZeroCopy, ModeServerOnly, ModeClientOnly, ModeOffline}

func modeList(ms []ProxyMode) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ", "
		}
		s += string(m)
	}
	return s
}

// LimboHandler is one of a server's limbo_handlers.
type LimboHandler string

// The built-in limbo handlers, named as in the Rust Infrarust's limbo_handlers.
const (
	// LimboWake holds players while a sleeping managed server starts.
	LimboWake LimboHandler = "wake"
	// LimboQueue holds players in order while every address is full.
	LimboQueue LimboHandler = "queue"
	// LimboMaintenance holds players (staff excepted) while the server is in maintenance.
	LimboMaintenance LimboHandler = "maintenance"
	// LimboAuth holds players of an offline server until they /register or
	// /login ([auth_limbo]).
	LimboAuth LimboHandler = "auth"
	// LimboVerify makes first-time players prove they run a real client
	// (they fall onto a platform under vanilla physics) before anything else ([verify]).
	LimboVerify LimboHandler = "verify"
)

var limboHandlers = []LimboHandler{LimboWake, LimboQueue, LimboMaintenance, LimboAuth, LimboVerify}
