package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// Dialer opens connections to backends; Options.Dialer lets tests (and embedders)
// substitute it. *net.Dialer satisfies it.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// defaultDialer leaves keepalive to setKeepalive. Go already turns TCP_NODELAY on
// for every TCP connection, which Minecraft's many small packets need.
func defaultDialer() Dialer { return &net.Dialer{KeepAlive: -1} }

// deadlineDialer is a Dialer bounded by a time rather than a context's timer
// (raw_linux.go's): the usual dial, connected when connect returns, arms no timer.
type deadlineDialer interface {
	DialDeadline(ctx context.Context, network, address string, deadline time.Time) (net.Conn, error)
}

// dial opens a connection to one backend address within timeout, under the proxy's
// context so shutdown ends a dial at once.
func (p *core) dial(addr string, timeout time.Duration) (net.Conn, error) {
	if d, ok := p.dialer.(deadlineDialer); ok {
		return d.DialDeadline(p.ctx, "tcp", addr, time.Now().Add(timeout))
	}
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	return p.dialer.DialContext(ctx, "tcp", addr)
}

// preamble is what the proxy writes to a backend before anything else: the PROXY v2
// header naming the real client when the server asks for it, nothing otherwise.
// Logins, status relays and probes all start with it, so a backend that requires
// the header sees it from every kind of connection.
func preamble(srv *server, client netip.AddrPort, backend net.Conn) []byte {
	if !srv.cfg.SendProxyProtocol {
		return nil
	}
	return proxyHeader(client, backend)
}

// backendLogin sends a player's login on a freshly dialled backend and reads far
// enough to know whether the backend took it, all before deadline. full is the kick
// text of a backend with no room (the next address is tried with no health effect);
// an error is a health failure of the address.
type backendLogin func(backend net.Conn, deadline time.Time) (full string, err error)

// fullError means every address that answered was full; kick is the last kick text.
type fullError struct{ kick string }

func (e *fullError) Error() string { return "every address is full: " + e.kick }

// errNoBackend means no address could be reached (or none could be picked).
var errNoBackend = errors.New("no backend answered")

// connectBackend tries the server's addresses in the balancer's order, at most
// connect_max_attempts of them, each within connect_timeout (dial and login
// answer together: a frozen replica costs no more than a dead one). On success
// the lease in cn.lease is connected and the backend is tracked for shutdown.
func (p *moves) connectBackend(cn *conn, login backendLogin) (net.Conn, error) {
	return p.connectTo(cn, cn.srv, &cn.lease, nil, login)
}

