package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/accounts"
	"github.com/infrarust-go/infrarust/internal/logtap"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/perms"
)

// Default intervals of the event stream; ServerOptions overrides them in tests.
const (
	DefaultKeepAlive     = 15 * time.Second
	DefaultStatsInterval = 5 * time.Second
	// DefaultSubscriberBuffer is how many events a slow SSE client may fall behind
	// before it is sent a lagged event instead of slowing the proxy.
	DefaultSubscriberBuffer = 256
)

// Route patterns, shared by the server's mux and its auth decisions.
const (
	routeHealth   = "GET /api/v1/health"
	routeEvents   = "GET /api/v1/events"
	routeLogs     = "GET /api/v1/logs"
	routeSignIn   = "POST /api/v1/session"
	routeMetrics  = "GET /metrics"
	maxBodyBytes  = 64 << 10
	bearerPrefix  = "Bearer "
	apiKeyEnvName = "INFRARUST_API_KEY"
	// noRoutePrefix starts the 404 of a path the API does not have, so the client
	// can tell "this proxy is older than me" from "no such player".
	noRoutePrefix = "no admin API route "
)

// ServerOptions is everything the admin API needs from serve.
type ServerOptions struct {
	// Web is the [web] section: bind (for loopback checks), key, data dir, limits.
	Web config.Web
	// APIKey is the key from ResolveAPIKey; when empty NewServer resolves it itself
	// from Web and INFRARUST_API_KEY (generating <data_dir>/admin.key if needed).
	APIKey string
	// Runtime is the running proxy; required.
	Runtime Runtime
	// Bus feeds the SSE stream and receives stats.tick and ban events; nil disables /events.
	Bus *events.Bus
	// Logs is what the proxy logs (the log routes); nil makes them answer 503.
	Logs *logtap.Tap
	// ServerFiles writes servers_dir (create, edit, delete a server); nil
	// makes those routes answer 503.
	ServerFiles ServerFiles
	// Bans is the ban store; nil makes the ban routes answer 503 with the reason.
	Bans *bans.Store
	// Metrics serves GET /metrics; nil leaves the route out.
	Metrics http.Handler
	// Drains persists drain intent before it is applied; nil applies drains without
	// persisting them (only for tests and the demo).
	Drains *DrainStore
	// Maintenance persists maintenance before it is applied; nil applies it only.
	Maintenance *MaintenanceStore
	// Reload reloads infrarust.toml and servers_dir (POST /api/v1/reload);
	// nil makes it answer 503.
	Reload func(reason string) (ReloadResult, error)
	// Fingerprint is the running configuration's keys with a digest of each
	// value (GET /api/v1/config/fingerprint); nil makes it answer 503.
	Fingerprint func() map[string]string
	// Permissions keeps the roles changed at run time (the app applies a
	// change to the proxy as it stores it); nil makes those routes answer 503.
	Permissions perms.Store
	// Accounts is the auth limbo's password login (the accounts routes); nil,
	// or nil returned, makes them answer 503.
	Accounts func() *accounts.Service
	// Config is the running configuration ([permissions] admins); nil leaves it out.
	Config func() *config.Config
	// ForgetVerified drops bot verification's passes of a name or an address
	// (DELETE /api/v1/verify/passes/{who}); nil makes it answer 503.
	ForgetVerified func(ctx context.Context, nameOrIP string) (int, error)
	// Ready reports why the proxy does not take players yet (starting, shutting
	// down) for GET /api/v1/ready; nil means ready whenever the API answers.
	Ready func() error
	// Fleet shares drains, resets and bans with the other proxies of a [fleet]
	// and serves the fleet routes (fleet.go); nil when the proxy is on its own.
	Fleet Fleet
	// Logger receives the audit lines; nil discards them.
	Logger *slog.Logger
	// Now is the clock (rate limiter, ban expiry, runtime calls); nil means time.Now.
	Now func() time.Time
	// KeepAlive is the SSE keep-alive comment interval; zero means DefaultKeepAlive.
	KeepAlive time.Duration
	// StatsInterval is how often Serve publishes stats.tick; zero means DefaultStatsInterval.
	StatsInterval time.Duration
}

