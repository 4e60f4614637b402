package session

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// The relay: one pump per side, parked on its socket while it is silent
// (the epoll sockets) and run where data comes.

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

func (p *backendPump) run(onLoop bool) (again bool) {
	gone, end := p.s.pumpBackend(p, onLoop)
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

// pumpClient relays the client's frames to the backend of the moment, keeps
// track of its protocol state, remembers its settings for the next backend and
// completes a switch when the client acknowledges it. It returns pumpParked
// when it parked (s.resume runs it again when bytes come), pumpOffLoop when
// what is left may wait (onLoop: it runs on the event loop) and pumpLeft once
// the client is gone (never on the loop).
func (s *Session) pumpClient(onLoop bool) pumpEnd {
	h := &s.fromLoop
	for budget := loopBudget; ; {
		h.flushOut()
		f, counted, b, err, ok := h.take()
		if !ok {
			s.mu.Lock()
			s.awaiting = true // and while parked: a poke's deadline runs s.resume
			s.mu.Unlock()
			if park(s.client.Conn, s.clientParker, s.resume) {
				return pumpParked
			}
			if onLoop {
				s.mu.Lock()
				// The limbo takes the client off the loop; so does a backend
				// every frame must be framed again for (CPU the loop leaves to others).
				if s.poked || s.limbo != nil || s.backend != nil && !s.backend.Conn.RelaysAsIs(s.client.Conn) {
					s.mu.Unlock()
					return pumpOffLoop
				}
				s.awaiting = false
				s.mu.Unlock()
				if budget <= 0 {
					return pumpOffLoop
				}
				if n, end := s.passClient(); n > 0 {
					if end != pumpNext {
						return end
					}
					budget -= n
					continue
				}
				var got bool
				if f, got, err = s.client.Conn.TryReadRelay(); err != nil {
					if !mc.IsEOF(err) && errors.Is(err, os.ErrDeadlineExceeded) {
						return pumpOffLoop // a poke came after the look above: readClient acts on it
					}
					return pumpLeft // the client is gone: the session ends here, on the loop
				}
				if !got {
					continue // parks, or reads what came meanwhile
				}
			} else if f, err = s.readClient(); err == errInLimbo {
				continue
			}
		}
		if err != nil {
			return pumpLeft
		}
		budget -= len(f.Bytes)
		var id int32
		if id, err = s.client.Conn.PeekID(f); err != nil {
			mc.Recycle(f)
			return pumpLeft
		}
		if !counted {
			var end pumpEnd
			if b, end = s.countClientFrame(f, id, onLoop); end != pumpNext {
				return end
			}
			if b == nil {
				continue // dropped, or between a switch's halves
			}
		}
		if !onLoop {
			if err := b.Conn.WriteRelay(f, s.client.Conn.FrameBuffered()); err != nil {
				b.Net.Close() // its pump reports the loss
			}
			mc.Recycle(f)
			continue
		}
		taken, held, err := b.Conn.TryWriteRelay(f, s.client.Conn.FrameBuffered())
		if !taken {
			h.hold(f, true, b)
			return pumpOffLoop
		}
		mc.Recycle(f)
		if err != nil {
			b.Net.Close()
		} else if held {
			h.flush, h.flushNet = b.Conn, b.Net
			return pumpOffLoop
		}
	}
}

// errInLimbo: the client's side came back from a stay in the limbo; read on.
var errInLimbo = errors.New("session: back from the limbo")

// readClient waits for the client's next frame, off the event loop; on the
// way a pending move into the limbo is made (errInLimbo once the player is
// back, another error once they are gone).
func (s *Session) readClient() (mc.RawFrame, error) {
	err := s.client.Conn.Await()
	s.mu.Lock()
	s.awaiting = false
	poked := s.poked
	s.poked = false
	s.mu.Unlock()
	if poked {
		_ = s.clientNet.SetReadDeadline(time.Time{})
	}
	if stay := s.takeLimbo(); stay != nil {
		// The server is gone and a handler holds the player in the limbo; the
		// limbo reads the client from here (and drops what was meant for the server).
		if err := s.stay(*stay); err != nil {
			if !errors.Is(err, limbo.ErrClientLeft) {
				s.Kick(err.Error())
			}
			return mc.RawFrame{}, err
		}
		return mc.RawFrame{}, errInLimbo
	}
	if err != nil {
		return mc.RawFrame{}, err
	}
	return s.client.Conn.ReadRelay()
}

// countClientFrame accounts for a client frame (its bytes, the stream's state,
// the client's settings, a switch's acknowledgement) and returns the backend
// it goes to: nil when it goes nowhere (a filter dropped it or wrote what it
// made of it, or a switch is between its halves). On the event loop, a frame
// that needs more than that is left untouched for the run off it (pumpOffLoop).
func (s *Session) countClientFrame(f mc.RawFrame, id int32, onLoop bool) (*Backend, pumpEnd) {
	reg := s.client.Registry
	s.mu.Lock()
	state := s.toServer
	t, known := reg.Type(state, mc.Serverbound, id)
	watched := s.watch.has(mc.Serverbound, state, id)
	if onLoop && (watched || known && state == mc.PlayState && t == mc.PacketConfigurationAck && s.pending != nil) {
		s.mu.Unlock()
		s.fromLoop.hold(f, false, nil)
		return nil, pumpOffLoop
	}
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
			return nil, pumpNext
		}
	}
	b := s.backend
	s.mu.Unlock()
	if b == nil {
		mc.Recycle(f)
		return nil, pumpNext // between a switch's halves: meant for the server being left
	}
	if !watched {
		return b, pumpNext
	}
	pk, drop := s.filter(s.client.Conn, f, mc.Serverbound, state, id, b)
	switch {
	case drop:
		mc.Recycle(f)
		if b.Conn.Flush() != nil {
			b.Net.Close()
		}
		return nil, pumpNext
	case pk != nil:
		err := b.Conn.WritePacket(id, pk.Payload)
		mc.Recycle(f)
		if err != nil {
			b.Net.Close()
		}
		return nil, pumpNext
	}
	return b, pumpNext
}

