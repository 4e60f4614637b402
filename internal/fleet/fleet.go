// Package fleet lets several proxies behind one address act as one: drains,
// enables, resets and bans made on any of them apply on all, each publishes its
// players so the fleet's list and counts are whole, and exactly one of them
// starts a sleeping server when players arrive at several at once. They meet in
// one Redis (RedisBungee's habit), never talk to each other directly, and never
// wait on Redis where a player waits.
//
// Shared operator state (drains and bans) lives in three places: the drain and
// ban stores of each proxy (what the proxy enforces, read on the login path), the
// journal of each proxy (<data_dir>/fleet.json: every key's last change with its
// Version and whether Redis has it), and Redis (a hash with the same entries, and
// a pub/sub channel every stored change is published on). A change is written to
// the local stores and the journal first, then compare-and-set into Redis by a
// script that keeps the newer Version and publishes it; every proxy applies a
// published change whose Version is newer than its journal's. At every
// (re)connection and every resync a proxy pulls the whole hash and pushes what
// Redis lacks or has older, so a partition, a lost message, a restarted Redis
// (even one without persistence) or a restarted proxy all converge on the same
// state: for each key, the change with the greatest Version. Versions are hybrid
// logical clocks, so the last change acknowledged to an operator wins.
//
// Where things live: entry.go (what a change is), version.go (how changes are
// ordered), journal.go, share.go (a local change on its way to the fleet),
// apply.go (a fleet change on its way to this proxy), presence.go (heartbeats,
// players, the fleet view), wakelock.go, keys.go (Redis keys and scripts).
package fleet

import (
	"context"
	"errors"
	"fmt"
	"github.com/infrarust-go/infrarust/internal/accounts"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/passes"
	"github.com/infrarust-go/infrarust/internal/perms"
	"github.com/infrarust-go/infrarust/internal/seal"
)

// Local is this proxy as the fleet reads and changes it: the app implements it
// over the drain store, the ban store and the running proxy.
type Local interface {
	// Drained reports the applied drain intent of an address.
	Drained(server, address string) bool
	// SetDrained applies a drain or enable (store and pools); an address this
	// proxy does not have is only stored.
	SetDrained(server, address string, drained bool) error
	// Reset clears an address's failures; an unknown address is not an error.
	Reset(server, address string) error
	// Drains lists the applied drains per server.
	Drains() map[string][]string
	// InMaintenance reports whether a server is in maintenance here.
	InMaintenance(server string) bool
	// SetMaintenance applies a maintenance or its end (store and proxy); a
	// server this proxy does not have is only stored.
	SetMaintenance(server string, on bool) error
	// Maintenances lists the servers in maintenance.
	Maintenances() []string
	// Bans lists the bans in force.
	Bans() []bans.Ban
	// AddBan and RemoveBan change the ban store (and tell the event bus).
	AddBan(b bans.Ban) error
	RemoveBan(t bans.Type, value string) error
	// Players lists this proxy's sessions now.
	Players() []Player
	// SessionClaimed settles a session of identity key that proxy other let in
	// at at, against this proxy's (self's) session of the same identity, if any.
	SessionClaimed(key string, at time.Time, strength int, other, self string)
	// RunCommand carries out another proxy's /send (arg: the server) or /kick
	// (arg: the reason) of one of this proxy's players.
	RunCommand(action, player, arg, from string) error
}

// Options wires a Fleet into serve.
type Options struct {
	// Config is the validated [fleet] table.
	Config config.Fleet
	// DataDir holds the journal (fleet.json); "" keeps it in memory (tests).
	DataDir string
	// Local is this proxy; required.
	Local Local
	// LocalCount is this proxy's player count on a server, read by OnlineCount
	// on the status path: it must be cheap. Nil counts Local.Players.
	LocalCount func(server string) int
	// Bus receives fleet.connectivity events; nil publishes nothing.
	Bus *events.Bus
	// Logger receives the fleet's logs; nil discards them.
	Logger *slog.Logger
	// Version and StartedAt describe this proxy in the fleet view.
	Version   string
	StartedAt time.Time
	// Now is the clock of versions and player times; nil is time.Now.
	Now func() time.Time
	// Getenv reads "env:" URLs; nil is os.Getenv.
	Getenv func(string) string
	// Hostname is the default id; nil is os.Hostname.
	Hostname func() (string, error)
}