// Server is the admin HTTP API; it is an http.Handler so tests can mount it on httptest.
type Server struct {
	opts    ServerOptions
	keyHash [32]byte
	// viewerHashes are [web] viewer_keys': they read and change nothing.
	viewerHashes [][32]byte
	sessions     sessions // browsers signed in (session.go)
	keyFile      string
	limits       *clientLimits
	mux          *http.ServeMux
	log          *slog.Logger
	now          func() time.Time
	openMeta     bool
	// actionMu serialises drain/enable so the file and the runtime apply concurrent
	// requests for one address in the same order.
	actionMu sync.Mutex
	// recent keeps the last events while Serve runs.
	recent atomic.Pointer[events.Recent]
}

// NewServer checks the options, resolves the API key and builds the routes.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Runtime == nil {
		return nil, errors.New("admin: ServerOptions.Runtime is required")
	}
	s := &Server{opts: opts, log: opts.Logger, now: opts.Now, openMeta: opts.Web.MetricsPublic}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.opts.KeepAlive <= 0 {
		s.opts.KeepAlive = DefaultKeepAlive
	}
	if s.opts.StatsInterval <= 0 {
		s.opts.StatsInterval = DefaultStatsInterval
	}
	key := strings.TrimSpace(opts.APIKey)
	if key == "" {
		k, path, err := ResolveAPIKey(opts.Web, os.Getenv(apiKeyEnvName))
		if err != nil {
			return nil, err
		}
		key, s.keyFile = k, path
	}
	if len(key) < MinAPIKeyLen {
		return nil, fmt.Errorf("admin API key is %d characters; use at least %d", len(key), MinAPIKeyLen)
	}
	s.keyHash = sha256.Sum256([]byte(key))
	for _, v := range opts.Web.ViewerKeys {
		if v = strings.TrimSpace(v); len(v) < MinAPIKeyLen || v == key {
			return nil, fmt.Errorf("a [web] viewer_keys entry is shorter than %d characters or is the API key", MinAPIKeyLen)
		}
		s.viewerHashes = append(s.viewerHashes, sha256.Sum256([]byte(v)))
	}
	s.limits = newClientLimits(opts.Web.RequestsPerMinute)
	s.routes()
	return s, nil
}

