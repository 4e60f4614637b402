package proxy

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/passes"
	"github.com/infrarust-go/infrarust/internal/proxy/ratelimit"
)

// Bot verification (limbo_handlers = ["verify"], [verify]): a first-time
// player is put a few blocks above a platform in the limbo and must fall onto
// it under vanilla gravity (limbo.FallCheck) before anything else of the
// server; a pass is remembered per name and address for [verify] ttl. In
// "attack" mode (the default) checks only happen while logins come faster
// than attack_threshold, so normal days cost players nothing.

// verifier is the proxy's verification state: who passed, the login rate,
// whether attack mode is on, how many checks run.
type verifier struct {
	mu      sync.Mutex
	passed  expiringSet // playerAt keys, until the end of the pass
	second  int64       // the unix second counted
	count   int         // logins in that second
	prev    int         // logins in the second before it
	attack  bool
	calmEnd time.Time     // attack mode ends then unless logins rise again
	slots   chan struct{} // one per running check, max_concurrent of them
}

const verifiedMax = 200_000

// login counts a login to a "verify" server and updates attack mode; it
// reports whether attack mode is on, whether it just changed, and whether
// logins come faster than the watermark (rising): the logins of the second
// in which a flood crosses attack_threshold are checked too.
func (v *verifier) login(now time.Time, cfg config.Verify) (attack, changed, rising bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rollLocked(now)
	v.count++
	was := v.attack
	switch {
	case v.count > cfg.AttackThreshold:
		v.attack, v.calmEnd = true, now.Add(cfg.CalmPeriod.D())
	case v.attack && now.After(v.calmEnd):
		v.attack = false
	}
	return v.attack, v.attack != was, max(v.count, v.prev) > watermark(cfg)
}

// rollLocked moves the count to now's second: the second just before it
// counts toward the rate as prev, an older one not at all.
func (v *verifier) rollLocked(now time.Time) {
	if s := now.Unix(); s != v.second {
		v.prev = 0
		if s == v.second+1 {
			v.prev = v.count
		}
		v.second, v.count = s, 0
	}
}

// rising reports whether the logins of the second now falls in (or of the
// one before) pass the watermark.
func (v *verifier) rising(now time.Time, cfg config.Verify) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rollLocked(now)
	return max(v.count, v.prev) > watermark(cfg)
}

// windowWait is how long past the end of its second a first-time login waits
// to be counted with the logins that come right behind it.
const windowWait = 50 * time.Millisecond

// waitWindow waits until the measuring window of now is over (the end of its
// second, and windowWait), or ctx ends.
func (v *verifier) waitWindow(now time.Time, ctx context.Context) {
	end := now.Truncate(time.Second).Add(time.Second + windowWait)
	t := time.NewTimer(end.Sub(now))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// watermark is the login rate (per second) above which attack mode checks a
// login that was never verified even before the rate reaches
// attack_threshold: a quarter of it. A flood rises through it before it
// crosses the threshold, so none of its logins reach a backend unchecked.
func watermark(cfg config.Verify) int { return max(1, cfg.AttackThreshold/4) }

// attacking reports whether attack mode is on.
func (v *verifier) attacking() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.attack
}

// calm ends attack mode once its calm period is over without a login
// (a login ends it too); it reports whether it did.
func (v *verifier) calm(now time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.attack && now.After(v.calmEnd) {
		v.attack = false
		return true
	}
	return false
}

// attackChanged logs and counts a change of attack mode.
func (p *checks) attackChanged(on bool) {
	p.met.VerifyAttack(on)
	p.bus.Publish(events.VerifyAttackMode, events.AttackMode{On: on})
	if on {
		p.log.Warn("bot verification: attack mode ON: logins come faster than attack_threshold; first-time players are verified")
	} else {
		p.log.Warn("bot verification: attack mode OFF: logins stayed under attack_threshold for calm_period")
	}
}

// acquire takes a check's slot, waiting up to wait for one while
// max_concurrent run (the flood's logins queue, bounded); release gives it
// back. ok is false when none came free in time.
func (v *verifier) acquire(max int, wait time.Duration) (release func(), ok bool) {
	v.mu.Lock()
	if v.slots == nil || cap(v.slots) != max {
		v.slots = make(chan struct{}, max) // a reload's new bound; running checks free the old
	}
	slots := v.slots
	v.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, true
	case <-t.C:
		return nil, false
	}
}