const (
	// resyncInterval is how often a connected proxy pulls the whole state and
	// pushes what Redis lacks: the net under pub/sub, which loses messages sent
	// while a subscriber reconnects.
	resyncInterval = 30 * time.Second
	// minBackoff and maxBackoff bound the wait between reconnection attempts.
	minBackoff = 250 * time.Millisecond
	maxBackoff = 30 * time.Second
	// lostRetention is how long a proxy that stopped heartbeating stays listed
	// as lost in the fleet view before it is forgotten.
	lostRetention = time.Hour
	// deadAfter is how old a lifted or expired ban must be before it is
	// forgotten; a proxy cut off longer than this may bring it back once.
	deadAfter = 30 * 24 * time.Hour
	// inboxSize bounds the published changes waiting to be applied.
	inboxSize = 1024
)

// ErrUnreachable is returned by calls that need Redis while it does not answer.
var ErrUnreachable = errors.New("the fleet's Redis is unreachable")

// Fleet is this proxy's membership in a fleet.
type Fleet struct {
	opts Options
	cfg  config.Fleet
	id   string
	url  string // redacted, for messages
	k    keys
	rdb  *redis.Client
	log  *slog.Logger
	now  func() time.Time

	// mu orders every change of shared state on this proxy: the journal, the
	// clock, the receipts and the applies to Local.
	mu      sync.Mutex
	j       *journal
	clk     clock
	waiting map[string][]*Receipt

	kick chan struct{} // cap 1: a local change waits to be pushed
	// claims are the sessions this proxy let in, waiting to be published (sessions.go).
	claims chan Entry
	// badAt is when each ignored entry was last logged (badEntry).
	badMu sync.Mutex
	badAt map[string]time.Time

	// st is the connectivity and the last fleet view, read by the admin API,
	// metrics and the manager from any goroutine.
	stMu      sync.Mutex
	connected bool
	tried     bool // at least one attempt finished, so !connected means "down"
	since     time.Time
	lastErr   string
	proxyAddr string
	adminAddr string
	view      []ProxyStatus
	viewAt    time.Time
	others    atomic.Pointer[map[string]int] // players per server on the other live proxies

	// published is the players hash as last written (the Run goroutine's alone).
	published map[string]string

	ops atomic.Uint64 // Redis commands sent, for the metrics and the benchmarks
	// seal signs what this proxy writes and checks what it reads ([fleet]
	// secret_file); nil without a secret.
	seal *seal.Sealer
	// rejected counts what was dropped from Redis, by reason (trust.go).
	rejected [len(rejectReasons)]atomic.Uint64
	// heard are the messages acted on lately, so a replayed one is not (trust.go).
	heardMu sync.Mutex
	heard   map[string]time.Time
	// viewAsked is when an unknown sender last made this proxy read the view
	// again (guarded by heardMu).
	viewAsked time.Time
	wg        sync.WaitGroup
	leaving   chan struct{} // closed when Run ends: wake lock renewals stop
}

// New checks the options and prepares the Redis client; it does no I/O, so a
// Redis that is down never stops serve from starting.
func New(opts Options) (*Fleet, error) {
	if opts.Local == nil {
		return nil, errors.New("fleet: Options.Local is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Hostname == nil {
		opts.Hostname = os.Hostname
	}
	cfg := opts.Config
	raw, err := ResolveRedisURL(cfg.Redis, opts.Getenv)
	if err != nil {
		return nil, err
	}
	ropts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("[fleet] redis %s: %w", config.RedactURL(raw), err)
	}
	t := cfg.Timeout.D()
	ropts.DialTimeout, ropts.ReadTimeout, ropts.WriteTimeout = t, t, t
	ropts.MaxRetries = 1         // a retry doubles the wait; the loop retries anyway
	ropts.DisableIdentity = true // CLIENT SETINFO is unknown before Redis 7.2
	ropts.PoolSize = 8
	id := cfg.ID
	if id == "" {
		if id, err = opts.Hostname(); err != nil || id == "" {
			return nil, fmt.Errorf("[fleet] id is not set and the host name is unknown (%v); set [fleet] id", err)
		}
	}
	jpath := ""
	if opts.DataDir != "" {
		jpath = filepath.Join(opts.DataDir, JournalFileName)
	}
	j, err := openJournal(jpath)
	if err != nil {
		return nil, err
	}
	secret, err := readSecret(cfg)
	if err != nil {
		return nil, err
	}
	f := &Fleet{
		opts: opts, cfg: cfg, id: id, url: config.RedactURL(raw), k: keys{prefix: cfg.KeyPrefix},
		rdb: redis.NewClient(ropts), log: opts.Logger.With("fleet", id), now: opts.Now,
		j: j, waiting: map[string][]*Receipt{}, kick: make(chan struct{}, 1), published: map[string]string{},
		claims:  make(chan Entry, claimQueue),
		leaving: make(chan struct{}),
		seal:    seal.New(secret),
	}
	if !f.seal.On() {
		f.log.Warn("[fleet] has no secret: messages and shared entries are not signed, so anything that can write to the fleet's Redis can kick and move players, log names in without a password and change drains and bans; set [fleet] secret_file (or INFRARUST_FLEET_SECRET), the same on every proxy")
	}
	f.rdb.AddHook(countHook{&f.ops})
	quietRedis.Do(func() { redis.SetLogger(discardLogger{}) })
	for _, e := range j.entries {
		f.clk.see(e.V)
	}
	empty := map[string]int{}
	f.others.Store(&empty)
	return f, nil
}

