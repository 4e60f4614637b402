package bench

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth/authtest"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// The proxy modes the Minecraft-faithful workloads compare, each a server of
// the proxy under test with its own domain.
const (
	modePassthrough = "passthrough"     // splice, the baseline of the intercepted modes
	modeOffline     = "offline"         // proxy and backend both at threshold 256: frames pass untouched
	modeReframe     = "offline-reframe" // backend at ReframeThreshold, proxy at 256: every frame re-framed
	modeClientOnly  = "client_only"     // offline + Mojang authentication and encryption on the client side
)

// AllModes lists the modes in table order.
var AllModes = []string{modePassthrough, modeOffline, modeReframe, modeClientOnly}

// backendThreshold is the compression threshold of the Minecraft-faithful
// backend, vanilla's and Paper's default; the proxy's compression_threshold
// is the same, so offline and client_only pass compressed frames through.
const backendThreshold = 256

// mcEnv is what the Minecraft-faithful workloads run against: two offline-mode
// backends (threshold 256 and the re-framing one), the stand-in session server
// and one account per concurrent client.
type mcEnv struct {
	o        Options
	ss       *authtest.Server
	be       *mcBackend // threshold 256
	reframe  *mcBackend // threshold Options.ReframeThreshold
	hc       *http.Client
	mu       sync.Mutex
	accounts []authtest.Account
}

func startMCEnv(o Options) (*mcEnv, error) {
	ss, err := authtest.Start()
	if err != nil {
		return nil, err
	}
	e := &mcEnv{o: o, ss: ss, hc: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 256},
		Timeout:   ioTimeout,
	}}
	if e.be, err = startMCBackend(backendThreshold, o.Verify, o.RelayRate); err != nil {
		e.Close()
		return nil, err
	}
	if e.reframe, err = startMCBackend(o.ReframeThreshold, o.Verify, o.RelayRate); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *mcEnv) Close() {
	if e.be != nil {
		e.be.Close()
	}
	if e.reframe != nil {
		e.reframe.Close()
	}
	e.hc.CloseIdleConnections()
	e.ss.Close()
}

// hostOf is the domain the proxy routes to a mode's server.
func hostOf(mode string) string { return strings.ReplaceAll(mode, "_", "-") + ".mc.bench.local" }

// routes are the proxy's servers for the modes: offline-reframe is offline in
// front of the re-framing backend.
func (e *mcEnv) routes() []route { return modeRoutes(e.be.Addr(), e.reframe.Addr()) }

func modeRoutes(be, reframe string) []route {
	return []route{
		{id: "mc-passthrough", host: hostOf(modePassthrough), mode: "passthrough", backend: be},
		{id: "mc-offline", host: hostOf(modeOffline), mode: "offline", backend: be},
		{id: "mc-reframe", host: hostOf(modeReframe), mode: "offline", backend: reframe},
		{id: "mc-client-only", host: hostOf(modeClientOnly), mode: "client_only", backend: be},
	}
}

func (e *mcEnv) modes() []string {
	if len(e.o.Modes) == 0 {
		return AllModes
	}
	var out []string
	for _, m := range AllModes {
		if slices.Contains(e.o.Modes, m) {
			out = append(out, m)
		}
	}
	return out
}

// identity is worker w's player: its own account on the stand-in, so
// concurrent joins never overwrite each other's server hash.
func (e *mcEnv) identity(w int) identity {
	e.mu.Lock()
	for len(e.accounts) <= w {
		e.accounts = append(e.accounts, e.ss.AddAccount(fmt.Sprintf("bench%d", len(e.accounts))))
	}
	acct := e.accounts[w]
	e.mu.Unlock()
	return identity{name: acct.Name, acct: &acct, joinURL: e.ss.URL + authtest.JoinPath, hc: e.hc}
}

// baseline is the backend a mode's direct run talks to.
func (e *mcEnv) baseline(mode string) *mcBackend {
	if mode == modeReframe {
		return e.reframe
	}
	return e.be
}

// groups builds one comparison per backend: its direct run and the modes in
// front of it; f runs the workload against an address with a handshake host.
func (e *mcEnv) groups(r *runner, f func(addr, host string) (measure, error)) []group {
	var gs []group
	for _, be := range []*mcBackend{e.be, e.reframe} {
		g := group{direct: func() (measure, error) { return f(be.Addr(), "direct") }}
		for _, m := range e.modes() {
			if e.baseline(m) != be {
				continue
			}
			for _, u := range r.modeTargets(m) {
				g.arms = append(g.arms, arm{label: m, u: u, anyProxy: !u.named(m), run: func() (measure, error) { return f(u.t.ModeAddr(m), hostOf(m)) }})
			}
		}
		if len(g.arms) > 0 {
			gs = append(gs, g)
		}
	}
	return gs
}

// modeTargets are the proxies a mode's workloads run through: every proxy that
// can serve it for passthrough (the forwarders, HAProxy); for the intercepted
// modes the first (they do not use the forwarder) and Gate's process for the mode.
func (r *runner) modeTargets(mode string) []*underTest {
	var out []*underTest
	for i, u := range r.pts {
		if u.t.ModeAddr(mode) == "" {
			continue
		}
		if mode == modePassthrough || i == 0 || u.gate == mode {
			out = append(out, u)
		}
	}
	return out
}