func (s *Session) isCurrent(b *Backend) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backend == b
}

// pumpBackend relays b's frames to the client until b is silent (it parks),
// ends or is left; on the event loop (onLoop) it stops at what may wait
// (pumpOffLoop), and a loss is reported only off it.
func (s *Session) pumpBackend(p *backendPump, onLoop bool) (gone Gone, end pumpEnd) {
	b, h := p.b, &p.fromLoop
	if onLoop && !s.client.Conn.RelaysAsIs(b.Conn) {
		return gone, pumpOffLoop // every frame is framed again: CPU the loop leaves to others
	}
	for budget := loopBudget; ; {
		h.flushOut()
		f, counted, _, err, ok := h.take()
		if !ok {
			if park(b.Conn, p.parker, p.resume) {
				return gone, pumpParked
			}
			if !onLoop {
				f, err = b.Conn.ReadRelay()
			} else if budget <= 0 {
				return gone, pumpOffLoop
			} else {
				if n, end := s.passBackend(p); n > 0 {
					if end != pumpNext {
						return gone, end
					}
					budget -= n
					continue
				}
				var got bool
				if f, got, err = b.Conn.TryReadRelay(); err == nil && !got {
					continue // parks, or reads what came meanwhile
				}
			}
			if err == nil {
				p.stall.frame()
			}
		}
		if err != nil {
			if onLoop {
				h.err = err
				return gone, pumpOffLoop
			}
			if !mc.IsEOF(err) {
				gone.Err = err
			}
			return gone, pumpLost
		}
		budget -= len(f.Bytes)
		if end = s.relayBackendFrame(p, f, counted, onLoop, &gone); end != pumpNext {
			return gone, end
		}
	}
}

