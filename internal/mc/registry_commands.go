package mc

// commandPacketTable holds the ids of the packets the proxy's commands read:
// chat and commands, tab completion and the command tree. Every id up to 26.1
// comes from minecraft-data's protocol.json (data/pc/<version>, checked in
// commandpackets_test.go against the files when they are installed); 1.7's are
// 1.8's (the same ids in minecraft-data's 1.7). 26.2 renumbered nothing, and
// 26.3's insertions (clientbound 0x25 and 0x53, serverbound 0x2E) all come
// after these ids, so they keep 26.1's.
var commandPacketTable = []packetIDs{
	{PlayState, Clientbound, PacketDeclareCommands, []since{{V1_13, 0x11}, {V1_15, 0x12}, {V1_16, 0x11}, {V1_16_2, 0x10}, {V1_17, 0x12}, {V1_19, 0x0F}, {V1_19_3, 0x0E}, {V1_19_4, 0x10}, {V1_20_2, 0x11}, {V1_21_5, 0x10}}},
	{PlayState, Clientbound, PacketTabCompleteResponse, []since{{V1_7_2, 0x3A}, {V1_9, 0x0E}, {V1_13, 0x10}, {V1_15, 0x11}, {V1_16, 0x10}, {V1_16_2, 0x0F}, {V1_17, 0x11}, {V1_19, 0x0E}, {V1_19_3, 0x0D}, {V1_19_4, 0x0F}, {V1_20_2, 0x10}, {V1_21_5, 0x0F}}},
	{PlayState, Serverbound, PacketTabCompleteRequest, []since{{V1_7_2, 0x14}, {V1_9, 0x01}, {V1_12, 0x02}, {V1_12_1, 0x01}, {V1_13, 0x05}, {V1_14, 0x06}, {V1_19, 0x08}, {V1_19_1, 0x09}, {V1_19_3, 0x08}, {V1_19_4, 0x09}, {V1_20_2, 0x0A}, {V1_20_5, 0x0B}, {V1_21_2, 0x0D}, {V1_21_6, 0x0E}, {V26_1, 0x0F}}},
	{PlayState, Serverbound, PacketChatMessage, []since{{V1_7_2, 0x01}, {V1_9, 0x02}, {V1_12, 0x03}, {V1_12_1, 0x02}, {V1_14, 0x03}, {V1_19, 0x04}, {V1_19_1, 0x05}, {V1_20_5, 0x06}, {V1_21_2, 0x07}, {V1_21_6, 0x08}, {V26_1, 0x09}}},
	{PlayState, Serverbound, PacketChatCommand, []since{{V1_19, 0x03}, {V1_19_1, 0x04}, {V1_21_2, 0x05}, {V1_21_6, 0x06}, {V26_1, 0x07}}},
	{PlayState, Serverbound, PacketChatCommandSigned, []since{{V1_20_5, 0x05}, {V1_21_2, 0x06}, {V1_21_6, 0x07}, {V26_1, 0x08}}},
	{PlayState, Serverbound, PacketChatAck, []since{{V1_19_1, 0x03}, {V1_21_2, 0x04}, {V1_21_6, 0x05}, {V26_1, 0x06}}},
}