// openPasses opens the store of passes the first time a configuration has a
// "verify" server; one that cannot be opened leaves the passes in memory (a
// lost pass costs a player a second check, never a way in).
func (p *checks) openPasses(cfg *config.Config) {
	if p.opts.OpenPasses == nil || !slices.ContainsFunc(cfg.Servers, func(s *config.Server) bool { return s.HasLimbo(config.LimboVerify) }) {
		return
	}
	p.accountsMu.Lock()
	defer p.accountsMu.Unlock()
	if p.passesOpen {
		return
	}
	p.passesOpen = true
	s, err := p.opts.OpenPasses()
	if err != nil {
		p.log.Warn("bot verification: passes are kept in memory only (a restart forgets them)", "err", err)
		return
	}
	p.passes = s
}

func (p *checks) passStore() passes.Store {
	p.accountsMu.Lock()
	defer p.accountsMu.Unlock()
	return p.passes
}

// passLookup bounds a login's read of the store of passes.
const passLookup = time.Second

// passedBefore reports a pass of the player of cn kept beyond this proxy's
// memory (an earlier run, another proxy of the fleet), and remembers it here.
func (p *checks) passedBefore(cn *conn, now time.Time) bool {
	s := p.passStore()
	if s == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), passLookup)
	defer cancel()
	until, ok, err := s.Passed(ctx, cn.player, cn.ip.String(), now)
	if err != nil {
		p.log.Debug("bot verification: the store of passes did not answer; the player is checked", "player", cn.player, "err", err)
		return false
	}
	if ok {
		p.verify.passed.add(playerAt(cn.player, cn.ip), until)
	}
	return ok
}

// keepPass stores a pass beyond memory.
func (p *checks) keepPass(cn *conn, until time.Time) {
	s := p.passStore()
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*passLookup)
	defer cancel()
	if err := s.Pass(ctx, cn.player, cn.ip.String(), until); err != nil {
		p.log.Warn("bot verification: a pass was not stored beyond this proxy's memory", "player", cn.player, "err", err)
	}
}

// ForgetVerified drops the verification passes of a name (from any address)
// or of an address (for any name), in memory and in the store: that player is
// checked again at his next login. It reports how many the store held.
func (p *Proxy) ForgetVerified(ctx context.Context, nameOrIP string) (int, error) {
	ip, err := netip.ParseAddr(nameOrIP)
	isIP := err == nil
	p.checks.verify.passed.forget(func(key string) bool {
		name, addr, _ := strings.Cut(key, "|")
		return (isIP && addr == ip.String()) || (!isIP && name == strings.ToLower(nameOrIP))
	})
	s := p.checks.passStore()
	if s == nil {
		return 0, nil
	}
	if isIP {
		nameOrIP = ip.String() // as the passes were kept: 2001:DB8::7 is 2001:db8::7
	}
	return s.Forget(ctx, nameOrIP)
}

// verifyQueueWait is how long a login waits for a free check before it is
// refused as busy: within a player's patience, and a slot frees every few
// seconds per check (an idle bot is out at firstMoveWait).
const verifyQueueWait = 10 * time.Second

// The check's deadlines: each answer of a real client comes within a moment,
// so a client that stops answering fails at the first one it misses, and its
// check's slot is free at once (never only at [verify] timeout).
const (
	// firstMoveWait is how long a client may send no movement at all: a real
	// client starts falling within a moment of getting the world.
	firstMoveWait = 5 * time.Second
	// moveGap is how long a client may go silent once it moves: vanilla sends
	// a position every tick while it falls, and at least once a second.
	moveGap = 2 * time.Second
	// verdictWait is how long after its first movement a client has to land
	// and answer the keep-alive: a fall of MaxFallHeight takes about 1.3 s.
	verdictWait = 5 * time.Second
	// verifyMinFall is the lowest a player is put above the platform.
	verifyMinFall = 6
)

