package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// Stay is a wait in the proxy's limbo, a void world the proxy hosts itself: the
// player stands there, reading Message, while Until works out where they go.
type Stay struct {
	World limbo.World
	// Message is polled every second for what the player reads (title, action bar).
	Message func() limbo.Message
	// Until runs while the player is held and returns the backend to move them to,
	// logged in; an error ends the session with its text. ctx ends when the
	// player leaves the limbo on their own.
	Until func(ctx context.Context) (*Backend, error)
	// Done, when set, runs once the player is out of the limbo: in the backend
	// Until gave, or gone. A queue keeps its head until then, so the next player
	// does not take the slot while this one is still on the way in.
	Done func()
}

// enterWait bounds the client's answers while it enters the limbo.
const enterWait = 10 * time.Second

// RunInLimbo is Run for a player who waits in the limbo before any backend (a
// server waking up, a queue): from the limbo they go to the backend Until
// gives, and the session goes on as Run's.
func (s *Session) RunInLimbo(stay Stay) (up, down int64) {
	err := s.stay(stay)
	if err == nil {
		s.pumpClient()
	} else if !errors.Is(err, limbo.ErrClientLeft) {
		s.Kick(err.Error())
	}
	return s.end()
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
// gives.
func (s *Session) stay(stay Stay) error {
	if stay.Done != nil {
		defer stay.Done()
	}
	b, err := s.hold(stay)
	if err != nil {
		return err
	}
	return s.leaveLimbo(b)
}

// hold puts the player in the limbo and keeps them there until stay.Until has
// a backend for them (returned) or fails, or the player leaves.
func (s *Session) hold(stay Stay) (*Backend, error) {
	s.cw.Lock()
	s.mu.Lock()
	old := s.backend
	s.backend = nil
	spawned := s.spawned
	state := s.toClient
	s.mu.Unlock()
	if old != nil {
		old.Net.Close()
	}
	p := &limbo.Player{Conn: s.client.Conn, Net: s.clientNet, Registry: s.client.Registry, State: state, Spawned: spawned}
	cleanup, _ := s.leftovers.Clear(s.client.Protocol)
	var err error
	if spawned && len(cleanup) > 0 {
		err = limbo.Send(p, cleanup...)
	}
	_ = s.clientNet.SetDeadline(time.Now().Add(enterWait))
	if err == nil {
		err = limbo.Enter(p, stay.World)
	}
	s.cw.Unlock()
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
	var next *Backend
	var untilErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		next, untilErr = stay.Until(ctx)
		release()
	}()
	err = limbo.Hold(hold, p, limbo.HoldOptions{Message: stay.Message})
	cancel() // the player left, or Until is done
	<-done
	s.mu.Lock()
	if p.ClientInformation != nil {
		s.clientInfo = append(s.clientInfo[:0], p.ClientInformation...)
	}
	s.spawned = true
	s.mu.Unlock()
	if err != nil {
		if next != nil {
			next.Net.Close()
			next.Release()
		}
		return nil, err
	}
	if untilErr != nil {
		return nil, untilErr
	}
	return next, nil
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
	reg := s.client.Registry
	_ = s.clientNet.SetDeadline(time.Now().Add(enterWait))
	defer s.clientNet.SetDeadline(time.Time{})
	s.mu.Lock()
	info := append([]byte(nil), s.clientInfo...)
	s.mu.Unlock()
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
