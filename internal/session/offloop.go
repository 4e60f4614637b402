package session

import (
	"errors"
	"time"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// The pumps' runs on a goroutine of their own, where anything may wait: the
// frames the event loop handed off (loop.go), kicks, plugin messages,
// filters, a switch's acknowledgement, the limbo, and the relay's
// back-pressure (a blocking write under the writer's deadline).

// clientOffLoop relays the client's frames to the backend of the moment
// until the client parks or is gone.
func (s *Session) clientOffLoop() pumpEnd {
	h := &s.fromLoop
	for {
		h.flushOut()
		f, counted, b, err, ok := h.take()
		if !ok {
			s.awaitClient()
			if park(s.client.Conn, s.clientParker, s.resume) {
				return pumpParked
			}
			if f, err = s.readClient(); err == errInLimbo {
				continue
			}
		}
		if err != nil {
			return pumpLeft
		}
		id, err := s.client.Conn.PeekID(f)
		if err != nil {
			mc.Recycle(f)
			return pumpLeft
		}
		if !counted {
			s.mu.Lock()
			if b = s.countClientFrame(f, id); b == nil {
				continue // dropped, or between a switch's halves
			}
		}
		if err := b.Conn.WriteRelay(f, s.client.Conn.FrameBuffered()); err != nil {
			b.Net.Close() // its pump reports the loss
		}
		mc.Recycle(f)
	}
}

// errInLimbo: the client's side came back from a stay in the limbo; read on.
var errInLimbo = errors.New("session: back from the limbo")

// readClient waits for the client's next frame; on the way a pending move
// into the limbo is made (errInLimbo once the player is back, another error
// once they are gone).
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
				s.drainClient()
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

// backendOffLoop relays p's backend's frames to the client until it parks,
// ends (pumpLost, with why in gone) or is left.
func (s *Session) backendOffLoop(p *backendPump) (gone Gone, end pumpEnd) {
	b, h := p.b, &p.fromLoop
	for {
		h.flushOut()
		f, counted, _, err, ok := h.take()
		if !ok {
			if park(b.Conn, p.parker, p.resume) {
				return gone, pumpParked
			}
			if f, err = b.Conn.ReadRelay(); err == nil {
				p.stall.frame()
			}
		}
		if err != nil {
			if !mc.IsEOF(err) {
				gone.Err = err
			}
			return gone, pumpLost
		}
		if end = s.relayOffLoop(p, f, counted, &gone); end != pumpNext {
			return gone, end
		}
	}
}

// relayOffLoop relays one frame of p's backend to the client: it tracks the
// stream's state and what the server creates on the client, sees a kick,
// answers plugin messages and runs filters. counted: the frame was accounted
// for on the loop, only its write remains.
func (s *Session) relayOffLoop(p *backendPump, f mc.RawFrame, counted bool, gone *Gone) pumpEnd {
	b, reg := p.b, s.client.Registry
	id, err := b.Conn.PeekID(f)
	if err != nil {
		mc.Recycle(f)
		gone.Err = err
		return pumpLost
	}
	var changed *Packet
	var tells []string
	if !counted {
		s.mu.Lock()
		if s.backend != b {
			s.mu.Unlock()
			mc.Recycle(f)
			return pumpLeft // left by a switch
		}
		state := s.toClient
		t, known := reg.Type(state, mc.Clientbound, id)
		watched := s.watch.has(mc.Clientbound, state, id)
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
		if known && t == mc.PacketPluginMessage && s.wantsPlugin(b, f) {
			s.mu.Unlock()
			if full, err := b.Conn.Decode(f); err == nil {
				if m, err := mc.DecodePluginMessage(full.Payload, reg.Protocol()); err == nil && s.policy.PluginMessage(s, b, m.Channel, m.Data) {
					mc.Recycle(f)
					return pumpNext
				}
			}
			s.mu.Lock()
		}
		tells = s.trackClientbound(b, f, state, t, known)
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
	s.w.lockRelay()
	if !s.isCurrent(b) {
		s.w.unlockRelay()
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
	s.w.unlockRelay()
	mc.Recycle(f)
	if err != nil {
		s.clientNet.Close()
		return pumpLeft
	}
	return pumpNext
}