// relayBackendFrame relays one frame of p's backend to the client: it tracks
// the stream's state and what the server creates on the client, sees a kick,
// answers plugin messages and runs filters (off the loop: on it, such a frame
// is held for the run off it, as is one that finds the client's side busy).
// counted: the frame was accounted for on the loop, only its write remains.
func (s *Session) relayBackendFrame(p *backendPump, f mc.RawFrame, counted, onLoop bool, gone *Gone) pumpEnd {
	b, reg := p.b, s.client.Registry
	id, err := b.Conn.PeekID(f)
	if err != nil {
		mc.Recycle(f)
		if onLoop {
			p.fromLoop.err = err
			return pumpOffLoop
		}
		gone.Err = err
		return pumpLost
	}
	// On the loop the writer is taken first (it is never waited for there): what is
	// accounted for below is then written before any switch can begin.
	if onLoop && !s.w.tryLock() {
		p.fromLoop.hold(f, counted, nil)
		return pumpOffLoop
	}
	var changed *Packet
	var tells []string
	if !counted {
		s.mu.Lock()
		if s.backend != b {
			s.mu.Unlock()
			if onLoop {
				s.w.Unlock()
			}
			mc.Recycle(f)
			return pumpLeft // left by a switch
		}
		state := s.toClient
		t, known := reg.Type(state, mc.Clientbound, id)
		watched := s.watch.has(mc.Clientbound, state, id)
		handled := known && (t == mc.PacketDisconnect || t == mc.PacketPluginMessage && s.wantsPlugin(b, f) ||
			t == mc.PacketJoinGame && state == mc.PlayState && len(s.tells) > 0)
		if onLoop && (watched || handled) {
			s.mu.Unlock()
			s.w.Unlock()
			p.fromLoop.hold(f, false, nil)
			return pumpOffLoop
		}
		if known && t == mc.PacketDisconnect {
			s.mu.Unlock()
			if full, err := b.Conn.Decode(f); err == nil {
				if d, err := mc.DecodeDisconnect(full.Payload, reg.Protocol(), state); err == nil {
					gone.Kick = d.Text()
				}
			}
			mc.Recycle(f)
			if gone.Kick == "" {
				gone.Kick = "Disconnected"
			}
			return pumpLost
		}
		if handled && t == mc.PacketPluginMessage {
			s.mu.Unlock()
			if full, err := b.Conn.Decode(f); err == nil {
				if m, err := mc.DecodePluginMessage(full.Payload, reg.Protocol()); err == nil && s.policy.PluginMessage(s, b, m.Channel, m.Data) {
					mc.Recycle(f)
					return pumpNext
				}
			}
			s.mu.Lock()
		}
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
		s.mu.Unlock()
		if watched {
			var drop bool
			if changed, drop = s.filter(b.Conn, f, mc.Clientbound, state, id, b); drop {
				mc.Recycle(f)
				if s.client.Conn.Flush() != nil {
					s.clientNet.Close()
					return pumpLeft
				}
				return pumpNext
			}
		}
	}
	if onLoop {
		taken, held, err := s.client.Conn.TryWriteRelay(f, b.Conn.FrameBuffered())
		s.w.Unlock()
		switch {
		case !taken:
			p.fromLoop.hold(f, true, nil)
			return pumpOffLoop
		case err != nil:
			mc.Recycle(f)
			s.clientNet.Close()
			return pumpLeft
		case held:
			mc.Recycle(f)
			p.fromLoop.flush, p.fromLoop.flushNet = s.client.Conn, s.clientNet
			return pumpOffLoop
		}
		mc.Recycle(f)
		return pumpNext
	}
	s.w.Lock()
	if !s.isCurrent(b) {
		s.w.Unlock()
		mc.Recycle(f)
		return pumpLeft // left by a switch meanwhile
	}
	if changed != nil {
		err = s.client.Conn.WritePacket(id, changed.Payload)
	} else {
		err = s.client.Conn.WriteRelay(f, b.Conn.FrameBuffered() || len(tells) > 0) // the tells flush the batch
	}
	for _, text := range tells {
		if err == nil {
			err = s.tellNow(text)
		}
	}
	s.w.Unlock()
	mc.Recycle(f)
	if err != nil {
		s.clientNet.Close()
		return pumpLeft
	}
	return pumpNext
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
