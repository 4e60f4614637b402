package mc

import "testing"

// A few ids checked by hand against wiki.vg's tables and Gate's registry.
func TestWorldPacketIDs(t *testing.T) {
	for _, c := range []struct {
		p    Protocol
		d    Direction
		t    PacketType
		want int32
	}{
		{V1_8, Serverbound, PacketMovePosition, 0x04},
		{V1_8, Clientbound, PacketChunkData, 0x21},
		{V1_12_2, Serverbound, PacketMovePositionLook, 0x0E},
		{V1_20_3, Clientbound, PacketChunkData, 0x25},
		{V1_21_4, Serverbound, PacketTeleportConfirm, 0x00},
		{V1_21_4, Serverbound, PacketMovePosition, 0x1C},
		{V1_21_4, Clientbound, PacketSetCenterChunk, 0x58},
	} {
		if id, ok := PacketID(c.p, PlayState, c.d, c.t); !ok || id != c.want {
			t.Errorf("%v %s: 0x%02X %v, want 0x%02X", c.p, c.t, id, ok, c.want)
		}
	}
	if _, ok := PacketID(V1_8, PlayState, Serverbound, PacketTeleportConfirm); ok {
		t.Error("1.8 has no teleport confirm")
	}
}
