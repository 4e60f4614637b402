package session

import (
	"io"
	"testing"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// One policy serves many sessions: each knows its owner, and the sessions of
// one version share the watch set their filter makes (built once), while
// another version gets its own, with its own packet ids.
func TestOnePolicyManySessions(t *testing.T) {
	policy := &Policy{Filter: &Filter{
		Serverbound: []mc.PacketType{mc.PacketChatCommand},
		Packet:      func(*Session, *Packet) {},
	}}
	session := func(p mc.Protocol, owner string) *Session {
		reg, ok := mc.RegistryFor(p)
		if !ok {
			t.Fatalf("no registry for %d", p)
		}
		return New(&Client{Conn: mc.NewConn(nil, io.Discard, nil), Registry: reg, Protocol: p, State: mc.PlayState}, nil, policy, owner)
	}
	a, b, old := session(mc.V1_21_4, "alice"), session(mc.V1_21_4, "bob"), session(mc.V1_20_2, "carol")
	if a.Owner() != "alice" || b.Owner() != "bob" || old.Owner() != "carol" {
		t.Fatalf("owners %v, %v, %v", a.Owner(), b.Owner(), old.Owner())
	}
	if a.watch == nil || a.watch != b.watch {
		t.Fatalf("two sessions of one version: watch sets %p and %p, want one", a.watch, b.watch)
	}
	if old.watch == a.watch {
		t.Fatal("two versions share a watch set")
	}
	for _, s := range []*Session{a, old} {
		id, ok := s.client.Registry.ID(mc.PlayState, mc.Serverbound, mc.PacketChatCommand)
		if !ok || !s.watch.has(mc.Serverbound, mc.PlayState, id) {
			t.Fatalf("protocol %d: chat command (0x%02x) not watched", s.client.Protocol, id)
		}
	}
	if none := New(&Client{Conn: mc.NewConn(nil, io.Discard, nil), Registry: a.client.Registry, Protocol: mc.V1_21_4}, nil, nil, nil); none.watch != nil || none.policy == nil {
		t.Fatal("a session without a policy watches packets or has no policy to consult")
	}
}
