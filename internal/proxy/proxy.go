// Package proxy is the data plane: the listener, the per-connection pipeline,
// the router, the status and login handlers and the forwarder.
package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"regexp"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/accounts"
	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/command"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/ipfilter"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/passes"
	"github.com/infrarust-go/infrarust/internal/proxy/ratelimit"
	"github.com/infrarust-go/infrarust/internal/session"
	"github.com/infrarust-go/infrarust/internal/telemetry"
)

// Options are what the proxy needs from the outside world.
type Options struct {
	Config  *config.Config
	Logger  *slog.Logger
	Bus     *events.Bus
	Metrics *metrics.Metrics
	Bans    *bans.Store
	// Manager wakes sleeping servers; nil means no server is managed.
	Manager Manager
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Version is shown in the admin API.
	Version string
	// ProxyHeaderTimeout bounds the wait for a PROXY header; 0 means 5 s.
	ProxyHeaderTimeout time.Duration
	// Dialer opens backend connections; nil means a net.Dialer.
	Dialer Dialer
	// Hooks fires the player events (compiled-in handlers, webhooks); nil fires none.
	Hooks *hooks.Dispatcher
	// Tracer traces sessions ([telemetry]); nil traces nothing.
	Tracer *telemetry.Tracer
	// Fleet counts the players other proxies of a [fleet] have on a server, for
	// fleet_player_count; nil means this proxy is on its own.
	Fleet FleetCounter
	// Sessions tells the other proxies of a [fleet] which players this one let
	// in (one player, one session fleet-wide); nil means this proxy is on its own.
	Sessions FleetSessions
	// Reload reloads the configuration (/infrarust reload); nil means the game cannot.
	Reload func() error
	// Directory finds players on the other proxies of a [fleet] and passes them
	// commands (/find, /glist, /send, /kick); nil means this proxy is on its own.
	Directory FleetDirectory
	// OpenAccounts opens the account store of the auth limbo, once, when a
	// configuration first has a server with "auth" (bbolt in the data dir, or
	// the fleet's Redis); nil makes such a configuration an error.
	OpenAccounts func() (accounts.Store, error)
	// OpenPasses opens where bot verification's passes are kept (bbolt in the
	// data dir, or the fleet's Redis), once, when a configuration first has a
	// server with "verify"; nil (or a store that fails to open) keeps them in
	// memory only.
	OpenPasses func() (passes.Store, error)
}

// FleetDirectory is what in-game commands ask the fleet: off the login path.
type FleetDirectory interface {
	// RemotePlayers lists the other proxies' players (reads Redis).
	RemotePlayers(ctx context.Context) ([]RemotePlayer, error)
	// Command asks proxy to send (arg: server) or kick (arg: reason) one of its
	// players; it never waits.
	Command(proxy, action, player, arg string)
}

// RemotePlayer is a player on another proxy of the fleet.
type RemotePlayer struct{ Name, Server, Proxy string }

// FleetSessions is how a login announces its player to the fleet: it never waits.
type FleetSessions interface {
	// Claimed announces identity, logged in at at with proof strength
	// (proof.go), so the other proxies end a weaker or older session of it.
	Claimed(identity string, at time.Time, strength int)
	// Claim makes the claim fleet-wide before the player is let in, for
	// duplicate_login "refuse": holder names the live proxy holding a session
	// of identity that proved at least strength. An error: the fleet cannot
	// tell (Redis unreachable), and the local rule stands alone. It waits at
	// most [fleet] timeout.
	Claim(ctx context.Context, identity string, at time.Time, strength int) (holder string, err error)
	// Released gives up a fleet-wide claim; it never waits.
	Released(identity string)
}

// FleetCounter is what the status path asks the fleet: memory reads only.
type FleetCounter interface {
	// RemoteOnline is the players on server through the other live proxies.
	RemoteOnline(server string) int
}

// Manager is the server manager as the proxy sees it: a login for a managed server
// waits in EnsureStarted; a status ping only reads its state.
type Manager interface {
	// Managed reports whether the server has a [server_manager].
	Managed(server string) bool
	// State is online, offline, sleeping, starting, stopping or crashed.
	State(server string) manager.State
	// EnsureStarted starts the server if needed and waits until it is ready.
	EnsureStarted(ctx context.Context, server string) error
	// PlayerJoined and PlayerLeft drive the idle shutdown.
	PlayerJoined(server string)
	PlayerLeft(server string)
}

