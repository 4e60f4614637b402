package session

import (
	"fmt"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// What the proxy itself writes to the player, beside the relay.

// sendClient writes packets the proxy makes to the client, in one write.
func (s *Session) sendClient(state mc.State, pks []mc.Packet) error {
	out := make([]mc.OutPacket, 0, len(pks))
	for _, pk := range pks {
		id, ok := s.client.Registry.ID(state, mc.Clientbound, pk.Type)
		if !ok {
			return fmt.Errorf("no %s packet in state %s", pk.Type, state)
		}
		out = append(out, mc.OutPacket{ID: id, Payload: pk.Payload})
	}
	return s.client.Conn.WritePackets(out...)
}

// Playing reports whether the client is in a world it may be sent play
// packets for now (not in a configuration phase, not waiting for a new world).
func (s *Session) Playing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.toClient == mc.PlayState && !s.joining
}

// maxHeldTells bounds the chat lines held for a client that is not in play.
const maxHeldTells = 8

// Tell shows a system message in the player's chat (a fallback says why the
// player was moved). While the client is between worlds (a 1.20.2+ client in
// a switch's configuration phase, or waiting for its new world) it is held,
// and written right after the new world's join game.
func (s *Session) Tell(text string) error {
	s.mu.Lock()
	if s.toClient != mc.PlayState || s.joining {
		if len(s.tells) < maxHeldTells && !s.closed {
			s.tells = append(s.tells, text)
		}
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	s.w.Lock()
	defer s.w.Unlock()
	return s.tellNow(text)
}

// tellNow writes one chat line to a client in play; the caller holds the writer.
func (s *Session) tellNow(text string) error {
	payload, err := mc.SystemChat{Message: mc.TextComponent(text)}.AppendPayload(nil, s.client.Protocol)
	if err != nil {
		return err
	}
	return s.sendClient(mc.PlayState, []mc.Packet{{Type: mc.PacketSystemChat, Payload: payload}})
}

// ShowTitle writes title changes (a title, a subtitle, the action bar) to a
// client in play; a client between worlds misses them, as it would a
// backend's. Before 1.8 a title is a chat line and the action bar nothing.
func (s *Session) ShowTitle(ts ...mc.Title) error {
	proto := s.client.Protocol
	pks := make([]mc.Packet, 0, len(ts))
	for _, t := range ts {
		if proto.Before(mc.V1_8) {
			if t.Action != mc.TitleShow && t.Action != mc.TitleSubtitle || mc.DescriptionText(t.Text) == "" {
				continue
			}
			payload, err := mc.SystemChat{Message: t.Text}.AppendPayload(nil, proto)
			if err != nil {
				return err
			}
			pks = append(pks, mc.Packet{Type: mc.PacketSystemChat, Payload: payload})
			continue
		}
		pk, err := t.Packet(proto)
		if err != nil {
			return err
		}
		pks = append(pks, pk)
	}
	s.w.Lock()
	defer s.w.Unlock()
	if !s.Playing() || len(pks) == 0 {
		return nil
	}
	return s.sendClient(mc.PlayState, pks)
}

// Between reports that the player is between servers: in the limbo or on his
// way there, or in the middle of a switch. Another move must wait.
func (s *Session) Between() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backend == nil || s.pending != nil || s.limbo != nil || s.held
}
