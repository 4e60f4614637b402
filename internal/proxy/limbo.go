package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
	"github.com/infrarust-go/infrarust/internal/session"
)

// limboRetry is how often a held player's handler tries the server again (a
// queue's head, a server that went down).
const limboRetry = 2 * time.Second

// maintenance is the servers an operator put in maintenance; it survives reloads.
type maintenance struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (m *maintenance) on(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids[id]
}

// SetMaintenance puts a server in maintenance or takes it out: during it only
// maintenance_staff join; other players are held in the limbo (with the
// "maintenance" handler) or told, and the server list shows its maintenance MOTD.
func (p *Proxy) SetMaintenance(serverID string, on bool) error {
	srv := p.state.Load().servers[serverID]
	if srv == nil {
		return fmt.Errorf("%w %q", ErrUnknownServer, serverID)
	}
	p.maint.mu.Lock()
	defer p.maint.mu.Unlock()
	if p.maint.ids == nil {
		p.maint.ids = map[string]bool{}
	}
	if p.maint.ids[serverID] != on {
		srv.cache.forget() // the backend's answers from before are not its answers after
	}
	if on {
		p.maint.ids[serverID] = true
	} else {
		delete(p.maint.ids, serverID)
	}
	p.log.Info("maintenance", "server", serverID, "on", on)
	return nil
}