// ID is this proxy's id in the fleet.
func (f *Fleet) ID() string { return f.id }

// SetAddresses records where players and the admin API reach this proxy, for
// the fleet view; serve calls it once it listens.
func (f *Fleet) SetAddresses(proxyAddr, adminAddr string) {
	f.stMu.Lock()
	f.proxyAddr, f.adminAddr = proxyAddr, adminAddr
	f.stMu.Unlock()
}

// Ops counts the Redis commands this proxy has sent (pipelined ones included).
func (f *Fleet) Ops() uint64 { return f.ops.Load() }

// Close releases the Redis client; Run must have returned.
func (f *Fleet) Close() error { return f.rdb.Close() }

// Run keeps this proxy in the fleet until ctx ends: it applies the journal to the
// proxy, then connects, syncs, heartbeats, applies what others publish and
// pushes what this proxy changes, reconnecting with backoff whenever Redis does
// not answer. On the way out it removes this proxy's players from the fleet.
func (f *Fleet) Run(ctx context.Context) {
	f.reconcileAll()
	inbox := make(chan string, inboxSize)
	resub := make(chan struct{}, 1)
	subDone := make(chan struct{})
	go func() {
		defer close(subDone)
		f.subscribe(ctx, inbox, resub)
	}()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.publishClaims(ctx)
	}()
	beat := time.NewTicker(f.cfg.HeartbeatInterval.D())
	defer beat.Stop()
	resync := time.NewTicker(resyncInterval)
	defer resync.Stop()
	var retry <-chan time.Time
	backoff := minBackoff
	// attempt runs one step; on failure the link is down and a retry is due after
	// the backoff, on the first success after a failure everything is synced.
	attempt := func(step func(context.Context) error) {
		err := step(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			f.setDown(err)
			if retry == nil {
				wait := backoff/2 + rand.N(backoff/2+1) // jitter: a fleet does not reconnect in lockstep
				retry = time.After(wait)
				backoff = min(2*backoff, maxBackoff)
			}
			return
		}
		backoff = minBackoff
	}
	round := func(ctx context.Context) error {
		if err := f.sync(ctx); err != nil {
			return err
		}
		if err := f.heartbeat(ctx); err != nil {
			return err
		}
		if err := f.refreshView(ctx); err != nil {
			return err
		}
		f.setUp()
		return nil
	}
	attempt(round)
	for {
		select {
		case <-ctx.Done():
			f.leave()
			close(f.leaving)
			<-subDone
			f.wg.Wait()
			return
		case msg := <-inbox:
			f.onMessage(msg)
		case <-resub:
			if f.Connected() {
				attempt(f.sync)
			}
		case <-f.kick:
			if f.Connected() {
				attempt(f.push)
			}
		case <-beat.C:
			if f.Connected() {
				attempt(func(ctx context.Context) error {
					if err := f.heartbeat(ctx); err != nil {
						return err
					}
					return f.refreshView(ctx)
				})
			}
		case <-resync.C:
			if f.Connected() {
				attempt(f.sync)
			}
		case <-retry:
			retry = nil
			attempt(round)
		}
	}
}

// subscribe feeds the changes channel into inbox and signals resub after every
// (re)subscription, since messages sent meanwhile were lost.
func (f *Fleet) subscribe(ctx context.Context, inbox chan<- string, resub chan<- struct{}) {
	ps := f.rdb.Subscribe(ctx, f.k.changes())
	// Receive does not return when ctx ends while it waits for a message;
	// closing the subscription does.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer stop()
	defer ps.Close()
	backoff := minBackoff
	for {
		m, err := ps.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			// The next Receive reconnects; pause so a dead Redis is not hammered.
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		backoff = minBackoff
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				select {
				case resub <- struct{}{}:
				default:
				}
			}
		case *redis.Message:
			select {
			case inbox <- m.Payload:
			case <-ctx.Done():
				return
			}
		}
	}
}

// Connected reports whether the last Redis call succeeded.
func (f *Fleet) Connected() bool {
	f.stMu.Lock()
	defer f.stMu.Unlock()
	return f.connected
}