// KeyFile is the generated key file NewServer used, or "" when the key came from
// config or the environment; serve logs it so the operator knows where it is.
func (s *Server) KeyFile() string { return s.keyFile }

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc(routeHealth, s.handleHealth)
	m.HandleFunc(routeReady, s.handleReady)
	m.HandleFunc(routeSignIn, s.handleSignIn) // session.go
	m.HandleFunc("GET /api/v1/session", s.handleSession)
	m.HandleFunc("DELETE /api/v1/session", s.handleSignOut)
	m.HandleFunc("GET /api/v1/servers", s.handleServers)
	m.HandleFunc("GET /api/v1/servers/{id}/backends", s.handleBackends)
	m.HandleFunc("GET /api/v1/health/backends", s.handleAllBackends)
	for _, a := range Actions() {
		m.HandleFunc("POST /api/v1/servers/{id}/backends/{address}/"+string(a), s.handleAction(a))
	}
	m.HandleFunc("GET /api/v1/servers/{id}", s.handleServer)
	m.HandleFunc("POST /api/v1/servers", s.handleCreateServer) // serverfiles.go
	m.HandleFunc("PUT /api/v1/servers/{id}", s.handleEditServer)
	m.HandleFunc("DELETE /api/v1/servers/{id}", s.handleDeleteServer)
	m.HandleFunc("POST /api/v1/servers/{id}/start", s.handleServerPower(powerStart))
	m.HandleFunc("POST /api/v1/servers/{id}/maintenance", s.handleMaintenance)
	m.HandleFunc("POST /api/v1/servers/{id}/stop", s.handleServerPower(powerStop))
	m.HandleFunc("GET /api/v1/players", s.handlePlayers)
	m.HandleFunc("POST /api/v1/players/{name}/send", s.handleSendPlayer)
	m.HandleFunc("POST /api/v1/players/{name}/kick", s.handleKickPlayer)
	m.HandleFunc("GET /api/v1/players/count", s.handlePlayerCount) // messages.go
	m.HandleFunc("GET /api/v1/players/{name}", s.handlePlayer)
	m.HandleFunc("POST /api/v1/players/{name}/message", s.handleMessagePlayer)
	m.HandleFunc("POST /api/v1/players/broadcast", s.handleBroadcast)
	m.HandleFunc("GET /api/v1/proxy", s.handleProxy)
	m.HandleFunc(routeLogs, s.handleLogs) // logs.go
	m.HandleFunc("GET /api/v1/logs/history", s.handleLogHistory)
	m.HandleFunc("GET /api/v1/stats", s.handleStats)
	m.HandleFunc("GET /api/v1/snapshot", s.handleSnapshot)
	m.HandleFunc(routeEvents, s.handleEvents)
	m.HandleFunc("GET /api/v1/events/recent", s.handleRecentEvents)
	m.HandleFunc("GET /api/v1/bans", s.handleListBans)
	m.HandleFunc("POST /api/v1/bans", s.handleAddBan)
	m.HandleFunc("DELETE /api/v1/bans/{type}/{value}", s.handleRemoveBan)
	m.HandleFunc("GET /api/v1/fleet", s.handleFleet)    // fleet.go
	m.HandleFunc("POST /api/v1/reload", s.handleReload) // reload.go
	m.HandleFunc("POST /api/v1/config/reload", s.handleReload)
	m.HandleFunc("GET /api/v1/config/fingerprint", s.handleFingerprint)
	m.HandleFunc("GET /api/v1/permissions", s.handlePermissions) // permissions.go
	m.HandleFunc("PUT /api/v1/permissions/groups/{group}", s.handleGroupChange(perms.OpCreate))
	m.HandleFunc("DELETE /api/v1/permissions/groups/{group}", s.handleGroupChange(perms.OpDelete))
	m.HandleFunc("POST /api/v1/permissions/groups/{group}/permissions", s.handleGroupChange(perms.OpGrant))
	m.HandleFunc("DELETE /api/v1/permissions/groups/{group}/permissions/{permission}", s.handleGroupChange(perms.OpRevoke))
	m.HandleFunc("POST /api/v1/permissions/groups/{group}/members", s.handleGroupChange(perms.OpAdd))
	m.HandleFunc("DELETE /api/v1/permissions/groups/{group}/members/{player}", s.handleGroupChange(perms.OpRemove))
	m.HandleFunc("GET /api/v1/permissions/admins", s.handleAdmins)
	m.HandleFunc("POST /api/v1/permissions/admins", s.handleOp)
	m.HandleFunc("DELETE /api/v1/permissions/admins/{player}", s.handleDeop)
	m.HandleFunc("GET /api/v1/auth/accounts", s.handleAccounts) // accounts.go
	m.HandleFunc("GET /api/v1/auth/accounts/{name}", s.handleAccount)
	m.HandleFunc("POST /api/v1/auth/accounts/{name}/password", s.handleResetPassword)
	m.HandleFunc("DELETE /api/v1/auth/accounts/{name}", s.handleUnregister)
	m.HandleFunc("DELETE /api/v1/verify/passes/{who}", s.handleForgetVerified) // verify.go
	if s.opts.Metrics != nil {
		m.Handle(routeMetrics, s.opts.Metrics)
	}
	s.uiRoutes(m) // dashboard.go
	s.mux = m
}

