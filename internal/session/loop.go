package session

import (
	"errors"
	"os"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// The pumps' runs on the event loop. Nothing here may wait: reads take what
// has arrived (TryReadRelay), writes what the socket takes at once
// (TryWriteRelay), the writer is taken only if free (tryLock), and whatever
// would wait (a kick, a plugin message, a filtered packet, a switch's
// acknowledgement, a batch to flush, a read error, or loopBudget relayed) is
// left in the pump's handOff for its run off the loop (offloop.go).

// clientOnLoop relays the client's frames to the backend of the moment while
// they come whole and need nothing that waits.
func (s *Session) clientOnLoop() pumpEnd {
	h := &s.fromLoop
	for budget := loopBudget; ; {
		h.flushOut()
		f, counted, b, err, ok := h.take()
		if !ok {
			s.awaitClient()
			if park(s.client.Conn, s.clientParker, s.resume) {
				return pumpParked
			}
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
		}
		if err != nil {
			return pumpLeft
		}
		budget -= len(f.Bytes)
		id, err := s.client.Conn.PeekID(f)
		if err != nil {
			mc.Recycle(f)
			return pumpLeft
		}
		if !counted {
			s.mu.Lock()
			if s.clientFrameWaits(s.toServer, id) {
				s.mu.Unlock()
				h.hold(f, false, nil)
				return pumpOffLoop
			}
			if b = s.countClientFrame(f, id); b == nil {
				continue // dropped, or between a switch's halves
			}
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

// backendOnLoop relays p's backend's frames to the client while they come
// whole and need nothing that waits; a read error is left for the run off
// the loop, which reports the loss.
func (s *Session) backendOnLoop(p *backendPump) pumpEnd {
	b, h := p.b, &p.fromLoop
	if !s.client.Conn.RelaysAsIs(b.Conn) {
		return pumpOffLoop // every frame is framed again: CPU the loop leaves to others
	}
	for budget := loopBudget; ; {
		h.flushOut()
		f, counted, _, err, ok := h.take()
		if !ok {
			if park(b.Conn, p.parker, p.resume) {
				return pumpParked
			}
			if budget <= 0 {
				return pumpOffLoop
			}
			if n, end := s.passBackend(p); n > 0 {
				if end != pumpNext {
					return end
				}
				budget -= n
				continue
			}
			var got bool
			if f, got, err = b.Conn.TryReadRelay(); err == nil && !got {
				continue // parks, or reads what came meanwhile
			}
			if err == nil {
				p.stall.frame()
			}
		}
		if err != nil {
			h.err = err
			return pumpOffLoop
		}
		budget -= len(f.Bytes)
		if end := s.relayOnLoop(p, f, counted); end != pumpNext {
			return end
		}
	}
}

// relayOnLoop relays one frame of p's backend to the client, or holds it for
// the run off the loop: one that needs more than its accounting
// (backendFrameWaits), or that finds the client's writer busy. The writer is
// taken first (never waited for here): what is accounted for is then written
// before any switch can begin. counted: the frame's accounting is done, only
// its write remains.
func (s *Session) relayOnLoop(p *backendPump, f mc.RawFrame, counted bool) pumpEnd {
	b := p.b
	id, err := b.Conn.PeekID(f)
	if err != nil {
		mc.Recycle(f)
		p.fromLoop.err = err
		return pumpOffLoop
	}
	if !s.w.tryLock() {
		p.fromLoop.hold(f, counted, nil)
		return pumpOffLoop
	}
	if !counted {
		s.mu.Lock()
		if s.backend != b {
			s.mu.Unlock()
			s.w.unlockRelay()
			mc.Recycle(f)
			return pumpLeft // left by a switch
		}
		state := s.toClient
		t, known := s.client.Registry.Type(state, mc.Clientbound, id)
		if s.backendFrameWaits(b, f, state, t, known, s.watch.has(mc.Clientbound, state, id)) {
			s.mu.Unlock()
			s.w.unlockRelay()
			p.fromLoop.hold(f, false, nil)
			return pumpOffLoop
		}
		s.trackClientbound(b, f, state, t, known) // no held lines: a join game with some waits
		s.mu.Unlock()
	}
	taken, held, err := s.client.Conn.TryWriteRelay(f, b.Conn.FrameBuffered())
	s.w.unlockRelay()
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