// Proxy is one running Infrarust data plane: the parts of parts.go over one
// core, and the API the app, the admin routes and the CLI call.
type Proxy struct {
	*core
	door    *door
	status  *statusHandler
	moves   *moves
	limbos  *limbos
	checks  *checks
	cmds    *commander
	players *players

	reload  sync.Mutex // serialises reloads
	sockets sockets    // how players' and backends' sockets are held (raw_linux.go)

	ln   net.Listener
	lnMu sync.Mutex

	startedAt time.Time
}

// state is everything a reload replaces at once; connections read one snapshot.
type state struct {
	cfg     *config.Config
	router  *router
	servers map[string]*server
	filter  *ipfilter.Filter
	trusted []netip.Prefix
	names   *regexp.Regexp // offline_names, compiled; nil: vanilla's rule
	// commands are the in-game commands of this configuration; nil when off.
	commands *command.Set
	// auth is the password login of the auth limbo; nil when no server uses it.
	auth *accounts.Service
	// premium says which names belong to paid accounts ([auth_limbo.premium]); nil when off.
	premium *auth.PremiumLookup
	// policy is what the intercepted sessions that start under this
	// configuration are run by.
	policy *session.Policy
}

// New builds a proxy from a loaded configuration.
func New(opts Options) (*Proxy, error) {
	if opts.Config == nil {
		return nil, errors.New("proxy: no configuration")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := assemble(&core{
		opts:  opts,
		log:   opts.Logger,
		now:   opts.Now,
		bus:   opts.Bus,
		met:   opts.Metrics,
		conns: map[net.Conn]struct{}{},
	})
	p.checks.cracked.max, p.checks.verify.passed.max = crackedRetriesMax, verifiedMax
	p.startedAt = p.now()
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.door.proxyHeaderTimeout = opts.ProxyHeaderTimeout
	if p.door.proxyHeaderTimeout <= 0 {
		p.door.proxyHeaderTimeout = defaultProxyHeaderTimeout
	}
	p.door.perIP.m = map[netip.Addr]int{}
	if n := opts.Config.MaxConnections; n > 0 {
		p.door.sem = make(chan struct{}, n)
	}
	p.limiter = ratelimit.New(rateLimitConfig(opts.Config.RateLimit))
	var err error
	if p.fwd, err = forward.New(opts.Config.Forwarder); err != nil {
		return nil, fmt.Errorf("forwarder: %w", err)
	}
	if p.sockets, err = newSockets(p.fwd); err != nil {
		_ = p.fwd.Close()
		return nil, fmt.Errorf("raw sockets: %w", err)
	}
	if p.icpt, err = newInterception(opts.Config, p.sockets.sessionDial()); err != nil {
		_ = p.fwd.Close()
		p.sockets.close()
		return nil, err
	}
	p.dialer = opts.Dialer
	if p.dialer == nil {
		p.dialer = p.sockets.dialer()
	}
	if err := p.Apply(opts.Config); err != nil {
		_ = p.fwd.Close()
		p.closeSockets()
		return nil, err
	}
	return p, nil
}

// closeSockets stops the raw sockets' Poller and closes the session server's
// connections kept through it.
func (p *Proxy) closeSockets() {
	p.icpt.sessions.Close()
	p.sockets.close()
}

func rateLimitConfig(rl config.RateLimit) ratelimit.Config {
	return ratelimit.Config{
		LoginMax: rl.MaxConnections, LoginWindow: rl.Window.D(),
		StatusMax: rl.StatusMax, StatusWindow: rl.StatusWindow.D(),
		IPv6Prefix: rl.IPv6Prefix, MaxTracked: rl.MaxTracked,
	}
}

// Serve accepts connections on ln until ctx ends or Shutdown is called.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	ln = p.sockets.listener(ln, p.log)
	p.lnMu.Lock()
	p.ln = ln
	p.lnMu.Unlock()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	if st := p.state.Load(); st != nil {
		p.log.Info("listening", "bind", ln.Addr().String(), "servers", len(st.servers))
	}
	var backoff time.Duration
	for {
		if p.door.sem != nil {
			select {
			case p.door.sem <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
		}
		c, err := ln.Accept()
		if err != nil {
			p.door.releasePermit()
			if ctx.Err() != nil || p.isClosing() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Out of file descriptors and similar: back off instead of spinning.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			p.log.Warn("accept failed; backing off", "err", err, "backoff", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		p.door.accepted.Add(1)
		p.met.ConnAccepted()
		if !p.trackClient(c) {
			c.Close()
			p.door.releasePermit()
			return nil
		}
		go p.door.handle(c)
	}
}

// Shutdown stops accepting, lets live sessions run until ctx ends (shutdown_timeout),
// then closes whatever is left and waits for every goroutine.
func (p *Proxy) Shutdown(ctx context.Context) error {
	p.connMu.Lock()
	p.closing = true
	p.connMu.Unlock()
	p.cancel()
	p.lnMu.Lock()
	if p.ln != nil {
		p.ln.Close()
	}
	p.lnMu.Unlock()

	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		defer p.closeSockets()
		return p.fwd.Close()
	case <-ctx.Done():
	}
	p.sayGoodbye(done)
	p.connMu.Lock()
	n := len(p.conns)
	for c := range p.conns {
		c.Close()
	}
	p.connMu.Unlock()
	_ = p.fwd.Close() // ends the sessions it moves, whose sockets it owns
	<-done
	p.closeSockets()
	if n > 0 {
		return fmt.Errorf("shutdown timeout: closed %d connections", n)
	}
	return nil
}

// goodbyeWait bounds how long the end of a shutdown waits for the intercepted
// players' Disconnects to be written before every socket is closed.
const goodbyeWait = 2 * time.Second

// sayGoodbye disconnects every intercepted player still on with [messages]
// shutdown, all at once, and waits (at most goodbyeWait, or until done) for
// the sessions to end: a player reads why instead of "Connection lost".
func (p *Proxy) sayGoodbye(done <-chan struct{}) {
	text := p.msgs().Shutdown
	var kicked sync.WaitGroup
	n := 0
	for _, pl := range p.roster.all() {
		if pl.sess == nil {
			continue // passthrough: nothing can be written into the stream
		}
		n++
		kicked.Add(1)
		go func() {
			defer kicked.Done()
			pl.sess.Kick(text)
		}()
	}
	if n == 0 {
		return
	}
	written := make(chan struct{})
	go func() { kicked.Wait(); close(written) }()
	timer := time.NewTimer(goodbyeWait)
	defer timer.Stop()
	select {
	case <-written:
	case <-timer.C:
		return
	}
	select { // the sessions end once their clients read the Disconnect
	case <-done:
	case <-timer.C:
	}
}

// ipCounter caps concurrent connections per client IP.
type ipCounter struct {
	mu sync.Mutex
	m  map[netip.Addr]int
}

func (c *ipCounter) acquire(ip netip.Addr, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[ip] >= max {
		return false
	}
	c.m[ip]++
	return true
}

func (c *ipCounter) release(ip netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[ip] <= 1 {
		delete(c.m, ip)
		return
	}
	c.m[ip]--
}

// bufio readers are pooled (a status storm would otherwise allocate one per
// connection), in the pool the sessions' mc.Conns lend their buffers from.
func getReader(c net.Conn) *bufio.Reader { return mc.GetReader(c) }

func putReader(br *bufio.Reader) { mc.PutReader(br) }

// frameAny, lendAny and parksAny are frameConn, lendBuffers and parks for any
// connection, through the interfaces it implements (raw_linux.go has a faster
// path for raw sockets).
func frameAny(br *bufio.Reader, nc net.Conn, z *mc.Zlib) *mc.Conn { return mc.NewConn(br, nc, z) }

func lendAny(c *mc.Conn, nc net.Conn) {
	if w, ok := nc.(mc.Waiter); ok {
		c.LendBuffers(w)
	}
}

func parksAny(nc net.Conn) bool {
	_, ok := nc.(session.Parker)
	return ok
}