// ServeHTTP authenticates, rate-limits, then routes. Health and readiness are answered before
// anything else (it needs no key and spends no quota). A client without the right
// key that has used up its failed-attempt budget gets 429 whatever it sends next,
// so guessing learns nothing; a client with the right key is never refused for
// the failures before it and spends only the generous request budget.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every body is bounded, whatever route reads it: a route added later
	// cannot forget it (a 200 MB body cost 1.67 GB of memory once).
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	_, pattern := s.mux.Handler(r)
	if pattern == routeHealth || pattern == routeReady || pattern == routeUIPage || pattern == routeUIAssets {
		s.mux.ServeHTTP(w, r)
		return
	}
	if pattern == routeSignIn { // its own guess budget check; it needs no key yet
		s.mux.ServeHTTP(w, r)
		return
	}
	ip, now := clientIP(r), s.now()
	key := limiterKey(ip)
	open := pattern == routeMetrics && s.openMeta
	rl, sess := s.access(r, pattern == routeEvents || pattern == routeLogs)
	if !open && rl == roleNone {
		// Only a failed attempt meets the guess budget: the right key is never
		// refused for the wrong ones that came before it from the same address
		// (the operator's CLI and `top` share the guesser's IP behind a NAT).
		if locked, wait := s.limits.lockedOut(key, now); locked {
			writeRateLimited(w, wait, fmt.Sprintf("too many wrong or missing API keys from %s", ip),
				"check the key the client sends: [web] api_key, INFRARUST_API_KEY or <data_dir>/admin.key")
			return
		}
		s.limits.failed(key, now)
		w.Header().Set("WWW-Authenticate", `Bearer realm="infrarust"`)
		writeError(w, http.StatusUnauthorized, "UNAUTHORIZED",
			"missing or wrong API key: send `Authorization: Bearer <key>` with [web] api_key, INFRARUST_API_KEY or the key in <data_dir>/admin.key")
		return
	}
	if ok, wait := s.limits.allow(key, now); !ok {
		writeRateLimited(w, wait, fmt.Sprintf("too many admin API requests from %s", ip),
			"raise [web] requests_per_minute (0 turns the limit off) if this client is legitimate")
		return
	}
	if !open && !reads(r) {
		if rl == roleViewer {
			writeError(w, http.StatusForbidden, "FORBIDDEN", "a viewer key ([web] viewer_keys) reads and changes nothing; changes need the API key")
			return
		}
		if sess != nil {
			got := r.Header.Get(csrfHeader)
			if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) != 1 {
				writeError(w, http.StatusForbidden, "FORBIDDEN", "a change made with the session cookie needs its CSRF token in "+csrfHeader+" (GET /api/v1/session gives it)")
				return
			}
		}
	}
	if pattern == "" {
		s.noRoute(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// writeRateLimited answers 429 with Retry-After in whole seconds (at least 1), the
// header every client of this API (the CLI, `top`) waits on.
func writeRateLimited(w http.ResponseWriter, wait time.Duration, what, hint string) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, "RATE_LIMITED", fmt.Sprintf("%s; retry in %d s (%s)", what, secs, hint))
}

// noRoute answers 404 or 405 in the JSON envelope instead of ServeMux's plain text.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	probe := &statusProbe{header: http.Header{}}
	h, _ := s.mux.Handler(r)
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		if allow := probe.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			fmt.Sprintf("%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, probe.header.Get("Allow")))
		return
	}
	writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("%s%s %s; see docs/admin-api.md", noRoutePrefix, r.Method, r.URL.Path))
}

// statusProbe records what ServeMux's fallback handler would answer.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(code int)        { p.status = code }

// Serve answers on ln and publishes stats.tick until ctx ends, then shuts down:
// open event streams are closed and in-flight requests get up to 5 s to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	// Connections that never sent a request would hold Shutdown for 5 s (net/http
	// treats StateNew as busy that long); they are closed when shutdown starts.
	var fresh sync.Map
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			fresh.Store(c, struct{}{})
		} else {
			fresh.Delete(c)
		}
	}
	tickCtx, stopTicks := context.WithCancel(ctx)
	tickDone := make(chan struct{}, 2)
	go func() {
		defer func() { tickDone <- struct{}{} }()
		s.publishStats(tickCtx)
	}()
	if s.opts.Bus != nil {
		// The recent events are kept while the API serves (GET /api/v1/events/recent).
		r := events.NewRecent(s.opts.Bus, 0)
		s.recent.Store(r)
		go func() {
			defer func() { tickDone <- struct{}{} }()
			r.Run(tickCtx)
		}()
	} else {
		tickDone <- struct{}{}
	}
	defer func() {
		stopTicks()
		<-tickDone
		<-tickDone
	}()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("admin API on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fresh.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
	if err := srv.Shutdown(shutCtx); err != nil {
		_ = srv.Close()
	}
	<-errc
	return nil
}

// publishStats sends the runtime's Stats as stats.tick on every interval.
func (s *Server) publishStats(ctx context.Context) {
	if s.opts.Bus == nil {
		return
	}
	t := time.NewTicker(s.opts.StatsInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.opts.Bus.Publish(events.StatsTick, s.opts.Runtime.Stats(s.now()))
		}
	}
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeData(w, http.StatusOK, map[string]string{"status": "ok"})
}

// limiterKey is what the admin limiter counts a client as: its IPv4 address, or
// its IPv6 /64 (one subscriber usually holds a whole /64 and could otherwise
// rotate addresses for fresh budgets), as the players' rate limit does.
func limiterKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Unmap().Is4() {
		return ip
	}
	p, err := a.Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}

// clientIP is the TCP peer's address; forwarded headers are ignored because anyone
// can set them and the limiter must not be bypassable.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func writeData(w http.ResponseWriter, status int, v any) {
	writeJSON(w, status, Envelope[any]{Data: v})
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorEnvelope{Error: ErrorBody{Code: code, Message: msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