// connectTo is connectBackend for any server of the configuration and a lease of
// the caller's (a switch has its own), never trying the addresses in avoid.
func (p *moves) connectTo(cn *conn, srv *server, lease *balance.Lease, avoid []string, login backendLogin) (net.Conn, error) {
	cfg := cn.st.cfg
	maxAttempts := cfg.ConnectMaxAttempts
	if maxAttempts == 0 {
		maxAttempts = len(srv.cfg.Addresses)
	}
	var triedHere [4]string // a login tries one address or a few: no allocation for the list
	tried := append(triedHere[:0], avoid...)
	// What each address did, for the debug log only: a login builds no strings
	// nobody reads.
	var outcomes []string
	debug := p.log.Enabled(context.Background(), slog.LevelDebug)
	note := func(addr, what string) {
		if debug {
			outcomes = append(outcomes, addr+": "+what)
		}
	}
	var lastFull, lastFailure string
	if debug {
		defer func() {
			if len(outcomes) == 0 {
				outcomes = append(outcomes, "no address to try")
			}
			p.log.Debug("login routing", "server", srv.id, "player", cn.player, "client", cn.client, "attempts", len(outcomes), "outcomes", strings.Join(outcomes, "; "))
		}()
	}
	for len(tried)-len(avoid) < maxAttempts {
		if !srv.pool.AcquireInto(lease, p.now(), tried) {
			break
		}
		addr := lease.Address()
		tried = append(tried, addr)
		if cn.legacy == legacyLogin && srv.pool.NeedsProtocolProof(addr) {
			// A legacy login reads no answer, so it cannot be the Minecraft-level
			// proof a frozen address owes before it is trusted again.
			lease.Skipped(p.now())
			note(addr, "owes a Minecraft answer, not tried by a legacy login")
			continue
		}
		backend, dialTime, full, err := p.attempt(cn, srv, addr, login)
		switch {
		case errors.Is(err, errShuttingDown):
			lease.Skipped(p.now())
			return nil, err
		case errors.Is(err, errNoLoginAnswer):
			lease.Unresponsive(p.now(), err.Error())
			note(addr, err.Error())
			lastFailure = addr + ": " + err.Error()
		case err != nil:
			lease.Failed(p.now(), err.Error())
			note(addr, err.Error())
			lastFailure = addr + ": " + err.Error()
		case full != "":
			// The backend answered, so the address is alive: Connected proves it (a
			// recovery attempt recovers instead of being handed out again on every
			// login), then the lease ends with no health effect. The kick also marks the
			// address full for FullTTL, as a full status answer does, so the next logins
			// go to a replica with room first.
			lease.Connected(p.now(), dialTime)
			lease.Skipped(p.now())
			srv.pool.ReportStatus(addr, 1, 1, p.now())
			lastFull = full
			note(addr, "full")
		default:
			lease.Connected(p.now(), dialTime)
			note(addr, "ok")
			return backend, nil
		}
	}
	if lastFull != "" {
		return nil, &fullError{kick: lastFull}
	}
	if lastFailure != "" {
		// The login's failure line says why, not only that: a misconfigured
		// backend (online-mode, forwarding) is named at INFO, not at debug.
		return nil, fmt.Errorf("%w (last: %s)", errNoBackend, lastFailure)
	}
	return nil, errNoBackend
}

var (
	errShuttingDown = errors.New("proxy is shutting down")
	// errNoLoginAnswer: the backend took the connection and the login but said
	// nothing within connect_timeout (a frozen server).
	errNoLoginAnswer = errors.New("no login answer within connect_timeout")
)

// attempt is one address: dial, then the handler's login exchange, both inside one
// connect_timeout. A backend that failed or was full is closed here.
func (p *moves) attempt(cn *conn, srv *server, addr string, login backendLogin) (backend net.Conn, dialTime time.Duration, full string, err error) {
	timeout := cn.st.cfg.ConnectTimeout.D()
	deadline := time.Now().Add(timeout)
	start := p.now()
	endSpan := cn.ev.trace.Dial(addr)
	defer func() { endSpan(err) }()
	backend, err = p.dial(addr, timeout)
	dialTime = p.now().Sub(start)
	p.met.BackendConnect(srv.id, addr, dialTime, err)
	if err != nil {
		return nil, dialTime, "", errors.New(dialReason(err))
	}
	if !p.track(backend) {
		backend.Close()
		return nil, dialTime, "", errShuttingDown
	}
	full, err = login(backend, deadline)
	if err != nil || full != "" {
		p.untrack(backend)
		backend.Close()
		if err != nil {
			if isTimeout(err) {
				err = errNoLoginAnswer
			}
			return nil, dialTime, "", err
		}
		return nil, dialTime, full, nil
	}
	_ = backend.SetDeadline(time.Time{})
	return backend, dialTime, "", nil
}

// dialReason names a failed dial in the words the logs and events use.
func dialReason(err error) string {
	switch {
	case isTimeout(err):
		return "connect timeout"
	case isRefused(err):
		return "connection refused"
	}
	return err.Error()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// wake starts the routed server when it is managed and asleep, and waits until it
// is ready (or the proxy shuts down). Every handler calls it right before it
// connects: a player refused earlier never starts a server.
func (p *moves) wake(cn *conn) error {
	m := p.opts.Manager
	if m == nil || !m.Managed(cn.srv.id) {
		return nil // nothing to wake: no server.wake span either
	}
	end := cn.ev.trace.Wake(cn.srv.id)
	err := m.EnsureStarted(p.ctx, cn.srv.id)
	end(err)
	if err != nil {
		p.log.Info("server could not be started for a player", "server", cn.srv.id, "player", cn.player, "err", err)
		return err
	}
	return nil
}
