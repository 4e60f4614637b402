package proxy

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/proxy/ratelimit"
)

// core is what every part of the proxy shares: the options it was built
// with, the logger, clock, bus and metrics, the configuration in force, the
// players online, and the lifecycle Shutdown ends (every connection and
// goroutine is tracked here, so it can be closed and waited for). The parts
// (door, status, moves, limbos, checks, commander, announcer) each hold it
// and name the other parts they call; none holds the *Proxy.
type core struct {
	opts Options
	log  *slog.Logger
	now  func() time.Time
	bus  *events.Bus
	met  *metrics.Metrics

	state  atomic.Pointer[state]
	roster roster      // connected players
	maint  maintenance // servers in maintenance
	dialer Dialer
	// limiter holds the per-IP token buckets (logins, pings, registrations).
	limiter *ratelimit.Limiter
	icpt    *interception     // the intercepted modes' shared state (keys, session server)
	fwd     forward.Forwarder // moves passthrough sessions' bytes
	// ctx ends at Shutdown, so a login waiting for a server to start gives up.
	ctx    context.Context
	cancel context.CancelFunc

	connMu   sync.Mutex
	conns    map[net.Conn]struct{}
	closing  bool
	wg       sync.WaitGroup // connection goroutines, commands, moves
	sessions sync.WaitGroup // forwarded sessions (drained on shutdown)
}

func (p *core) msgs() config.Messages { return p.state.Load().cfg.Messages }

func (p *core) isClosing() bool {
	p.connMu.Lock()
	defer p.connMu.Unlock()
	return p.closing
}

// track registers a connection so Shutdown can close it; false once shutting down.
func (p *core) track(c net.Conn) bool {
	p.connMu.Lock()
	defer p.connMu.Unlock()
	if p.closing {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// trackClient is track for an accepted player's connection, counted in wg under
// the same lock: Shutdown sets closing under it before it waits, so no Add can
// race its Wait.
func (p *core) trackClient(c net.Conn) bool {
	p.connMu.Lock()
	defer p.connMu.Unlock()
	if p.closing {
		return false
	}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	return true
}

// goroutine runs f as one of the proxy's goroutines, which Shutdown waits
// for: a move a backend asked for, a command. Once shutting down, f is not
// run.
func (p *core) goroutine(f func()) {
	p.connMu.Lock()
	if p.closing {
		p.connMu.Unlock()
		return
	}
	p.wg.Add(1)
	p.connMu.Unlock()
	go func() {
		defer p.wg.Done()
		f()
	}()
}

func (p *core) untrack(c net.Conn) {
	p.connMu.Lock()
	delete(p.conns, c)
	p.connMu.Unlock()
}
