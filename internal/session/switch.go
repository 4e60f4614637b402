package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// Moving a player to another backend: through the configuration phase
// (1.20.2+), or by a rejoin the client takes for a respawn before it.

// Switch moves the player to next, a backend the caller has logged in (its
// login acknowledged, so it waits in its configuration state): the current
// backend is left, the client is sent back to its configuration phase, and once
// it acknowledges, next gets the client's settings and takes over. It returns
// when next serves the player or the client failed to acknowledge within wait;
// next is released on failure.
func (s *Session) Switch(next *Backend, wait time.Duration) error {
	if !s.client.Protocol.AtLeast(mc.V1_20_2) {
		return s.switchByRejoin(next, wait)
	}
	s.w.Lock()
	s.mu.Lock()
	if s.closed || s.pending != nil || s.toClient != mc.PlayState || s.toServer != mc.PlayState {
		closed := s.closed
		s.mu.Unlock()
		s.w.Unlock()
		next.Net.Close()
		next.Release()
		if closed {
			return errors.New("the player left")
		}
		return ErrNotPlaying
	}
	old := s.backend
	s.backend, s.pending = nil, next
	s.attached = make(chan struct{})
	attached, done := s.attached, s.doneLocked()
	// The client's stream turns to configuration now: what the old server still
	// sends is dropped (its pump ends when its connection is closed below).
	s.toClient = mc.ConfigState
	cleanup, _ := s.leftovers.Clear(s.client.Protocol)
	s.mu.Unlock()
	if old != nil {
		old.Net.Close()
	}
	// What the old server showed goes first (boss bars, tab list, scoreboards and
	// titles outlive the configuration phase), then back to configuration.
	cleanup = append(cleanup, mc.Packet{Type: mc.PacketStartConfiguration})
	err := s.sendClient(mc.PlayState, cleanup)
	s.w.Unlock() // the client's acknowledgement is read by the client pump
	if err != nil {
		s.failSwitch(next)
		return fmt.Errorf("the client went away: %w", err)
	}
	select {
	case <-attached:
	case <-done:
		s.failSwitch(next)
		return errors.New("the player left")
	case <-time.After(wait):
		s.failSwitch(next)
		s.Kick("Timed out while moving you to another server")
		return errors.New("the client did not acknowledge the move")
	}
	if old != nil {
		old.Release()
	}
	if s.policy.Moved != nil {
		s.policy.Moved(s, old, next)
	}
	return nil
}

// switchByRejoin moves a pre-1.20.2 player: the client has no configuration
// phase, so the new backend's join game is rewritten into the sequence that
// resets a client's world (a dimension flip before 1.16), after what the old
// server created has been removed.
func (s *Session) switchByRejoin(next *Backend, wait time.Duration) error {
	_ = next.Net.SetReadDeadline(time.Now().Add(wait))
	jg, raw, early, err := readJoinGame(next, s.client.Registry)
	if err != nil {
		next.Net.Close()
		next.Release()
		return fmt.Errorf("the new server's join game: %w", err)
	}
	_ = next.Net.SetReadDeadline(time.Time{})
	// From 1.16 the switch sequence's join game is the backend's own, unchanged
	// (mc.JoinGame.SwitchSequence): it goes to the client as the backend sent it,
	// so its registry codec (~40 KB) is not encoded again and, when both sides
	// compress at the same threshold, not deflated again either; only the
	// respawn after it is the proxy's.
	relayJoin := s.client.Protocol.AtLeast(mc.V1_16)
	var seq []mc.Packet
	if relayJoin {
		var rp []byte
		rp, err = jg.Respawn().AppendPayload(nil, s.client.Protocol)
		seq = []mc.Packet{{Type: mc.PacketRespawn, Payload: rp}}
	} else {
		seq, err = jg.SwitchSequence(s.client.Protocol)
	}
	if err != nil {
		next.Net.Close()
		next.Release()
		return err
	}
	s.w.Lock()
	s.mu.Lock()
	if s.closed || s.pending != nil || s.toClient != mc.PlayState {
		closed := s.closed
		s.mu.Unlock()
		s.w.Unlock()
		next.Net.Close()
		next.Release()
		if closed {
			return errors.New("the player left")
		}
		return ErrNotPlaying
	}
	old := s.backend
	s.backend = next
	cleanup, _ := s.leftovers.Clear(s.client.Protocol)
	info := s.clientInfo
	s.mu.Unlock()
	if old != nil {
		old.Net.Close()
	}
	if relayJoin {
		if len(cleanup) > 0 {
			err = s.sendClient(mc.PlayState, cleanup)
		}
		if err == nil {
			// Batched with the respawn into one write when no re-framing is needed.
			err = s.client.Conn.WriteRelay(raw, true)
		}
		if err == nil {
			err = s.sendClient(mc.PlayState, seq)
		}
	} else {
		err = s.sendClient(mc.PlayState, append(cleanup, seq...))
	}
	for _, f := range early {
		if err == nil {
			err = s.client.Conn.WriteRaw(f)
		}
	}
	s.w.Unlock()
	if err != nil {
		return fmt.Errorf("the client went away: %w", err)
	}
	if info != nil {
		id, _ := s.client.Registry.ID(mc.PlayState, mc.Serverbound, mc.PacketClientInformation)
		_ = next.Conn.WritePacket(id, info)
	}
	s.startPump(next)
	if old != nil {
		old.Release()
	}
	if s.policy.Moved != nil {
		s.policy.Moved(s, old, next)
	}
	return nil
}

// maxBeforeJoin bounds the packets a backend may send before its join game.
const maxBeforeJoin = 64

// readJoinGame reads a backend's first play packets up to its join game, which
// it returns decoded and as it came (raw); the packets before it (a server's
// plugin channel registrations) are returned to be relayed after the join
// sequence.
func readJoinGame(b *Backend, reg *mc.Registry) (jg mc.JoinGame, raw mc.RawFrame, early []mc.RawFrame, err error) {
	for range maxBeforeJoin {
		f, err := b.Conn.ReadRaw()
		if err != nil {
			return mc.JoinGame{}, mc.RawFrame{}, nil, err
		}
		// Decoded whole rather than peeked: the join game, usually the first,
		// is decoded anyway, and a peek inflates up to 32 KiB of it as well.
		full, err := b.Conn.Decode(f)
		if err != nil {
			return mc.JoinGame{}, mc.RawFrame{}, nil, err
		}
		if t, _ := reg.Type(mc.PlayState, mc.Clientbound, full.ID); t != mc.PacketJoinGame {
			early = append(early, f)
			continue
		}
		jg, err := mc.DecodeJoinGame(full.Payload, reg.Protocol())
		return jg, f, early, err
	}
	return mc.JoinGame{}, mc.RawFrame{}, nil, fmt.Errorf("no join game among its first %d packets", maxBeforeJoin)
}

func (s *Session) failSwitch(next *Backend) {
	s.mu.Lock()
	if s.pending == next {
		s.pending = nil
	}
	s.mu.Unlock()
	next.Net.Close()
	next.Release()
}