// Maintenance lists the servers in maintenance.
func (p *Proxy) Maintenance() []string {
	p.maint.mu.Lock()
	defer p.maint.mu.Unlock()
	var out []string
	for id := range p.maint.ids {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// listed reports whether the player's name or UUID is in list (names compare
// case-insensitively, as Minecraft's do).
func listed(list []string, name, uuid string) bool {
	for _, e := range list {
		if strings.EqualFold(e, name) || (uuid != "" && strings.EqualFold(strings.ReplaceAll(e, "-", ""), strings.ReplaceAll(uuid, "-", ""))) {
			return true
		}
	}
	return false
}

// inMaintenance reports that e may not join srv now for its maintenance.
func (p *limbos) inMaintenance(srv *server, e entrant) bool {
	return p.maint.on(srv.id) && !listed(srv.cfg.MaintenanceStaff, e.name, e.uuid)
}

// limboCovers says the limbo can hold this client (registry data exists for its version).
func limboCovers(protocol int32) bool {
	return limbo.DefaultRegistries.Covers(mc.Protocol(protocol))
}

// asleep reports a managed server that is not online (a login would wake it).
func (p *limbos) asleep(srv *server) bool {
	m := p.opts.Manager
	return m != nil && m.Managed(srv.id) && m.State(srv.id) != manager.StateOnline
}

// loginStay is the limbo stay a login for target needs before any backend: the
// server asleep, with the wake handler. nil: connect now.
func (p *limbos) loginStay(cn *conn, target *server) *session.Stay {
	// The server's own setting first: most logins stop there.
	if target.cfg.HasLimbo(config.LimboWake) && p.asleep(target) && limboCovers(cn.protocol) {
		return p.wakeStay(cn, target, "Waking up "+target.id)
	}
	return nil
}

// refusedStay is the limbo stay that answers a soft refusal of target's rules
// when target has the handler for it: its maintenance, or its queue. nil: the
// refusal stands.
func (p *limbos) refusedStay(cn *conn, target *server, r *refusal) *session.Stay {
	if !limboCovers(cn.protocol) {
		return nil
	}
	switch {
	case r.rule == ruleMaintenance && target.cfg.HasLimbo(config.LimboMaintenance):
		return p.maintenanceStay(cn, target)
	case r.rule == ruleCapacity && target.cfg.HasLimbo(config.LimboQueue):
		return p.queueStay(cn, target)
	}
	return nil
}

func title(t, sub string) limbo.Message {
	return limbo.Message{Title: mc.TextComponent(t), Subtitle: mc.TextComponent(sub)}
}

// exitLimbo takes a player held in the limbo into t, by the route's admitInto
// (the decision to go to t was made, and announced, when he entered the
// stay): t's requirements and rules decide first, as for any other move. With
// holds (a check he passed) a server that holds players (asleep, in
// maintenance, full) hands him on to its stay (session.Next); without (a
// stay's own retry) its answer is the error the stay waits on. A hard refusal
// ends the stay and is recorded; a soft one only keeps the player waiting,
// retry after retry, so it is not recorded each time (the title says why).
func (p *limbos) exitLimbo(cn *conn, t *server, ps pass, holds bool) (*session.Backend, error) {
	c := *cn // the login's identity and handshake, under the configuration in force now
	c.st = p.state.Load()
	c.lease = balance.Lease{}
	b, stay, err := p.moves.admitInto(&c, nil, Move{who: cn.pl, to: t, why: whyLimbo, pass: ps}, holds)
	if stay != nil {
		return nil, &session.Next{Stay: *stay}
	}
	return b, err
}

// wakeStay holds the player while t starts, with a countdown, then moves them in.
// The players waiting for one start share it (wakeOf): none of them holds a
// goroutine until the server is up.
func (p *limbos) wakeStay(cn *conn, t *server, heading string) *session.Stay {
	start := time.Now()
	w := p.wakeOf(t)
	return &session.Stay{
		Handler: string(config.LimboWake),
		Message: func() limbo.Message {
			return title(heading, fmt.Sprintf("%d s — you will be moved in when it is ready", int(time.Since(start).Seconds())))
		},
		Ready: w.over,
		Until: func(ctx context.Context) (*session.Backend, error) {
			select {
			case <-w.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if w.err != nil {
				return nil, w.err
			}
			return p.exitLimbo(cn, t, pass{}, false)
		},
	}
}

// waking is one start of a managed server, shared by every player waiting for it.
type waking struct {
	done chan struct{} // closed when the start is over
	err  error         // why it failed; read after done
}

func (w *waking) over() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// wakeOf is the start of t in progress, or a new one: one EnsureStarted per
// start, however many players wait for it.
func (p *limbos) wakeOf(t *server) *waking {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.wakes[t.id]; w != nil {
		return w
	}
	w := &waking{done: make(chan struct{})}
	if p.wakes == nil {
		p.wakes = map[string]*waking{}
	}
	p.wakes[t.id] = w
	p.wg.Add(1) // Shutdown cancels p.ctx, which ends the wait, then waits for it
	go func() {
		defer p.wg.Done()
		w.err = p.opts.Manager.EnsureStarted(p.ctx, t.id)
		p.mu.Lock()
		delete(p.wakes, t.id)
		p.mu.Unlock()
		close(w.done)
	}()
	return w
}

// maintenanceStay holds the player until the maintenance ends, then moves them in.
func (p *limbos) maintenanceStay(cn *conn, t *server) *session.Stay {
	e := cn.entrant()
	return &session.Stay{
		Handler: string(config.LimboMaintenance),
		Message: func() limbo.Message {
			return title(t.id+" is under maintenance", "You will be moved in when it is over")
		},
		Ready: func() bool { return !p.inMaintenance(t, e) },
		Until: func(ctx context.Context) (*session.Backend, error) {
			for p.inMaintenance(t, e) {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(time.Second):
				}
			}
			if p.asleep(t) {
				if err := p.opts.Manager.EnsureStarted(ctx, t.id); err != nil {
					return nil, err
				}
			}
			return p.exitLimbo(cn, t, pass{}, false)
		},
	}
}

// waitQueue is the order in which held players get a full server's slots:
// queue_priority players first, then in arrival order. As many of them as the
// server's addresses report free slots (their status answers, which the head
// asks for before each try) try the server at once; at least the head.
type waitQueue struct {
	mu      sync.Mutex
	entries []*queued
}

type queued struct {
	name string
	prio bool
}

func (q *waitQueue) add(e *queued) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := len(q.entries)
	if e.prio {
		i = 0
		for i < len(q.entries) && q.entries[i].prio {
			i++
		}
	}
	q.entries = slices.Insert(q.entries, i, e)
}

func (q *waitQueue) remove(e *queued) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.entries = slices.DeleteFunc(q.entries, func(x *queued) bool { return x == e })
}

// position is e's place in the queue, from 1.
func (q *waitQueue) position(e *queued) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Index(q.entries, e) + 1
}

func (q *waitQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.entries)
}

// mayTry reports that e is among the players who may try the server now: the
// first `free` of the queue when the server's free slots are known, at least
// the head.
func (q *waitQueue) mayTry(e *queued, free int, known bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	open := 1
	if known {
		open = max(free, 1)
	}
	i := slices.Index(q.entries, e)
	return i >= 0 && i < open
}

