package session

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// Filter sees chosen packets of a session on their way through: the proxy's
// commands (chat commands, tab completion, the command tree) and plugins'
// packet filters. Only the packet types it names are decoded; every other frame
// is relayed as it came, at no cost.
type Filter struct {
	// Serverbound and Clientbound are the packet types shown to Packet, in the
	// configuration and play states wherever the client's version has them.
	// Neither they nor Packet change once a session has the filter.
	Serverbound, Clientbound []mc.PacketType
	// Packet is called on the goroutine relaying that direction, after the
	// session's own bookkeeping and before the packet goes on. It may change
	// pk.Payload, set pk.Drop, and send packets of its own (SendToClient,
	// SendToServer).
	Packet func(s *Session, pk *Packet)

	// watch holds the watch set of each version met (by mc.Registry.Index):
	// the same for every session of that version.
	watchOnce sync.Once
	watch     []atomic.Pointer[watchSet]
}

// Packet is one packet a Filter sees.
type Packet struct {
	Direction mc.Direction
	State     mc.State
	Type      mc.PacketType
	// Payload is the packet after its id, decompressed. A filter that changes it
	// sets Changed (or assigns through Replace) so the packet is encoded again.
	Payload []byte
	Changed bool
	// Drop keeps the packet from going on.
	Drop bool
	// Backend is the backend the packet comes from or goes to.
	Backend *Backend
}

// Replace makes payload the packet's new content.
func (pk *Packet) Replace(payload []byte) {
	pk.Payload, pk.Changed = payload, true
}

// watchSet is which packet ids a session's filter sees: per direction, per
// state (configuration, play), a bitmap of ids below 256.
type watchSet [2][2][4]uint64

func stateSlot(st mc.State) (int, bool) {
	switch st {
	case mc.ConfigState:
		return 0, true
	case mc.PlayState:
		return 1, true
	}
	return 0, false
}

// watchFor is the watch set of f for a client of reg; nil when f sees nothing.
func (f *Filter) watchFor(reg *mc.Registry) *watchSet {
	if f == nil || f.Packet == nil {
		return nil
	}
	f.watchOnce.Do(func() { f.watch = make([]atomic.Pointer[watchSet], mc.RegistryCount()) })
	slot := &f.watch[reg.Index()]
	if w := slot.Load(); w != nil {
		return w
	}
	slot.CompareAndSwap(nil, newWatchSet(reg, f))
	return slot.Load()
}

func newWatchSet(reg *mc.Registry, f *Filter) *watchSet {
	w := new(watchSet)
	for d, types := range [2][]mc.PacketType{f.Serverbound, f.Clientbound} {
		for _, t := range types {
			for _, st := range []mc.State{mc.ConfigState, mc.PlayState} {
				id, ok := reg.ID(st, mc.Direction(d), t)
				slot, _ := stateSlot(st)
				if ok && id >= 0 && id < 256 {
					w[d][slot][id>>6] |= 1 << (id & 63)
				}
			}
		}
	}
	return w
}

func (w *watchSet) has(d mc.Direction, st mc.State, id int32) bool {
	if w == nil || id < 0 || id >= 256 {
		return false
	}
	slot, ok := stateSlot(st)
	return ok && w[d][slot][id>>6]&(1<<(id&63)) != 0
}

// filter runs the session's filter on frame f (of id, in state st) read from
// conn; it returns the packet to write instead (changed), or drop.
func (s *Session) filter(conn *mc.Conn, f mc.RawFrame, d mc.Direction, st mc.State, id int32, b *Backend) (pk *Packet, drop bool) {
	full, err := conn.Decode(f)
	if err != nil {
		return nil, false // relayed as it came; the peer judges it
	}
	t, _ := s.client.Registry.Type(st, d, id)
	p := &Packet{Direction: d, State: st, Type: t, Payload: full.Payload, Backend: b}
	func() {
		defer func() {
			if r := recover(); r != nil {
				// A broken filter must not end the player's session: the packet
				// goes on untouched.
				p.Drop, p.Changed = false, false
				if s.policy.FilterPanicked != nil {
					s.policy.FilterPanicked(r)
				}
			}
		}()
		s.policy.Filter.Packet(s, p)
	}()
	if p.Drop {
		return nil, true
	}
	if p.Changed {
		return p, false
	}
	return nil, false
}

// SendToClient writes a packet the proxy makes to the player in the state their
// stream is in (play or configuration); it fails when that state has no such
// packet. Safe from any goroutine; ordered after what is being relayed.
func (s *Session) SendToClient(t mc.PacketType, payload []byte) error {
	s.w.Lock()
	defer s.w.Unlock()
	s.mu.Lock()
	state := s.toClient
	s.mu.Unlock()
	return s.sendClient(state, []mc.Packet{{Type: t, Payload: payload}})
}

// SendToServer writes a packet to the player's current backend as if the
// client had sent it; it fails between two backends.
func (s *Session) SendToServer(t mc.PacketType, payload []byte) error {
	s.mu.Lock()
	b, state := s.backend, s.toServer
	s.mu.Unlock()
	if b == nil {
		return fmt.Errorf("the player is between servers")
	}
	id, ok := s.client.Registry.ID(state, mc.Serverbound, t)
	if !ok {
		return fmt.Errorf("no %s packet in state %s", t, state)
	}
	return b.Conn.WritePacket(id, payload)
}

// TellComponent shows a JSON text component in the player's chat (dropped
// while the client is not in play).
func (s *Session) TellComponent(js json.RawMessage) error {
	s.mu.Lock()
	state := s.toClient
	s.mu.Unlock()
	if state != mc.PlayState {
		return nil
	}
	payload, err := mc.SystemChat{Message: js}.AppendPayload(nil, s.client.Protocol)
	if err != nil {
		return err
	}
	s.w.Lock()
	defer s.w.Unlock()
	return s.sendClient(mc.PlayState, []mc.Packet{{Type: mc.PacketSystemChat, Payload: payload}})
}

// Done is closed when the player has left.
func (s *Session) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doneLocked()
}

// doneLocked is Done under s.mu. The channel is made at the first ask (a
// switch, a command waiting on the player), not for every login.
func (s *Session) doneLocked() <-chan struct{} {
	if s.done == nil {
		s.done = make(chan struct{})
		if s.closed {
			close(s.done)
		}
	}
	return s.done
}