// workloads runs the relay throughput and login storms of every mode.
func (e *mcEnv) workloads(r *runner) error {
	o := e.o
	relay := func(send bool) func(addr, host string) (measure, error) {
		return func(addr, host string) (measure, error) {
			c, err := loginMC(addr, host, e.identity(0))
			if err != nil {
				return measure{}, err
			}
			defer c.Close()
			start := time.Now()
			var n int64
			if send {
				n, err = c.sendFor(o.BulkTime, o.RelayRate)
			} else {
				n, err = c.receiveFor(o.BulkTime, o.Verify)
			}
			if err != nil {
				return measure{}, err
			}
			return measure{units: float64(n), seconds: time.Since(start).Seconds()}, nil
		}
	}
	if err := r.compare("relay-up-1", mibUnit, e.groups(r, relay(true))...); err != nil {
		return err
	}
	if err := r.compare("relay-down-1", mibUnit, e.groups(r, relay(false))...); err != nil {
		return err
	}
	cfb8Limits(r.res.Rows, o.logf)
	logins := func(addr, host string) (measure, error) {
		return storm(o.Clients, o.StormTime, 0, e.loginCycle(addr, host))
	}
	return r.compare(fmt.Sprintf("mclogin-%d", o.Clients), loginUnit, e.groups(r, logins)...)
}

// loginCycle is one full login (for client_only: encryption and the join on
// the stand-in), the join and the backend's "ready", and the close. Each worker turns
// through four players of its own, so a login never finds its player still
// online from the worker's last cycle (the proxy would end that session
// first: duplicate_login).
func (e *mcEnv) loginCycle(addr, host string) func(int, *bufio.Reader) error {
	var turns sync.Map // worker -> *int, touched by that worker only
	return func(w int, _ *bufio.Reader) error {
		t, _ := turns.LoadOrStore(w, new(int))
		turn := t.(*int)
		*turn++
		c, err := loginMC(addr, host, e.identity(w+e.o.Clients*(*turn%4)))
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// openIdleMC logs n players in to host through addr with 64 dialers and leaves
// each session idle: the backend echoes whatever frame comes (keepAlives uses
// that) and otherwise waits. The players are the identities from first on.
// A session whose command never gets through (Gate sometimes strands a player
// it has just taken to the server: nothing the player sends is read again) is
// closed and logged in anew as another player, up to twice; stranded counts
// them.
func (e *mcEnv) openIdleMC(addr, host string, first, n int) (clients []*mcClient, stranded int, err error) {
	clients = make([]*mcClient, n)
	var strandedN atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr errOnce
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.get() != nil {
					return
				}
				// A player per session: the proxy lets a player be online once.
				var c *mcClient
				var err error
				for attempt := range 3 {
					if c, err = loginMC(addr, host, e.identity(first+i+attempt*(1<<20))); err == nil {
						if err = c.command(cmdEcho); err != nil {
							c.Close()
						}
					}
					if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() {
						break
					}
					strandedN.Add(1)
				}
				if err != nil {
					firstErr.set(fmt.Errorf("session %d: %w", i, err))
					return
				}
				clients[i] = c
			}
		}()
	}
	wg.Wait()
	if err := firstErr.get(); err != nil {
		closeClients(clients)
		return nil, int(strandedN.Load()), err
	}
	return clients, int(strandedN.Load()), nil
}

func closeClients(cs []*mcClient) {
	for _, c := range cs {
		if c != nil {
			c.Close()
		}
	}
}

// idKeepAlive is the frame a held player's keep-alive exchange sends and gets
// echoed: the size of vanilla's play keep-alive (an 8-byte id), on a play id
// no proxy of the run decodes (set beacon effect up, move entity down), so the
// echo passes a proxy that answers keep-alives itself.
const idKeepAlive int32 = 0x2e

// keepAlives has every client exchange one keep-alive a second (a frame up,
// its echo down: what the proxy relays for vanilla's server ping and client
// pong) for d, with 64 workers; it returns the exchanges done.
func keepAlives(clients []*mcClient, d time.Duration) (int64, error) {
	var done atomic.Int64
	var firstErr errOnce
	var wg sync.WaitGroup
	start := time.Now()
	rounds := int(d / time.Second)
	const workers = 64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			payload := make([]byte, 8)
			for r := range rounds {
				time.Sleep(time.Until(start.Add(time.Duration(r) * time.Second)))
				for i := w; i < len(clients); i += workers {
					c := clients[i]
					_ = c.nc.SetDeadline(time.Now().Add(ioTimeout))
					if err := c.conn.WritePacket(idKeepAlive, payload); err != nil {
						firstErr.set(err)
						return
					}
					f, err := c.conn.ReadFrame()
					if err == nil && f.ID != idKeepAlive {
						if err = kicked(f, mc.PlayState); err == nil {
							err = fmt.Errorf("packet 0x%02x", f.ID)
						}
					}
					if err != nil {
						firstErr.set(fmt.Errorf("keep-alive echo: %w", err))
						return
					}
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return done.Load(), firstErr.get()
}
