package session

import (
	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// The event loop's fast path: between sides that frame alike and encrypt
// neither, the frames that need nothing but their accounting leave from the
// read buffer in one write (mc.Conn.PassTo) instead of one by one through
// pooled frames. A frame that needs more (a kick, a plugin message, a filter, a
// switch's acknowledgement, the client's settings) stops the pass; the pump's
// usual path takes it from there.

// passBackend passes what p's backend's buffer holds whole to the client and
// returns how many bytes it passed (0: none, the usual path reads on) and how
// the run goes on.
func (s *Session) passBackend(p *backendPump) (passed int, end pumpEnd) {
	b, client, reg := p.b, s.client.Conn, s.client.Registry
	if !b.Conn.CanPassTo(client) || !s.w.tryLock() {
		return 0, pumpNext
	}
	s.mu.Lock()
	if s.backend != b {
		s.mu.Unlock()
		s.w.unlockRelay()
		return 0, pumpNext // the usual path sees the switch
	}
	n, held, err := b.Conn.PassTo(client, func(id int32, wire int) bool {
		state := s.toClient
		if s.watch.has(mc.Clientbound, state, id) {
			return false
		}
		if t, known := reg.Type(state, mc.Clientbound, id); known {
			switch {
			case t == mc.PacketDisconnect, t == mc.PacketPluginMessage && s.policy.PluginMessage != nil:
				return false
			case state == mc.PlayState && limbo.Tracks(t):
				return false
			case state == mc.PlayState && t == mc.PacketJoinGame:
				if len(s.tells) > 0 {
					return false // the held chat lines follow it: the usual path writes them
				}
				s.joining = false
			case state == mc.ConfigState && t == mc.PacketFinishConfiguration:
				s.toClient, s.spawned, s.joining = mc.PlayState, true, true
				b.Conn.ShareHeads(false)
			case state == mc.PlayState && t == mc.PacketStartConfiguration:
				s.toClient = mc.ConfigState
				b.Conn.ShareHeads(true)
			}
		}
		s.down += int64(wire)
		return true
	})
	s.mu.Unlock()
	s.w.unlockRelay()
	if n == 0 {
		return 0, pumpNext
	}
	p.stall.frame()
	switch {
	case err != nil:
		s.clientNet.Close()
		return n, pumpLeft
	case held:
		p.fromLoop.flush, p.fromLoop.flushNet = client, s.clientNet
		return n, pumpOffLoop
	}
	return n, pumpNext
}

// passClient passes what the client's buffer holds whole to the backend of
// the moment, as passBackend does the other way.
func (s *Session) passClient() (passed int, end pumpEnd) {
	client := s.client.Conn
	reg := s.client.Registry
	s.mu.Lock()
	b := s.backend
	if b == nil || !client.CanPassTo(b.Conn) {
		s.mu.Unlock()
		return 0, pumpNext
	}
	n, held, err := client.PassTo(b.Conn, func(id int32, wire int) bool {
		state := s.toServer
		if s.watch.has(mc.Serverbound, state, id) {
			return false
		}
		if t, known := reg.Type(state, mc.Serverbound, id); known {
			switch {
			case t == mc.PacketClientInformation:
				return false // remembered for the next backend: the usual path decodes it
			case state == mc.PlayState && t == mc.PacketConfigurationAck:
				return false // perhaps a switch's second half
			case state == mc.ConfigState && t == mc.PacketFinishConfiguration:
				s.toServer = mc.PlayState
			}
		}
		s.up += int64(wire)
		return true
	})
	s.mu.Unlock()
	switch {
	case n == 0:
		return 0, pumpNext
	case err != nil:
		b.Net.Close() // its pump reports the loss
	case held:
		s.fromLoop.flush, s.fromLoop.flushNet = b.Conn, b.Net
		return n, pumpOffLoop
	}
	return n, pumpNext
}
