package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// Stay is a wait in the proxy's limbo, a void world the proxy hosts itself: the
// player stands there, reading Message, while Until works out where they go.
type Stay struct {
	// Handler names why the player is held (wake, queue, maintenance, down),
	// for Policy.Limbo; "" is not reported.
	Handler string
	World   limbo.World
	// Message is polled every second for what the player reads (title, action bar).
	Message func() limbo.Message
	// Commands, when set, are what the player may type while held (/login).
	Commands *limbo.Commands
	// Watch, when set, sees the client's packets of its types (verification).
	Watch *limbo.Watch
	// Until runs while the player is held and returns the backend to move them to,
	// logged in; an error ends the session with its text. ctx ends when the
	// player leaves the limbo on their own.
	Until func(ctx context.Context) (*Backend, error)
	// Ready, when set, is polled every readyPoll (on a timer: it must return at
	// once) and Until starts only once it reports true. A player who waits for
	// a cheap condition (maintenance to end, their turn in a queue) then holds
	// no goroutine of their own until it comes: thousands can wait.
	Ready func() bool
	// Done, when set, runs once the player is out of the limbo: in the backend
	// Until gave, or gone. A queue keeps its head until then, so the next player
	// does not take the slot while this one is still on the way in.
	Done func()
}

// Next, returned by a Stay's Until, hands the held player on to another stay
// without a backend in between: a login check passed and the server is asleep,
// in maintenance or full, so its wake, maintenance or queue stay takes over,
// as for any login. The first stay's Done runs and its commands go; the player
// is moved into the next stay's world.
type Next struct{ Stay Stay }

func (n *Next) Error() string { return "handed on to the " + n.Stay.Handler + " limbo" }

// enterWait bounds the client's answers while it enters the limbo.
const enterWait = 10 * time.Second

// readyPoll is how often Stay.Ready is asked.
const readyPoll = time.Second

// RunInLimbo is Run for a player who waits in the limbo before any backend (a
// server waking up, a queue): from the limbo they go to the backend Until
// gives, and the session goes on as Run's.
func (s *Session) RunInLimbo(stay Stay) (up, down int64) {
	return wait(func(done func(up, down int64)) { s.StartInLimbo(stay, done) })
}

// StartInLimbo is RunInLimbo without holding the caller once the player has
// left the limbo (the stay holds the calling goroutine): done gets the counts.
func (s *Session) StartInLimbo(stay Stay, done func(up, down int64)) {
	s.begin(done)
	err := s.stay(stay)
	if err == nil {
		s.relayClient()
		return
	}
	if !errors.Is(err, limbo.ErrClientLeft) {
		s.Kick(err.Error())
		s.drainClient()
	}
	s.end()
}

// ToLimbo moves a playing player into the limbo (their server went away and a
// handler will bring them back): the client's own goroutine makes the move at
// its next packet, so the limbo reads the client as the relay did.
func (s *Session) ToLimbo(stay Stay) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limbo = &stay
	if s.awaiting && !s.poked {
		// The client's goroutine waits for a frame that has not begun: wake it now
		// rather than at the client's next packet.
		s.poked = true
		_ = s.clientNet.SetReadDeadline(time.Now())
	}
}

func (s *Session) takeLimbo() *Stay {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.limbo
	s.limbo = nil
	return st
}

// stay holds the player in the limbo and moves them into the backend Until
// gives, through every stay an Until hands them on to (Next).
func (s *Session) stay(stay Stay) error {
	for {
		next, err := s.stayIn(stay)
		if next == nil {
			return err
		}
		stay = *next
	}
}

// stayIn is one stay: held until Until is done, then into its backend, or
// the stay it handed the player on to.
func (s *Session) stayIn(stay Stay) (*Stay, error) {
	if stay.Done != nil {
		defer stay.Done()
	}
	if report := s.policy.Limbo; report != nil && stay.Handler != "" {
		entered := time.Now()
		report(stay.Handler, true, 0)
		defer func() { report(stay.Handler, false, time.Since(entered)) }()
	}
	b, err := s.hold(stay)
	if next, ok := errors.AsType[*Next](err); ok {
		return &next.Stay, nil
	}
	if err != nil {
		return nil, err
	}
	return nil, s.leaveLimbo(b)
}

