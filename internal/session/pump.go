package session

import (
	"errors"
	"fmt"
	"os"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// The relay: one pump per side, parked on its socket while it is silent
// (the epoll sockets) and run where data comes. A pump's run is one of two
// kinds: on the event loop (loop.go), where nothing may wait, so whatever
// might is handed to the other kind; or on a goroutine of its own
// (offloop.go), where anything may. What both do to a frame (its accounting,
// the stream's state, what the server creates on the client) is here.

// startPump starts relaying backend b to the client: a backendPump.
func (s *Session) startPump(b *Backend) {
	s.live.Add(1)
	p := &b.pump
	*p = backendPump{s: s, b: b}
	p.resume = p.run // one closure for every park
	p.parker, _ = b.Net.(Parker)
	if s.policy.StallTimeout > 0 {
		p.stall.watch(b.Net, s.policy.StallTimeout)
	}
	// A backend that has sent nothing yet (the usual case: it has just been
	// logged in) parks at once, without a goroutine started for one empty read.
	if park(b.Conn, p.parker, p.resume) {
		return
	}
	go p.run(false)
}

// backendPump relays one backend's frames to the client. While the backend is
// silent it holds no goroutine: it parks on the connection (park) and
// run starts again when bytes arrive, on the event loop when it is free. The
// client's side does the same (relayClient), so a held player costs no goroutine.
type backendPump struct {
	s        *Session
	b        *Backend
	stall    stallWatch // idle unless the policy has a StallTimeout
	resume   Resume
	parker   Parker // the backend's socket, when it can park its reader
	fromLoop handOff
}

// How one run of a pump ended.
type pumpEnd int

const (
	pumpNext    pumpEnd = iota // a frame was relayed: read on
	pumpParked                 // the peer is silent: the run is called again
	pumpOffLoop                // the rest may wait: the run is called again off the event loop
	pumpLeft                   // the session left the backend (a switch, the client's end)
	pumpLost                   // the backend ended: the loss is reported
)

// run is the backend pump's Resume: a run of the kind the socket asks for.
func (p *backendPump) run(onLoop bool) (again bool) {
	var gone Gone
	var end pumpEnd
	if onLoop {
		end = p.s.backendOnLoop(p)
	} else {
		gone, end = p.s.backendOffLoop(p)
	}
	switch end {
	case pumpParked:
		return false
	case pumpOffLoop:
		return true
	}
	if end == pumpLost {
		p.stall.stop()
		p.s.lost(p.b, gone) // off the loop: a read error or a kick is handed off
		p.s.sideDone()
		return false
	}
	p.finish()
	return false
}

// finish ends a pump that left its backend (or whose parked run the session's
// end took back: unpark): nothing is read or reported any more.
func (p *backendPump) finish() {
	p.stall.stop()
	p.s.sideDone()
}

// pumpClient is one run of the client's side, of the kind the socket asks
// for: it returns pumpParked when it parked (s.resume runs it again when bytes
// come), pumpOffLoop when what is left may wait, and pumpLeft once the client
// is gone.
func (s *Session) pumpClient(onLoop bool) pumpEnd {
	if onLoop {
		return s.clientOnLoop()
	}
	return s.clientOffLoop()
}

// awaitClient notes that the client's side waits for the start of a frame,
// where a deadline may interrupt it without losing data (and while parked: a
// poke's deadline runs s.resume).
func (s *Session) awaitClient() {
	s.mu.Lock()
	s.awaiting = true
	s.mu.Unlock()
}

// clientFrameWaits reports that a client frame must be handled off the event
// loop: a filter watches it, or it is the acknowledgement that completes a
// switch (the new backend is written to). The caller holds mu.
func (s *Session) clientFrameWaits(state mc.State, id int32) bool {
	if s.watch.has(mc.Serverbound, state, id) {
		return true
	}
	t, known := s.client.Registry.Type(state, mc.Serverbound, id)
	return known && state == mc.PlayState && t == mc.PacketConfigurationAck && s.pending != nil
}

// countClientFrame accounts for a client frame (its bytes, the stream's
// state, the client's settings, a switch's acknowledgement), with mu held
// and released, and returns the backend it goes to: nil when it goes nowhere
// (a filter dropped it or wrote what it made of it, or a switch is between
// its halves). A frame clientFrameWaits names is for a run off the loop.
func (s *Session) countClientFrame(f mc.RawFrame, id int32) *Backend {
	reg := s.client.Registry
	state := s.toServer
	t, known := reg.Type(state, mc.Serverbound, id)
	watched := s.watch.has(mc.Serverbound, state, id)
	s.up += int64(len(f.Bytes))
	switch {
	case known && t == mc.PacketClientInformation:
		if full, err := s.client.Conn.Decode(f); err == nil {
			s.clientInfo = append(s.clientInfo[:0], full.Payload...)
		}
	case known && state == mc.ConfigState && t == mc.PacketFinishConfiguration:
		s.toServer = mc.PlayState
	case known && state == mc.PlayState && t == mc.PacketConfigurationAck:
		s.toServer = mc.ConfigState
		if next := s.pending; next != nil {
			// The client is in configuration: the new backend takes over. The ack
			// was for the proxy; the new backend is in configuration already.
			s.pending, s.backend = nil, next
			info, attached := s.clientInfo, s.attached
			s.mu.Unlock()
			if info != nil {
				id, _ := reg.ID(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation)
				_ = next.Conn.WritePacket(id, info)
			}
			s.startPump(next)
			close(attached)
			mc.Recycle(f)
			return nil
		}
	}
	b := s.backend
	s.mu.Unlock()
	if b == nil {
		mc.Recycle(f)
		return nil // between a switch's halves: meant for the server being left
	}
	if !watched {
		return b
	}
	pk, drop := s.filter(s.client.Conn, f, mc.Serverbound, state, id, b)
	switch {
	case drop:
		mc.Recycle(f)
		if b.Conn.Flush() != nil {
			b.Net.Close()
		}
		return nil
	case pk != nil:
		err := b.Conn.WritePacket(id, pk.Payload)
		mc.Recycle(f)
		if err != nil {
			b.Net.Close()
		}
		return nil
	}
	return b
}

func (s *Session) isCurrent(b *Backend) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backend == b
}