func (p *limbos) queueOf(id string) *waitQueue {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.queues == nil {
		p.queues = map[string]*waitQueue{}
	}
	q := p.queues[id]
	if q == nil {
		q = &waitQueue{}
		p.queues[id] = q
	}
	return q
}

// queueLen is how many players wait in server id's queue (its capacity rule: a
// newcomer or a move does not go ahead of them).
func (p *limbos) queueLen(id string) int {
	p.mu.Lock()
	q := p.queues[id]
	p.mu.Unlock()
	if q == nil {
		return 0
	}
	return q.len()
}

// QueueLengths is how many players wait in each server's queue, for the
// metrics (a server whose queue was never used is absent).
func (p *Proxy) QueueLengths() map[string]int {
	p.limbos.mu.Lock()
	qs := make(map[string]*waitQueue, len(p.limbos.queues))
	for id, q := range p.limbos.queues {
		qs[id] = q
	}
	p.limbos.mu.Unlock()
	out := make(map[string]int, len(qs))
	for id, q := range qs {
		out[id] = q.len()
	}
	return out
}

// queueStay holds the player in t's queue: the players at its head try the
// server, as many at once as it has free slots (waitQueue.mayTry; the head asks
// the server's status before each try, every limboRetry), so players are let
// in in order and at the server's pace. A player
// leaves the queue once in (Done), not when its login succeeds: a server counts
// a player only when they are in its world, and the next one would otherwise
// take the same slot.
func (p *limbos) queueStay(cn *conn, t *server) *session.Stay {
	q := p.queueOf(t.id)
	e := &queued{name: cn.player, prio: listed(t.cfg.QueuePriority, cn.player, cn.uuid)}
	q.add(e)
	mayTry := func() bool {
		free, known := t.pool.FreeSlots(p.now())
		return q.mayTry(e, free, known)
	}
	return &session.Stay{
		Handler: string(config.LimboQueue),
		Message: func() limbo.Message {
			return title(t.id+" is full", fmt.Sprintf("You are #%d in the queue", q.position(e)))
		},
		Done:  func() { q.remove(e) },
		Ready: mayTry,
		Until: func(ctx context.Context) (*session.Backend, error) {
			for {
				if q.position(e) == 1 {
					p.refreshSlots(cn, t)
				}
				if mayTry() {
					b, err := p.exitLimbo(cn, t, pass{queued: true}, false)
					var full *fullError
					var r *refusal
					switch {
					case err == nil:
						return b, nil
					case errors.As(err, &full):
					case errors.As(err, &r) && r.hard():
						return nil, err // banned or filtered meanwhile: waiting changes nothing
					case r == nil && !errors.Is(err, errNoBackend):
						return nil, err
					}
				}
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(limboRetry):
				}
			}
		},
	}
}

// refreshSlots asks each of t's addresses for its status, which tells the pool
// its player counts (queryStatus), so t's queue knows how many of its players
// may try at once. One ping per address per limboRetry while a queue waits.
func (p *limbos) refreshSlots(cn *conn, t *server) {
	c := *cn
	c.st, c.srv = p.state.Load(), t
	key := statusKey(c.protocol)
	for _, addr := range t.pool.StatusOrder(p.now()) {
		if t.cache.skip(addr, p.now()) {
			continue // failed a status relay lately: not asked again until the ttl passes
		}
		_, err := p.status.queryStatus(&c, addr, key)
		t.cache.result(addr, err, p.now())
		if err != nil {
			p.log.Debug("queue: status of an address unknown", "server", t.id, "address", addr, "err", err)
		}
	}
}

// downStay holds a player whose server went down under them until it answers
// again (waking it when it is managed), then moves them back.
func (p *limbos) downStay(cn *conn, t *server) *session.Stay {
	if p.asleep(t) && t.cfg.HasLimbo(config.LimboWake) {
		return p.wakeStay(cn, t, t.id+" went down: restarting it")
	}
	return &session.Stay{
		Handler: "down",
		Message: func() limbo.Message {
			return title(t.id+" is not answering", "You will be moved back when it is up")
		},
		Until: func(ctx context.Context) (*session.Backend, error) {
			for {
				b, err := p.exitLimbo(cn, t, pass{}, false)
				var r *refusal
				switch {
				case err == nil:
					return b, nil
				case errors.As(err, &r) && r.hard():
					return nil, err // banned or filtered meanwhile: waiting changes nothing
				}
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(limboRetry):
				}
			}
		},
	}
}