// down reports whether Redis is known not to answer (not merely not tried yet),
// with the reason.
func (f *Fleet) down() (bool, string) {
	f.stMu.Lock()
	defer f.stMu.Unlock()
	return f.tried && !f.connected, f.lastErr
}

func (f *Fleet) setUp() {
	f.stMu.Lock()
	was := f.connected
	f.connected, f.tried, f.lastErr = true, true, ""
	if !was {
		f.since = f.now()
	}
	f.stMu.Unlock()
	if !was {
		f.log.Info("connected to the fleet", "redis", f.url, "proxies", f.liveCount())
		f.announce()
	}
}

func (f *Fleet) setDown(err error) {
	msg := f.explain(err)
	f.stMu.Lock()
	was, first := f.connected, !f.tried
	changed := f.lastErr != msg
	f.connected, f.tried, f.lastErr = false, true, msg
	if was || first {
		f.since = f.now()
	}
	f.stMu.Unlock()
	if was || first || changed {
		f.log.Warn("the fleet's Redis is unreachable; players are served with the last state this proxy knew, and changes made here are kept and published once it is back",
			"redis", f.url, "err", msg)
	}
	if was || first {
		f.announce()
	}
	f.failWaiting(msg)
}

// explain words a Redis failure for an operator.
func (f *Fleet) explain(err error) string {
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return fmt.Sprintf("Redis at %s did not answer within %s ([fleet] timeout)", f.url, f.cfg.Timeout.D())
	}
	return fmt.Sprintf("Redis at %s: %v", f.url, err)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// announce publishes the connectivity on the event bus.
func (f *Fleet) announce() {
	st := f.Status()
	f.opts.Bus.Publish(events.FleetConnectivity, events.Fleet{
		ID: f.id, Connected: st.Connected, Error: st.LastError, Pending: st.Pending, Proxies: st.LiveProxies,
	})
}

// leave removes this proxy from the fleet view and its players from the fleet
// at once, instead of heartbeat_timeout later. Best effort: Redis may be down.
func (f *Fleet) leave() {
	if !f.Connected() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.cfg.Timeout.D())
	defer cancel()
	pipe := f.rdb.TxPipeline()
	pipe.ZRem(ctx, f.k.proxies(), f.id)
	pipe.Del(ctx, f.k.proxy(f.id), f.k.players(f.id))
	if _, err := pipe.Exec(ctx); err != nil {
		f.log.Debug("leaving the fleet", "err", err)
	}
}

// quietRedis silences go-redis's own logger (a process-wide setting of that
// library, stderr by default): the fleet says in its own log lines, once per
// change of state and in an operator's words, what a failed dial means.
var quietRedis sync.Once

type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

// countHook counts the commands sent to Redis.
type countHook struct{ n *atomic.Uint64 }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(uint64(len(cmds)))
		return next(ctx, cmds)
	}
}

// callCtx bounds one Redis call by [fleet] timeout.
func (f *Fleet) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, f.cfg.Timeout.D())
}

// AccountStore keeps the auth limbo's accounts in the fleet's Redis, so every
// proxy of the fleet knows them.
// PassStore keeps bot verification's passes in the fleet's Redis, signed, so
// a player verified through one proxy is not checked again through another.
// While Redis is known not to answer, a lookup fails at once (the player is
// checked) instead of waiting for it on the login path.
func (f *Fleet) PassStore() passes.Store {
	return passStore{passes.NewRedis(f.rdb, f.k.prefix, f.seal), f}
}

type passStore struct {
	*passes.Redis
	f *Fleet
}

func (s passStore) Passed(ctx context.Context, name, ip string, now time.Time) (time.Time, bool, error) {
	if down, why := s.f.down(); down {
		return time.Time{}, false, fmt.Errorf("%w: %s", ErrUnreachable, why)
	}
	return s.Redis.Passed(ctx, name, ip, now)
}

func (f *Fleet) AccountStore() *accounts.Redis {
	return accounts.NewRedis(f.rdb, f.k.prefix).Sealed(f.seal)
}

// PermissionStore keeps the stored roles in the fleet's Redis, signed, so a
// change made through any proxy is every proxy's (perms.Redis).
func (f *Fleet) PermissionStore() *perms.Redis {
	return perms.NewRedis(f.rdb, f.k.prefix, f.seal)
}

// RefusedPermissions counts and logs a permissions document that was not
// applied (unsigned, forged, or a replay of an older one).
func (f *Fleet) RefusedPermissions(err error) {
	reason := rejectBadSeal
	switch {
	case errors.Is(err, seal.ErrUnsealed):
		reason = rejectUnsigned
	case errors.Is(err, perms.ErrOlder):
		reason = rejectStale
	}
	f.reject(reason, f.k.prefix+"permissions", err)
}