// backendFrameWaits reports that a frame of b must be handled off the event
// loop: a kick, a plugin message the policy answers, a join game the held
// chat lines follow, or one a filter watches. The caller holds mu.
func (s *Session) backendFrameWaits(b *Backend, f mc.RawFrame, state mc.State, t mc.PacketType, known, watched bool) bool {
	return watched || known && (t == mc.PacketDisconnect || t == mc.PacketPluginMessage && s.wantsPlugin(b, f) ||
		t == mc.PacketJoinGame && state == mc.PlayState && len(s.tells) > 0)
}

// trackClientbound follows what a frame of b does to the client's stream: its
// state, its world, and what the server created on it that a move must undo;
// it returns the chat lines held for the new world (written after the frame).
// The caller holds mu.
func (s *Session) trackClientbound(b *Backend, f mc.RawFrame, state mc.State, t mc.PacketType, known bool) (tells []string) {
	reg := s.client.Registry
	switch {
	case known && state == mc.ConfigState && t == mc.PacketFinishConfiguration:
		s.toClient = mc.PlayState
		s.spawned = true
		s.joining = true
		b.Conn.ShareHeads(false)
	case known && state == mc.PlayState && t == mc.PacketJoinGame:
		s.joining = false
		tells, s.tells = s.tells, nil // written after this frame, in the new world
	case known && state == mc.PlayState && t == mc.PacketStartConfiguration:
		s.toClient = mc.ConfigState
		b.Conn.ShareHeads(true)
	case known && state == mc.PlayState && limbo.Tracks(t):
		if full, err := b.Conn.Decode(f); err == nil {
			_ = s.leftovers.Observe(reg.Protocol(), t, full.Payload)
		}
	}
	s.down += int64(len(f.Bytes))
	return tells
}

// wantsPlugin says whether policy.PluginMessage is to see plugin message f
// from b: a channel PluginChannels names, or one too long to peek at.
func (s *Session) wantsPlugin(b *Backend, f mc.RawFrame) bool {
	if s.policy.PluginMessage == nil {
		return false
	}
	if s.policy.PluginChannels == nil {
		return true
	}
	channel, ok, err := b.Conn.PeekString(f)
	return err != nil || !ok || s.policy.PluginChannels(channel)
}

// lost reports that backend b ended to the policy, unless the session already
// left it; without a move the player is kicked with the reason.
func (s *Session) lost(b *Backend, gone Gone) {
	s.mu.Lock()
	current := s.backend == b && !s.closed
	s.mu.Unlock()
	if !current {
		return
	}
	b.Net.Close()
	if errors.Is(gone.Err, os.ErrDeadlineExceeded) {
		gone.Err = fmt.Errorf("nothing received for %s: %w", s.policy.StallTimeout, gone.Err)
	}
	if s.policy.Lost != nil && s.policy.Lost(s, b, gone) == nil {
		return
	}
	s.Kick(gone.Reason())
}