// needsVerify decides whether this entry to target is checked: a player who
// passed the check in this session, or whose pass is remembered, is not. A
// login counts toward attack mode; a move does not (it is no new arrival).
// A non-nil release holds a check's slot, to call once the check is over.
// An error refuses the entry: no check came free in time, or the client's
// version has no ground to fall on while checks are on.
func (p *checks) needsVerify(cn *conn, target *server, login bool) (release func(), err error) {
	st := p.state.Load()
	cfg, msgs := st.cfg.Verify, st.cfg.Messages
	if !target.cfg.HasLimbo(config.LimboVerify) || cfg.Mode == config.VerifyOff || cn.proven().verified {
		return nil, nil
	}
	now := p.now()
	var attack bool
	if login {
		var changed, rising bool
		if attack, changed, rising = p.verify.login(now, cfg); changed {
			p.attackChanged(attack)
		}
		attack = attack || rising
	} else {
		attack = p.verify.attacking()
	}
	if p.verify.passed.has(playerAt(cn.player, cn.ip), now) || p.passedBefore(cn, now) {
		_ = p.prove(cn, func(pr *proof) { pr.verified = true })
		return nil, nil
	}
	if cfg.Mode == config.VerifyAttack && !attack && login {
		// A first-time player under the watermark waits for the measuring
		// window's end (at most a second, at the login screen): the first
		// logins of a flood are counted with the ones right behind them.
		p.verify.waitWindow(now, p.ctx)
		attack = p.verify.attacking() || p.verify.rising(p.now(), cfg)
	}
	if cfg.Mode == config.VerifyAttack && !attack {
		return nil, nil
	}
	if !limbo.GroundCovers(mc.Protocol(cn.protocol)) || !limboCovers(cn.protocol) {
		p.met.Verify("refused", "version")
		return nil, errors.New(msgs.VerifyVersion)
	}
	release, ok := p.verify.acquire(cfg.MaxConcurrent, verifyQueueWait)
	if !ok {
		p.met.Verify("refused", "busy")
		return nil, errors.New(msgs.VerifyBusy)
	}
	return release, nil
}

// runVerify waits for the check's verdict, each step within its deadline
// (firstMoveWait, moveGap, verdictWait, and [verify] timeout overall); a pass
// is remembered, a failure costs the address fail_penalty login tokens.
func (p *checks) runVerify(ctx context.Context, cn *conn, check *limbo.FallCheck) error {
	st := p.state.Load()
	cfg := st.cfg.Verify
	overall := time.NewTimer(cfg.Timeout.D())
	defer overall.Stop()
	step := time.NewTimer(firstMoveWait)
	defer step.Stop()
	var verdict <-chan time.Time
	var err error
wait:
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-check.Done():
			err = check.Result()
			break wait
		case <-check.Progress():
			if verdict == nil {
				t := time.NewTimer(verdictWait)
				defer t.Stop()
				verdict = t.C
			}
			step.Reset(moveGap)
		case <-step.C:
			err = errDidNotMove
			if verdict != nil {
				err = errStoppedMoving
			}
			break wait
		case <-verdict:
			err = errDidNotFall
			break wait
		case <-overall.C:
			err = errDidNotFall
			break wait
		}
	}
	if err == nil {
		until := p.now().Add(cfg.TTL.D())
		p.verify.passed.add(playerAt(cn.player, cn.ip), until)
		p.keepPass(cn, until)
		_ = p.prove(cn, func(pr *proof) { pr.verified = true })
		p.met.Verify("passed", "")
		p.bus.Publish(events.PlayerVerify, events.Verify{Username: cn.player, Server: cn.srv.id, Passed: true})
		p.log.Info("bot verification passed", "player", cn.player, "client", cn.client)
		return nil
	}
	reason := verifyReason(err)
	p.met.Verify("failed", reason)
	p.bus.Publish(events.PlayerVerify, events.Verify{Username: cn.player, Server: cn.srv.id, Reason: reason})
	p.log.Info("bot verification failed", "player", cn.player, "client", cn.client, "reason", reason, "err", err)
	for range cfg.FailPenalty {
		p.limiter.Allow(cn.ip, ratelimit.Login, p.now())
	}
	return errors.New(fill(st.cfg.Messages.VerifyFailed, "reason", err.Error()))
}

// errDidNotFall: no verdict within the timeout; errDidNotMove: no movement
// at all within firstMoveWait (a client that never moves).
var (
	errDidNotFall    = errors.New("did not fall onto the platform in time")
	errDidNotMove    = errors.New("did not move")
	errStoppedMoving = errors.New("stopped moving")
)

// verifyReason is the metric label of a failure.
func verifyReason(err error) string {
	switch {
	case errors.Is(err, errDidNotMove):
		return "no_move"
	case errors.Is(err, errStoppedMoving):
		return "stalled"
	case errors.Is(err, errDidNotFall):
		return "timeout"
	case errors.Is(err, limbo.ErrTooFast):
		return "pace"
	case errors.Is(err, limbo.ErrWrongTeleport):
		return "teleport"
	case errors.Is(err, limbo.ErrNoTeleportConfirm):
		return "no_teleport_confirm"
	case errors.Is(err, limbo.ErrNotFalling):
		return "not_falling"
	case errors.Is(err, limbo.ErrLandedWrong):
		return "landing"
	case errors.Is(err, limbo.ErrTooManyMoves):
		return "flood"
	case errors.Is(err, limbo.ErrNoSettings):
		return "no_settings"
	case errors.Is(err, limbo.ErrNoBrand):
		return "no_brand"
	}
	return "protocol"
}
