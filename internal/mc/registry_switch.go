package mc

// switchPacketTable holds the ids of the play packets a server switch and the
// limbo send: the world they put the player in (position, spawn, game event)
// and what clears the old server's state (boss bars, tab list, scoreboard,
// titles). Every id up to 26.1 was generated from minecraft-data's
// protocol.json (PrismarineJS/minecraft-data 3.119.0, data/pc/<version>), and
// the sample in registry_switch_test.go equals Gate's state registry. 26.2
// renumbered nothing; 26.3's ids follow from its two clientbound insertions
// before them (0x25 and 0x53, see packetTable), one source only.
var switchPacketTable = []packetIDs{
	{PlayState, Clientbound, PacketPlayerPosition, []since{{V1_7_2, 0x08}, {V1_9, 0x2E}, {V1_12_1, 0x2F}, {V1_13, 0x32}, {V1_14, 0x35}, {V1_15, 0x36}, {V1_16, 0x35}, {V1_16_2, 0x34}, {V1_17, 0x38}, {V1_19, 0x36}, {V1_19_1, 0x39}, {V1_19_3, 0x38}, {V1_19_4, 0x3C}, {V1_20_2, 0x3E}, {V1_20_5, 0x40}, {V1_21_2, 0x42}, {V1_21_5, 0x41}, {V1_21_9, 0x46}, {V26_1, 0x48}, {V26_3, 0x49}}},
	{PlayState, Clientbound, PacketSpawnPosition, []since{{V1_7_2, 0x05}, {V1_9, 0x43}, {V1_12, 0x45}, {V1_12_1, 0x46}, {V1_13, 0x49}, {V1_14, 0x4D}, {V1_15, 0x4E}, {V1_16, 0x42}, {V1_17, 0x4B}, {V1_19, 0x4A}, {V1_19_1, 0x4D}, {V1_19_3, 0x4C}, {V1_19_4, 0x50}, {V1_20_2, 0x52}, {V1_20_3, 0x54}, {V1_20_5, 0x56}, {V1_21_2, 0x5B}, {V1_21_5, 0x5A}, {V1_21_9, 0x5F}, {V26_1, 0x61}, {V26_3, 0x63}}},
	{PlayState, Clientbound, PacketGameEvent, []since{{V1_7_2, 0x2B}, {V1_9, 0x1E}, {V1_13, 0x20}, {V1_14, 0x1E}, {V1_15, 0x1F}, {V1_16, 0x1E}, {V1_16_2, 0x1D}, {V1_17, 0x1E}, {V1_19, 0x1B}, {V1_19_1, 0x1D}, {V1_19_3, 0x1C}, {V1_19_4, 0x1F}, {V1_20_2, 0x20}, {V1_20_5, 0x22}, {V1_21_2, 0x23}, {V1_21_5, 0x22}, {V1_21_9, 0x26}, {V26_3, 0x27}}},
	{PlayState, Clientbound, PacketBossBar, []since{{V1_9, 0x0C}, {V1_15, 0x0D}, {V1_16, 0x0C}, {V1_17, 0x0D}, {V1_19, 0x0A}, {V1_19_4, 0x0B}, {V1_20_2, 0x0A}, {V1_21_5, 0x09}}},
	{PlayState, Clientbound, PacketPlayerInfo, []since{{V1_7_2, 0x38}, {V1_9, 0x2D}, {V1_12_1, 0x2E}, {V1_13, 0x30}, {V1_14, 0x33}, {V1_15, 0x34}, {V1_16, 0x33}, {V1_16_2, 0x32}, {V1_17, 0x36}, {V1_19, 0x34}, {V1_19_1, 0x37}, {V1_19_3, 0x36}, {V1_19_4, 0x3A}, {V1_20_2, 0x3C}, {V1_20_5, 0x3E}, {V1_21_2, 0x40}, {V1_21_5, 0x3F}, {V1_21_9, 0x44}, {V26_1, 0x46}, {V26_3, 0x47}}},
	{PlayState, Clientbound, PacketPlayerInfoRemove, []since{{V1_19_3, 0x35}, {V1_19_4, 0x39}, {V1_20_2, 0x3B}, {V1_20_5, 0x3D}, {V1_21_2, 0x3F}, {V1_21_5, 0x3E}, {V1_21_9, 0x43}, {V26_1, 0x45}, {V26_3, 0x46}}},
	{PlayState, Clientbound, PacketScoreboardObjective, []since{{V1_7_2, 0x3B}, {V1_9, 0x3F}, {V1_12, 0x41}, {V1_12_1, 0x42}, {V1_13, 0x45}, {V1_14, 0x49}, {V1_15, 0x4A}, {V1_17, 0x53}, {V1_19_1, 0x56}, {V1_19_3, 0x54}, {V1_19_4, 0x58}, {V1_20_2, 0x5A}, {V1_20_3, 0x5C}, {V1_20_5, 0x5E}, {V1_21_2, 0x64}, {V1_21_5, 0x63}, {V1_21_9, 0x68}, {V26_1, 0x6A}, {V26_3, 0x6C}}},
	{PlayState, Clientbound, PacketTeams, []since{{V1_7_2, 0x3E}, {V1_9, 0x41}, {V1_12, 0x43}, {V1_12_1, 0x44}, {V1_13, 0x47}, {V1_14, 0x4B}, {V1_15, 0x4C}, {V1_17, 0x55}, {V1_19_1, 0x58}, {V1_19_3, 0x56}, {V1_19_4, 0x5A}, {V1_20_2, 0x5C}, {V1_20_3, 0x5E}, {V1_20_5, 0x60}, {V1_21_2, 0x67}, {V1_21_5, 0x66}, {V1_21_9, 0x6B}, {V26_1, 0x6D}, {V26_3, 0x6F}}},
	{PlayState, Clientbound, PacketTabListHeaderFooter, []since{{V1_8, 0x47}, {V1_9, 0x48}, {V1_9_3, 0x47}, {V1_12, 0x49}, {V1_12_1, 0x4A}, {V1_13, 0x4E}, {V1_14, 0x53}, {V1_15, 0x54}, {V1_16, 0x53}, {V1_17, 0x5E}, {V1_18, 0x5F}, {V1_19, 0x60}, {V1_19_1, 0x63}, {V1_19_3, 0x61}, {V1_19_4, 0x65}, {V1_20_2, 0x68}, {V1_20_3, 0x6A}, {V1_20_5, 0x6D}, {V1_21_2, 0x74}, {V1_21_5, 0x73}, {V1_21_9, 0x78}, {V26_1, 0x7A}, {V26_3, 0x7C}}},
	{PlayState, Clientbound, PacketTitle, []since{{V1_8, 0x45}, {V1_12, 0x47}, {V1_12_1, 0x48}, {V1_13, 0x4B}, {V1_14, 0x4F}, {V1_15, 0x50}, {V1_16, 0x4F}, {V1_17, -1}}},
	{PlayState, Clientbound, PacketSetTitleText, []since{{V1_17, 0x59}, {V1_18, 0x5A}, {V1_19_1, 0x5D}, {V1_19_3, 0x5B}, {V1_19_4, 0x5F}, {V1_20_2, 0x61}, {V1_20_3, 0x63}, {V1_20_5, 0x65}, {V1_21_2, 0x6C}, {V1_21_5, 0x6B}, {V1_21_9, 0x70}, {V26_1, 0x72}, {V26_3, 0x74}}},
	{PlayState, Clientbound, PacketSetSubtitleText, []since{{V1_17, 0x57}, {V1_18, 0x58}, {V1_19_1, 0x5B}, {V1_19_3, 0x59}, {V1_19_4, 0x5D}, {V1_20_2, 0x5F}, {V1_20_3, 0x61}, {V1_20_5, 0x63}, {V1_21_2, 0x6A}, {V1_21_5, 0x69}, {V1_21_9, 0x6E}, {V26_1, 0x70}, {V26_3, 0x72}}},
	{PlayState, Clientbound, PacketSetActionBarText, []since{{V1_17, 0x41}, {V1_19, 0x40}, {V1_19_1, 0x43}, {V1_19_3, 0x42}, {V1_19_4, 0x46}, {V1_20_2, 0x48}, {V1_20_3, 0x4A}, {V1_20_5, 0x4C}, {V1_21_2, 0x51}, {V1_21_5, 0x50}, {V1_21_9, 0x55}, {V26_1, 0x57}, {V26_3, 0x59}}},
	{PlayState, Clientbound, PacketSetTitleTimes, []since{{V1_17, 0x5A}, {V1_18, 0x5B}, {V1_19_1, 0x5E}, {V1_19_3, 0x5C}, {V1_19_4, 0x60}, {V1_20_2, 0x62}, {V1_20_3, 0x64}, {V1_20_5, 0x66}, {V1_21_2, 0x6D}, {V1_21_5, 0x6C}, {V1_21_9, 0x71}, {V26_1, 0x73}, {V26_3, 0x75}}},
	{PlayState, Clientbound, PacketClearTitles, []since{{V1_17, 0x10}, {V1_19, 0x0D}, {V1_19_3, 0x0C}, {V1_19_4, 0x0E}, {V1_20_2, 0x0F}, {V1_21_5, 0x0E}}},
	{PlayState, Clientbound, PacketSystemChat, []since{{V1_7_2, 0x02}, {V1_9, 0x0F}, {V1_13, 0x0E}, {V1_15, 0x0F}, {V1_16, 0x0E}, {V1_17, 0x0F}, {V1_19, 0x5F}, {V1_19_1, 0x62}, {V1_19_3, 0x60}, {V1_19_4, 0x64}, {V1_20_2, 0x67}, {V1_20_3, 0x69}, {V1_20_5, 0x6C}, {V1_21_2, 0x73}, {V1_21_5, 0x72}, {V1_21_9, 0x77}, {V26_1, 0x79}, {V26_3, 0x7B}}},
}

// allPacketIDs is every table the registry is built from.
func allPacketIDs() []packetIDs {
	all := make([]packetIDs, 0, len(packetTable)+len(switchPacketTable)+len(commandPacketTable)+len(worldPacketTable))
	all = append(append(append(all, packetTable...), switchPacketTable...), commandPacketTable...)
	return append(all, worldPacketTable...)
}