// hold puts the player in the limbo and keeps them there until stay.Until has
// a backend for them (returned) or fails, or the player leaves.
func (s *Session) hold(stay Stay) (*Backend, error) {
	s.w.Lock()
	s.mu.Lock()
	old := s.backend
	s.backend = nil
	s.held, s.joining = true, false
	spawned := s.spawned
	state := s.toClient
	s.mu.Unlock()
	if old != nil {
		old.Net.Close()
	}
	p := &limbo.Player{Conn: s.client.Conn, Net: s.clientNet, Writer: &s.w, Registry: s.client.Registry, State: state, Spawned: spawned}
	cleanup, _ := s.leftovers.Clear(s.client.Protocol)
	var err error
	if spawned && len(cleanup) > 0 {
		err = limbo.Send(p, cleanup...)
	}
	_ = s.clientNet.SetDeadline(time.Now().Add(enterWait))
	if err == nil {
		err = limbo.Enter(p, stay.World)
	}
	s.w.Unlock()
	if old != nil {
		old.Release()
	}
	if err != nil {
		return nil, fmt.Errorf("could not enter the waiting room: %w", err)
	}
	s.setState(p.State)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hold, release := context.WithCancel(ctx)
	// A failed Until ends the hold at once: the player is to be kicked, so no
	// keep-alive need bring his stream to a frame boundary first (a client that
	// answers nothing would hold its slot until that keep-alive's timeout).
	abort := func() { _ = s.clientNet.SetReadDeadline(time.Unix(1, 0)) }
	u := &untilRun{until: stay.Until, ctx: ctx, release: release, abort: abort, done: make(chan struct{})}
	if stay.Ready == nil {
		u.start()
	} else {
		u.poll(stay.Ready)
	}
	err = limbo.Hold(hold, p, limbo.HoldOptions{Message: stay.Message, Commands: stay.Commands, Watch: stay.Watch})
	cancel() // the player left, or Until is done
	next, untilErr := u.wait()
	s.mu.Lock()
	if p.ClientInformation != nil {
		s.clientInfo = append(s.clientInfo[:0], p.ClientInformation...)
	}
	s.spawned = true
	s.held = false
	s.mu.Unlock()
	// Until's error ends the hold, unless it hands the player on: then the
	// stay's commands go, as when the player leaves for a backend.
	if _, handover := errors.AsType[*Next](untilErr); untilErr != nil && !handover && !errors.Is(err, limbo.ErrClientLeft) {
		return nil, untilErr
	}
	if err != nil {
		if next != nil {
			next.Net.Close()
			next.Release()
		}
		return nil, err
	}
	s.w.Lock()
	err = limbo.Undeclare(p, stay.Commands)
	s.w.Unlock()
	if err != nil {
		if next != nil {
			next.Net.Close()
			next.Release()
		}
		return nil, err
	}
	return next, untilErr
}

// untilRun is a stay's Until, run in its own goroutine from the start or once
// Ready says so; wait ends the polling and collects Until's answer.
type untilRun struct {
	until   func(context.Context) (*Backend, error)
	ctx     context.Context
	release context.CancelFunc // ends the hold when Until is done
	abort   func()             // ends the hold at once when Until failed

	mu      sync.Mutex
	timer   *time.Timer
	started bool
	stopped bool
	done    chan struct{}
	next    *Backend
	err     error
}

// start runs Until unless it runs already or the hold is over.
func (u *untilRun) start() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.started || u.stopped {
		return
	}
	u.started = true
	go func() {
		defer close(u.done)
		u.next, u.err = u.until(u.ctx)
		if _, handover := errors.AsType[*Next](u.err); u.err != nil && !handover && u.ctx.Err() == nil {
			u.abort()
			return
		}
		u.release()
	}()
}

// poll asks ready now and every readyPoll, on a timer, and starts Until once
// it holds.
func (u *untilRun) poll(ready func() bool) {
	var check func()
	check = func() {
		if ready() {
			u.start()
			return
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		if !u.stopped {
			u.timer.Reset(readyPoll)
		}
	}
	u.mu.Lock()
	u.timer = time.AfterFunc(0, check)
	u.mu.Unlock()
}

// wait stops the polling and returns Until's answer; (nil, nil) when it never
// started (the hold ended first).
func (u *untilRun) wait() (*Backend, error) {
	u.mu.Lock()
	u.stopped = true
	if u.timer != nil {
		u.timer.Stop()
	}
	started := u.started
	u.mu.Unlock()
	if !started {
		return nil, nil
	}
	<-u.done
	return u.next, u.err
}

func (s *Session) setState(st mc.State) {
	s.mu.Lock()
	s.toClient, s.toServer = st, st
	s.mu.Unlock()
}

// leaveLimbo moves a held player into b: back through configuration for
// 1.20.2+ (b waits in configuration after its login), or b's join game turned
// into the world-reset sequence for older clients.
func (s *Session) leaveLimbo(b *Backend) error {
	p := &limbo.Player{Conn: s.client.Conn, Net: s.clientNet, Registry: s.client.Registry, State: mc.PlayState, Spawned: true}
	s.mu.Lock()
	info := append([]byte(nil), s.clientInfo...)
	s.mu.Unlock()
	if err := s.reenter(p, b, info); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		b.Net.Close()
		b.Release()
		return limbo.ErrClientLeft
	}
	s.backend = b
	s.mu.Unlock()
	s.startPump(b)
	if s.policy.Moved != nil {
		s.policy.Moved(s, nil, b)
	}
	return nil
}

// reenter writes what takes the client from the limbo's world into b's. The
// writer is held the whole way: the client's world changes under these writes,
// so no line may come between them.
func (s *Session) reenter(p *limbo.Player, b *Backend, info []byte) error {
	reg := s.client.Registry
	s.w.Lock()
	defer s.w.Unlock()
	_ = s.clientNet.SetDeadline(time.Now().Add(enterWait))
	defer s.clientNet.SetDeadline(time.Time{})
	if s.client.Protocol.AtLeast(mc.V1_20_2) {
		if err := limbo.StartConfiguration(p); err != nil {
			b.Net.Close()
			b.Release()
			return err
		}
		s.setState(mc.ConfigState)
		if len(info) > 0 {
			id, _ := reg.ID(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation)
			_ = b.Conn.WritePacket(id, info)
		}
	} else {
		_ = b.Net.SetReadDeadline(time.Now().Add(enterWait))
		jg, _, early, err := readJoinGame(b, reg)
		_ = b.Net.SetReadDeadline(time.Time{})
		if err == nil {
			err = limbo.Rejoin(p, jg)
		}
		for _, f := range early {
			if err == nil {
				err = s.client.Conn.WriteRaw(f)
			}
		}
		if err != nil {
			b.Net.Close()
			b.Release()
			return err
		}
		if len(info) > 0 {
			id, _ := reg.ID(mc.PlayState, mc.Serverbound, mc.PacketClientInformation)
			_ = b.Conn.WritePacket(id, info)
		}
	}
	return nil
}
