package mc

// worldPacketTable holds the ids of the packets a limbo with ground under the
// player needs (chunks, light, the chunk the client centres on) and of what
// the client answers while it moves (teleport confirmations, movement). Every
// id up to 26.1 was generated from minecraft-data's protocol.json
// (PrismarineJS/minecraft-data 3.119.0, data/pc/<version>) as
// registry_switch.go's were. 26.2 renumbered nothing; 26.3's clientbound ids
// follow from its two insertions (see switchPacketTable); its serverbound
// ones have no source yet, so 26.3 has none.
var worldPacketTable = []packetIDs{
	{PlayState, Serverbound, PacketTeleportConfirm, []since{{V1_9, 0x00}, {V26_3, -1}}},
	{PlayState, Serverbound, PacketMovePosition, []since{{V1_7_2, 0x04}, {V1_9, 0x0C}, {V1_12, 0x0E}, {V1_12_1, 0x0D}, {V1_13, 0x10}, {V1_14, 0x11}, {V1_16, 0x12}, {V1_17, 0x11}, {V1_19, 0x13}, {V1_19_1, 0x14}, {V1_19_3, 0x13}, {V1_19_4, 0x14}, {V1_20_2, 0x16}, {V1_20_3, 0x17}, {V1_20_5, 0x1A}, {V1_21_2, 0x1C}, {V1_21_6, 0x1D}, {V26_1, 0x1E}, {V26_3, -1}}},
	{PlayState, Serverbound, PacketMovePositionLook, []since{{V1_7_2, 0x06}, {V1_9, 0x0D}, {V1_12, 0x0F}, {V1_12_1, 0x0E}, {V1_13, 0x11}, {V1_14, 0x12}, {V1_16, 0x13}, {V1_17, 0x12}, {V1_19, 0x14}, {V1_19_1, 0x15}, {V1_19_3, 0x14}, {V1_19_4, 0x15}, {V1_20_2, 0x17}, {V1_20_3, 0x18}, {V1_20_5, 0x1B}, {V1_21_2, 0x1D}, {V1_21_6, 0x1E}, {V26_1, 0x1F}, {V26_3, -1}}},
	{PlayState, Serverbound, PacketMoveLook, []since{{V1_7_2, 0x05}, {V1_9, 0x0E}, {V1_12, 0x10}, {V1_12_1, 0x0F}, {V1_13, 0x12}, {V1_14, 0x13}, {V1_16, 0x14}, {V1_17, 0x13}, {V1_19, 0x15}, {V1_19_1, 0x16}, {V1_19_3, 0x15}, {V1_19_4, 0x16}, {V1_20_2, 0x18}, {V1_20_3, 0x19}, {V1_20_5, 0x1C}, {V1_21_2, 0x1E}, {V1_21_6, 0x1F}, {V26_1, 0x20}, {V26_3, -1}}},
	{PlayState, Serverbound, PacketMoveStatus, []since{{V1_7_2, 0x03}, {V1_9, 0x0F}, {V1_12, 0x0D}, {V1_12_1, 0x0C}, {V1_13, 0x0F}, {V1_14, 0x14}, {V1_16, 0x15}, {V1_17, 0x14}, {V1_19, 0x16}, {V1_19_1, 0x17}, {V1_19_3, 0x16}, {V1_19_4, 0x17}, {V1_20_2, 0x19}, {V1_20_3, 0x1A}, {V1_20_5, 0x1D}, {V1_21_2, 0x1F}, {V1_21_6, 0x20}, {V26_1, 0x21}, {V26_3, -1}}},
	{PlayState, Clientbound, PacketChunkData, []since{{V1_8, 0x21}, {V1_9, 0x20}, {V1_13, 0x22}, {V1_14, 0x21}, {V1_15, 0x22}, {V1_16, 0x21}, {V1_16_2, 0x20}, {V1_17, 0x22}, {V1_19, 0x1F}, {V1_19_1, 0x21}, {V1_19_3, 0x20}, {V1_19_4, 0x24}, {V1_20_2, 0x25}, {V1_20_5, 0x27}, {V1_21_2, 0x28}, {V1_21_5, 0x27}, {V1_21_9, 0x2C}, {V26_1, 0x2D}, {V26_3, 0x2E}}},
	{PlayState, Clientbound, PacketSetCenterChunk, []since{{V1_14, 0x40}, {V1_15, 0x41}, {V1_16, 0x40}, {V1_17, 0x49}, {V1_19, 0x48}, {V1_19_1, 0x4B}, {V1_19_3, 0x4A}, {V1_19_4, 0x4E}, {V1_20_2, 0x50}, {V1_20_3, 0x52}, {V1_20_5, 0x54}, {V1_21_2, 0x58}, {V1_21_5, 0x57}, {V1_21_9, 0x5C}, {V26_1, 0x5E}, {V26_3, 0x60}}},
	{PlayState, Clientbound, PacketUpdateLight, []since{{V1_14, 0x24}, {V1_15, 0x25}, {V1_16, 0x24}, {V1_16_2, 0x23}, {V1_17, 0x25}, {V1_19, 0x22}, {V1_19_1, 0x24}, {V1_19_3, 0x23}, {V1_19_4, 0x27}, {V1_20_2, 0x28}, {V1_20_5, 0x2A}, {V1_21_2, 0x2B}, {V1_21_5, 0x2A}, {V1_21_9, 0x2F}, {V26_1, 0x30}, {V26_3, 0x31}}},
}
