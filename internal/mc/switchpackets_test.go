package mc

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// verifiedSwitchIDs were read from Gate's state registry (minekube/gate
// pkg/edition/java/proto/state/register.go) and equal what
// registry_switch.go generated from minecraft-data.
var verifiedSwitchIDs = []struct {
	version                                       string
	bossBar, header, legacyTitle, titleText       int32
	subtitle, actionBar, legacyChat, playerInfoV1 int32
}{
	{"1.8", none, 0x47, 0x45, none, none, none, 0x02, 0x38},
	{"1.9.4", 0x0C, 0x47, 0x45, none, none, none, 0x0F, 0x2D},
	{"1.12.2", 0x0C, 0x4A, 0x48, none, none, none, 0x0F, 0x2E},
	{"1.15.2", 0x0D, 0x54, 0x50, none, none, none, 0x0F, 0x34},
	{"1.16.5", 0x0C, 0x53, 0x4F, none, none, none, 0x0E, 0x32},
	{"1.17.1", 0x0D, 0x5E, none, 0x59, 0x57, 0x41, 0x0F, 0x36},
	{"1.18.2", 0x0D, 0x5F, none, 0x5A, 0x58, 0x41, 0x0F, 0x36},
	{"1.19.2", 0x0A, 0x63, none, 0x5D, 0x5B, 0x43, none, 0x37},
	{"1.20.4", 0x0A, 0x6A, none, 0x63, 0x61, 0x4A, none, none},
	{"1.21.4", 0x0A, 0x74, none, 0x6C, 0x6A, 0x51, none, none},
	{"1.21.5", 0x09, 0x73, none, 0x6B, 0x69, 0x50, none, none},
}

func TestSwitchRegistryMatchesGate(t *testing.T) {
	for _, v := range verifiedSwitchIDs {
		p, _ := ParseVersion(v.version)
		chat := v.legacyChat
		if p.AtLeast(V1_19) {
			chat = -2 // system chat from 1.19: any id, checked below
		}
		checks := []idCheck{
			{PlayState, Clientbound, PacketBossBar, v.bossBar},
			{PlayState, Clientbound, PacketTabListHeaderFooter, v.header},
			{PlayState, Clientbound, PacketTitle, v.legacyTitle},
			{PlayState, Clientbound, PacketSetTitleText, v.titleText},
			{PlayState, Clientbound, PacketSetSubtitleText, v.subtitle},
			{PlayState, Clientbound, PacketSetActionBarText, v.actionBar},
		}
		if chat != -2 {
			checks = append(checks, idCheck{PlayState, Clientbound, PacketSystemChat, chat})
		}
		if v.playerInfoV1 != none {
			checks = append(checks, idCheck{PlayState, Clientbound, PacketPlayerInfo, v.playerInfoV1})
		}
		checkIDs(t, v.version, checks)
	}
	// Packets that appear or vanish with a version.
	for _, p := range KnownProtocols() {
		has := func(ty PacketType) bool { _, ok := PacketID(p, PlayState, Clientbound, ty); return ok }
		if has(PacketBossBar) != p.AtLeast(V1_9) || has(PacketTitle) != (p.AtLeast(V1_8) && p.Before(V1_17)) ||
			has(PacketSetTitleText) != p.AtLeast(V1_17) || has(PacketClearTitles) != p.AtLeast(V1_17) ||
			has(PacketPlayerInfoRemove) != p.AtLeast(V1_19_3) || has(PacketTabListHeaderFooter) != p.AtLeast(V1_8) ||
			!has(PacketPlayerPosition) || !has(PacketGameEvent) || !has(PacketSystemChat) || !has(PacketTeams) {
			t.Errorf("%v: packet presence wrong", p)
		}
	}
}

func TestNBTValue(t *testing.T) {
	inner := (&CompoundBuilder{}).String("name", "minecraft:the_end").Int("id", 2).Build()
	root := (&CompoundBuilder{}).List("entries", NBTCompound, inner, inner).Byte("flag", -1).Build()
	wire := root.AppendTo(nil, true)
	if !bytes.Equal(wire[:3], []byte{NBTCompound, 0, 0}) {
		t.Fatalf("named root header %x", wire[:3])
	}
	back, n, err := ParseNBT(append(wire, 0xEE), true)
	if err != nil || n != len(wire) || !bytes.Equal(back.Payload, root.Payload) {
		t.Fatalf("ParseNBT: %v, %d of %d", err, n, len(wire))
	}
	nameless := root.AppendTo(nil, false)
	if nameless[0] != NBTCompound || !bytes.Equal(nameless[1:], root.Payload) {
		t.Fatalf("nameless root %x", nameless[:4])
	}
	list, ok := back.Field("entries")
	if !ok {
		t.Fatal("entries not found")
	}
	elems, err := list.Elements()
	if err != nil || len(elems) != 2 {
		t.Fatalf("elements: %v, %d", err, len(elems))
	}
	name, _ := elems[1].Field("name")
	if s, ok := name.StringValue(); !ok || s != "minecraft:the_end" {
		t.Errorf("name %q %v", s, ok)
	}
	id, _ := elems[1].Field("id")
	if v, ok := id.IntValue(); !ok || v != 2 {
		t.Errorf("id %d %v", v, ok)
	}
	flag, _ := back.Field("flag")
	if v, ok := flag.IntValue(); !ok || v != -1 {
		t.Errorf("flag %d %v", v, ok)
	}
	if _, ok := back.Field("missing"); ok {
		t.Error("missing field found")
	}
	if _, err := flag.Elements(); err == nil {
		t.Error("a byte listed as a list")
	}
	if (NBT{}).AppendTo(nil, true)[0] != NBTEnd {
		t.Error("zero NBT should write TAG_End")
	}
	// Hostile inputs: counts beyond the data, unknown types, depth bombs.
	bad := [][]byte{
		{NBTList, 0, 0, NBTCompound, 0x7F, 0xFF, 0xFF, 0xFF},
		{NBTCompound, 0, 0, 99, 0, 0},
		{7, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF},
		{NBTString, 0, 0, 0xFF, 0xFF, 'a'},
		{NBTList, 0, 0, 0, 0, 0, 0, 5},
		append([]byte{NBTCompound, 0, 0}, bytes.Repeat([]byte{NBTCompound, 0, 0}, 600)...),
	}
	for i, b := range bad {
		if _, _, err := ParseNBT(b, true); !errors.Is(err, ErrMalformed) {
			t.Errorf("bad %d: %v", i, err)
		}
	}
}

func TestKnownPacksWire(t *testing.T) {
	k := KnownPacks{Packs: []KnownPack{CorePack("1.21.4"), {"mod", "extra", "1"}}}
	want := cat(vi(2), str("minecraft"), str("core"), str("1.21.4"), str("mod"), str("extra"), str("1"))
	if got := k.AppendPayload(nil); !bytes.Equal(got, want) {
		t.Fatalf("encoded %x", got)
	}
	back, err := DecodeKnownPacks(want)
	if err != nil || !reflect.DeepEqual(back, k) || !back.Packs[0].IsCore() || back.Packs[1].IsCore() {
		t.Fatalf("decoded %+v %v", back, err)
	}
	if _, err := DecodeKnownPacks(vi(65)); err == nil {
		t.Error("65 packs accepted")
	}
	if _, err := DecodeKnownPacks(append(want, 0)); err == nil {
		t.Error("trailing byte accepted")
	}
}

func TestRegistryDataWire(t *testing.T) {
	codec := testCodec()
	old := RegistryData{Codec: codec}
	wantOld := cat([]byte{NBTCompound}, codec.Payload)
	got, err := old.AppendPayload(nil, V1_20_2)
	if err != nil || !bytes.Equal(got, wantOld) {
		t.Fatalf("1.20.2: %x %v", got, err)
	}
	if back, err := DecodeRegistryData(wantOld, V1_20_3); err != nil || !bytes.Equal(back.Codec.Payload, codec.Payload) {
		t.Fatalf("1.20.3 decode: %v", err)
	}
	elem := testDimensionNBT()
	d := RegistryData{Registry: "minecraft:dimension_type", Entries: []RegistryEntry{
		{Key: "minecraft:overworld"}, {Key: "minecraft:the_end", Data: elem},
	}}
	want := cat(str("minecraft:dimension_type"), vi(2), str("minecraft:overworld"), bo(false),
		str("minecraft:the_end"), bo(true), []byte{NBTCompound}, elem.Payload)
	got, err = d.AppendPayload(nil, V1_21_4)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("1.21.4: %x %v", got, err)
	}
	back, err := DecodeRegistryData(want, V1_20_5)
	if err != nil || !reflect.DeepEqual(back, d) {
		t.Fatalf("1.20.5 decode %+v %v", back, err)
	}
	if _, err := DecodeRegistryData(want, V1_20); !errors.Is(err, ErrNoLayout) {
		t.Errorf("1.20.1: %v", err)
	}
	if _, err := (RegistryData{}).AppendPayload(nil, V1_20_2); err == nil {
		t.Error("1.20.2 without a codec encoded")
	}
	// A flagged entry must carry a tag.
	if _, err := DecodeRegistryData(cat(str("r"), vi(1), str("k"), bo(true), []byte{NBTEnd}), V1_21); err == nil {
		t.Error("flagged entry without data accepted")
	}
}

func TestPlayerPositionWire(t *testing.T) {
	tests := []struct {
		p    Protocol
		pp   PlayerPosition
		want []byte
	}{
		{V1_7_6, PlayerPosition{X: 0.5, Y: 400, Z: -0.5, Yaw: 90, OnGround: true},
			cat(f64b(0.5), f64b(400), f64b(-0.5), f32b(90), f32b(0), bo(true))},
		{V1_8, PlayerPosition{X: 1, Y: 2, Z: 3, Flags: 0x18},
			cat(f64b(1), f64b(2), f64b(3), f32b(0), f32b(0), []byte{0x18})},
		{V1_12_2, PlayerPosition{X: 1, Y: 2, Z: 3, TeleportID: 300},
			cat(f64b(1), f64b(2), f64b(3), f32b(0), f32b(0), []byte{0}, vi(300))},
		{V1_17, PlayerPosition{X: 1, Y: 2, Z: 3, TeleportID: 1, DismountVehicle: true},
			cat(f64b(1), f64b(2), f64b(3), f32b(0), f32b(0), []byte{0}, vi(1), bo(true))},
		{V1_19_4, PlayerPosition{X: 1, Y: 2, Z: 3, TeleportID: 1},
			cat(f64b(1), f64b(2), f64b(3), f32b(0), f32b(0), []byte{0}, vi(1))},
		{V1_21_2, PlayerPosition{TeleportID: 9, X: 1, Y: 2, Z: 3, VelocityY: -1, Yaw: 5, Pitch: 6, Flags: 0x100},
			cat(vi(9), f64b(1), f64b(2), f64b(3), f64b(0), f64b(-1), f64b(0), f32b(5), f32b(6), be32(0x100))},
	}
	for _, tc := range tests {
		got, err := tc.pp.AppendPayload(nil, tc.p)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%v: encoded %x %v", tc.p, got, err)
		}
		back, err := DecodePlayerPosition(tc.want, tc.p)
		if err != nil || !reflect.DeepEqual(back, tc.pp) {
			t.Errorf("%v: decoded %+v %v", tc.p, back, err)
		}
		if _, err := DecodePlayerPosition(tc.want[:len(tc.want)-1], tc.p); err == nil {
			t.Errorf("%v: truncated accepted", tc.p)
		}
	}
}

func TestSpawnPositionWire(t *testing.T) {
	tests := []struct {
		p    Protocol
		s    SpawnPosition
		want []byte
	}{
		{V1_7_6, SpawnPosition{X: 1, Y: 64, Z: -1}, cat(be32(1), be32(64), be32(-1))},
		{V1_8, SpawnPosition{X: 0, Y: 1, Z: 0}, beU64(1 << 26)},
		{V1_14, SpawnPosition{X: 0, Y: 1, Z: 0}, beU64(1)},
		{V1_17, SpawnPosition{X: 0, Y: 2, Z: 0, Angle: 1.5}, cat(beU64(2), f32b(1.5))},
		{V1_21_9, SpawnPosition{Dimension: "minecraft:the_end", Y: 3, Angle: 1, Pitch: 2},
			cat(str("minecraft:the_end"), beU64(3), f32b(1), f32b(2))},
	}
	for _, tc := range tests {
		got, err := tc.s.AppendPayload(nil, tc.p)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%v: encoded %x %v", tc.p, got, err)
		}
		back, err := DecodeSpawnPosition(tc.want, tc.p)
		if err != nil || !reflect.DeepEqual(back, tc.s) {
			t.Errorf("%v: decoded %+v %v", tc.p, back, err)
		}
	}
}

func TestGameEventWire(t *testing.T) {
	g := GameEvent{Event: GameEventStartWaitingForChunks, Value: 0}
	want := cat([]byte{13}, f32b(0))
	if got := g.AppendPayload(nil); !bytes.Equal(got, want) {
		t.Fatalf("encoded %x", got)
	}
	if back, err := DecodeGameEvent(want); err != nil || back != g {
		t.Fatalf("decoded %+v %v", back, err)
	}
	if _, err := DecodeGameEvent(want[:3]); err == nil {
		t.Error("truncated accepted")
	}
}

func TestSystemChatWire(t *testing.T) {
	msg := TextComponent("Waking the server… 12 s")
	nbtMsg, err := componentJSONToNBT(nil, msg)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p    Protocol
		m    SystemChat
		want []byte
	}{
		{V1_7_6, SystemChat{Message: msg}, str(string(msg))},
		{V1_8, SystemChat{Message: msg, ActionBar: true}, cat(str(string(msg)), []byte{2})},
		{V1_15_2, SystemChat{Message: msg}, cat(str(string(msg)), []byte{1})},
		{V1_16_4, SystemChat{Message: msg, ActionBar: true}, cat(str(string(msg)), []byte{2}, make([]byte, 16))},
		{V1_19, SystemChat{Message: msg, ActionBar: true}, cat(str(string(msg)), vi(2))},
		{V1_19_1, SystemChat{Message: msg}, cat(str(string(msg)), bo(false))},
		{V1_20_3, SystemChat{Message: msg, ActionBar: true}, cat(nbtMsg, bo(true))},
	}
	for _, tc := range tests {
		got, err := tc.m.AppendPayload(nil, tc.p)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%v: encoded %x %v", tc.p, got, err)
		}
		back, err := DecodeSystemChat(tc.want, tc.p)
		if err != nil || back.ActionBar != tc.m.ActionBar || DescriptionText(back.Message) != "Waking the server… 12 s" {
			t.Errorf("%v: decoded %+v %v", tc.p, back, err)
		}
	}
	if _, err := (SystemChat{Message: msg, ActionBar: true}).AppendPayload(nil, V1_7_2); !errors.Is(err, ErrNoLayout) {
		t.Errorf("1.7 action bar: %v", err)
	}
	if _, err := (SystemChat{Message: json.RawMessage(`{`)}).AppendPayload(nil, V1_8); err == nil {
		t.Error("invalid JSON encoded")
	}
}

func TestTitleWire(t *testing.T) {
	text := TextComponent("You are #3 in the queue")
	nbtText, _ := componentJSONToNBT(nil, text)
	times := cat(be32(0), be32(72000), be32(10))
	tests := []struct {
		p      Protocol
		ti     Title
		wantTy PacketType
		want   []byte
	}{
		{V1_8, Title{Action: TitleShow, Text: text}, PacketTitle, cat(vi(0), str(string(text)))},
		{V1_8, Title{Action: TitleTimes, Stay: 72000, FadeOut: 10}, PacketTitle, cat(vi(2), times)},
		{V1_8, Title{Action: TitleReset}, PacketTitle, vi(4)},
		{V1_8, Title{Action: TitleActionBar, Text: text}, PacketSystemChat, cat(str(string(text)), []byte{2})},
		{V1_11, Title{Action: TitleActionBar, Text: text}, PacketTitle, cat(vi(2), str(string(text)))},
		{V1_12_2, Title{Action: TitleTimes, Stay: 72000, FadeOut: 10}, PacketTitle, cat(vi(3), times)},
		{V1_16_4, Title{Action: TitleHide}, PacketTitle, vi(4)},
		{V1_16_4, Title{Action: TitleReset}, PacketTitle, vi(5)},
		{V1_17, Title{Action: TitleSubtitle, Text: text}, PacketSetSubtitleText, str(string(text))},
		{V1_19_4, Title{Action: TitleActionBar, Text: text}, PacketSetActionBarText, str(string(text))},
		{V1_20_3, Title{Action: TitleShow, Text: text}, PacketSetTitleText, nbtText},
		{V1_21_4, Title{Action: TitleTimes, Stay: 72000, FadeOut: 10}, PacketSetTitleTimes, times},
		{V1_21_4, Title{Action: TitleReset}, PacketClearTitles, bo(true)},
		{V1_21_4, Title{Action: TitleHide}, PacketClearTitles, bo(false)},
	}
	for _, tc := range tests {
		pk, err := tc.ti.Packet(tc.p)
		if err != nil || pk.Type != tc.wantTy || !bytes.Equal(pk.Payload, tc.want) {
			t.Errorf("%v %d: %s %x %v", tc.p, tc.ti.Action, pk.Type, pk.Payload, err)
			continue
		}
		if pk.Type == PacketSystemChat {
			continue
		}
		back, err := DecodeTitle(pk.Type, pk.Payload, tc.p)
		if err != nil || back.Action != tc.ti.Action || back.Stay != tc.ti.Stay ||
			(tc.ti.Text != nil && DescriptionText(back.Text) != "You are #3 in the queue") {
			t.Errorf("%v %d: decoded %+v %v", tc.p, tc.ti.Action, back, err)
		}
	}
	if _, err := (Title{Action: TitleShow, Text: text}).Packet(V1_7_6); !errors.Is(err, ErrNoLayout) {
		t.Errorf("1.7 title: %v", err)
	}
	if _, err := DecodeTitle(PacketTitle, vi(9), V1_12_2); err == nil {
		t.Error("unknown title action accepted")
	}
}

func TestCleanupWire(t *testing.T) {
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	pk, err := RemoveBossBar(V1_21_4, id)
	if err != nil || pk.Type != PacketBossBar || !bytes.Equal(pk.Payload, cat(id[:], vi(1))) {
		t.Fatalf("boss bar removal %x %v", pk.Payload, err)
	}
	if h, err := DecodeBossBarHeader(pk.Payload); err != nil || h.ID != id || h.Action != BossBarRemove {
		t.Errorf("boss bar header %+v %v", h, err)
	}
	if h, err := DecodeBossBarHeader(cat(id[:], vi(0), str(`{"text":"x"}`), f32b(1), vi(0), vi(0), []byte{0})); err != nil || h.Action != BossBarAdd {
		t.Errorf("boss bar add header %+v %v", h, err)
	}
	if _, err := RemoveBossBar(V1_8, id); !errors.Is(err, ErrNoLayout) {
		t.Errorf("1.8 boss bar: %v", err)
	}

	obj, err := RemoveObjective(V1_7_6, "sidebar")
	if err != nil || !bytes.Equal(obj.Payload, cat(str("sidebar"), str(""), []byte{1})) {
		t.Errorf("1.7 objective %x %v", obj.Payload, err)
	}
	if h, err := DecodeObjectiveHeader(obj.Payload, V1_7_6); err != nil || h != (ScoreboardHeader{"sidebar", 1}) {
		t.Errorf("1.7 objective header %+v %v", h, err)
	}
	obj, _ = RemoveObjective(V1_20_3, "sidebar")
	if !bytes.Equal(obj.Payload, cat(str("sidebar"), []byte{1})) {
		t.Errorf("objective %x", obj.Payload)
	}
	if h, err := DecodeObjectiveHeader(cat(str("o"), []byte{0}, str(`{"text":"t"}`), vi(0)), V1_13); err != nil || h != (ScoreboardHeader{"o", 0}) {
		t.Errorf("objective create header %+v %v", h, err)
	}
	team, _ := RemoveTeam(V1_21_4, "red")
	if team.Type != PacketTeams || !bytes.Equal(team.Payload, cat(str("red"), []byte{1})) {
		t.Errorf("team %x", team.Payload)
	}
	if h, err := DecodeTeamHeader(team.Payload); err != nil || h != (ScoreboardHeader{"red", 1}) {
		t.Errorf("team header %+v %v", h, err)
	}

	hf, err := TabListHeaderFooter{}.Packet(V1_12_2)
	empty := str(`{"text":""}`)
	if err != nil || !bytes.Equal(hf.Payload, cat(empty, empty)) {
		t.Errorf("header reset %x %v", hf.Payload, err)
	}
	back, err := DecodeTabListHeaderFooter(hf.Payload, V1_12_2)
	if err != nil || DescriptionText(back.Header) != "" {
		t.Errorf("header decode %+v %v", back, err)
	}
	hf, _ = TabListHeaderFooter{}.Packet(V1_21_4)
	if _, err := DecodeTabListHeaderFooter(hf.Payload, V1_21_4); err != nil {
		t.Errorf("1.21.4 header decode: %v", err)
	}
}

func TestPlayerInfoTracking(t *testing.T) {
	a := [16]byte{0xA}
	b := [16]byte{0xB}
	props := cat(vi(1), str("textures"), str("dmFsdWU="), bo(true), str("c2ln"))
	tests := []struct {
		name string
		p    Protocol
		wire []byte
		want PlayerInfoChange
	}{
		{"1.7 online", V1_7_6, cat(str("Alice"), bo(true), be16(20)), PlayerInfoChange{AddedNames: []string{"Alice"}}},
		{"1.7 offline", V1_7_6, cat(str("Alice"), bo(false), be16(0)), PlayerInfoChange{RemovedNames: []string{"Alice"}}},
		{"1.8 add with display name", V1_8, cat(vi(0), vi(2),
			a[:], str("Alice"), props, vi(1), vi(30), bo(true), str(`{"text":"A"}`),
			b[:], str("Bob"), vi(0), vi(0), vi(5), bo(false)),
			PlayerInfoChange{Added: [][16]byte{a, b}}},
		{"1.12 latency update", V1_12_2, cat(vi(2), vi(1), a[:], vi(50)), PlayerInfoChange{}},
		{"1.16 remove", V1_16_4, cat(vi(4), vi(2), a[:], b[:]), PlayerInfoChange{Removed: [][16]byte{a, b}}},
		{"1.19 add with chat key", V1_19, cat(vi(0), vi(1), a[:], str("Alice"), vi(0), vi(0), vi(0), bo(false),
			bo(true), be64(99), vi(3), []byte{1, 2, 3}, vi(2), []byte{4, 5}), PlayerInfoChange{Added: [][16]byte{a}}},
		{"1.19.3 add, chat, listed, latency", V1_19_3, cat([]byte{0x01 | 0x02 | 0x08 | 0x10}, vi(1), a[:], str("Alice"), props,
			bo(true), b[:], be64(1), vi(2), []byte{9, 9}, vi(1), []byte{7}, bo(true), vi(12)), PlayerInfoChange{Added: [][16]byte{a}}},
		{"1.20.3 display name as NBT", V1_20_3, cat([]byte{0x20}, vi(1), a[:], bo(true), []byte{NBTString, 0, 1, 'A'}), PlayerInfoChange{}},
		{"1.21.4 list order and hat", V1_21_4, cat([]byte{0x01 | 0x40 | 0x80}, vi(1), a[:], str("Alice"), vi(0), vi(300), bo(true)),
			PlayerInfoChange{Added: [][16]byte{a}}},
	}
	for _, tc := range tests {
		got, err := DecodePlayerInfo(tc.wire, tc.p)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v %v", tc.name, got, err)
		}
		if _, err := DecodePlayerInfo(append(tc.wire, 0), tc.p); err == nil {
			t.Errorf("%s: trailing byte accepted", tc.name)
		}
	}
	if _, err := DecodePlayerInfo(cat(vi(7), vi(0)), V1_8); err == nil {
		t.Error("unknown legacy action accepted")
	}
	if _, err := DecodePlayerInfo(cat(vi(4), vi(1000)), V1_8); err == nil {
		t.Error("a count beyond the data accepted")
	}

	pks, err := RemovePlayers(V1_21_4, [][16]byte{a, b}, nil)
	if err != nil || len(pks) != 1 || pks[0].Type != PacketPlayerInfoRemove || !bytes.Equal(pks[0].Payload, cat(vi(2), a[:], b[:])) {
		t.Fatalf("1.21.4 removal %+v %v", pks, err)
	}
	if ids, err := DecodePlayerInfoRemove(pks[0].Payload); err != nil || !reflect.DeepEqual(ids, [][16]byte{a, b}) {
		t.Errorf("remove decode %v %v", ids, err)
	}
	pks, _ = RemovePlayers(V1_16_4, [][16]byte{a}, nil)
	if pks[0].Type != PacketPlayerInfo || !bytes.Equal(pks[0].Payload, cat(vi(4), vi(1), a[:])) {
		t.Errorf("1.16 removal %x", pks[0].Payload)
	}
	if ch, err := DecodePlayerInfo(pks[0].Payload, V1_16_4); err != nil || len(ch.Removed) != 1 {
		t.Errorf("1.16 removal decodes to %+v %v", ch, err)
	}
	pks, _ = RemovePlayers(V1_7_2, nil, []string{"Alice", "Bob"})
	if len(pks) != 2 || !bytes.Equal(pks[1].Payload, cat(str("Bob"), bo(false), be16(0))) {
		t.Errorf("1.7 removal %+v", pks)
	}
	if pks, _ := RemovePlayers(V1_21_4, nil, nil); len(pks) != 0 {
		t.Error("removing nobody sent a packet")
	}
}

func FuzzParseNBT(f *testing.F) {
	f.Add(testCodec().AppendTo(nil, true), true)
	f.Add(testCodec().AppendTo(nil, false), false)
	f.Fuzz(func(t *testing.T, b []byte, named bool) {
		n, used, err := ParseNBT(b, named)
		if err != nil {
			return
		}
		if used > len(b) {
			t.Fatalf("used %d of %d", used, len(b))
		}
		if n.Type == NBTCompound {
			n.Field("x")
		}
		if n.Type == NBTList {
			_, _ = n.Elements()
		}
	})
}

func FuzzDecodeRegistryData(f *testing.F) {
	d := RegistryData{Registry: "r", Entries: []RegistryEntry{{Key: "a"}, {Key: "b", Data: testDimensionNBT()}}}
	b, _ := d.AppendPayload(nil, V1_21_4)
	f.Add(b, true)
	b, _ = RegistryData{Codec: testCodec()}.AppendPayload(nil, V1_20_2)
	f.Add(b, false)
	f.Fuzz(func(t *testing.T, b []byte, split bool) {
		p := V1_20_3
		if split {
			p = V1_21_4
		}
		d, err := DecodeRegistryData(b, p)
		if err != nil {
			return
		}
		// VarInts may arrive in a longer form than ours: compare values.
		again, err := d.AppendPayload(nil, p)
		if err != nil {
			t.Fatalf("decoded but cannot re-encode: %v", err)
		}
		if back, err := DecodeRegistryData(again, p); err != nil || !reflect.DeepEqual(back, d) {
			t.Fatalf("round trip changed the packet: %v", err)
		}
	})
}

func FuzzDecodeKnownPacks(f *testing.F) {
	f.Add(KnownPacks{Packs: []KnownPack{CorePack("1.21")}}.AppendPayload(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := DecodeKnownPacks(b)
		if err != nil {
			return
		}
		if back, err := DecodeKnownPacks(k.AppendPayload(nil)); err != nil || !reflect.DeepEqual(back, k) {
			t.Fatalf("round trip changed the packet: %v", err)
		}
	})
}

func FuzzDecodeWorldPackets(f *testing.F) {
	for _, p := range []Protocol{V1_7_6, V1_8, V1_17, V1_21_4} {
		b, _ := PlayerPosition{X: 1}.AppendPayload(nil, p)
		f.Add(b, protoIndex(p))
		b, _ = SpawnPosition{Y: 1}.AppendPayload(nil, p)
		f.Add(b, protoIndex(p))
	}
	f.Fuzz(func(t *testing.T, b []byte, pb byte) {
		p := fuzzProtocol(pb)
		if pp, err := DecodePlayerPosition(b, p); err == nil {
			if _, err := pp.AppendPayload(nil, p); err != nil {
				t.Fatal(err)
			}
		}
		if sp, err := DecodeSpawnPosition(b, p); err == nil {
			if _, err := sp.AppendPayload(nil, p); err != nil {
				t.Fatal(err)
			}
		}
		_, _ = DecodeGameEvent(b)
	})
}

func FuzzDecodeChatPackets(f *testing.F) {
	for _, p := range []Protocol{V1_8, V1_16, V1_19, V1_20_3} {
		b, _ := SystemChat{Message: TextComponent("x")}.AppendPayload(nil, p)
		f.Add(b, protoIndex(p), byte(0))
		pk, _ := Title{Action: TitleShow, Text: TextComponent("x")}.Packet(p)
		f.Add(pk.Payload, protoIndex(p), byte(1))
	}
	types := []PacketType{PacketTitle, PacketSetTitleText, PacketSetActionBarText, PacketSetTitleTimes, PacketClearTitles}
	f.Fuzz(func(t *testing.T, b []byte, pb, which byte) {
		p := fuzzProtocol(pb)
		if m, err := DecodeSystemChat(b, p); err == nil && !(m.ActionBar && p.Before(V1_8)) {
			if _, err := m.AppendPayload(nil, p); err != nil {
				t.Fatalf("system chat decoded but cannot re-encode: %v", err)
			}
		}
		_, _ = DecodeTitle(types[int(which)%len(types)], b, p)
		_, _ = DecodeTabListHeaderFooter(b, p)
	})
}

func FuzzDecodeCleanupPackets(f *testing.F) {
	a := [16]byte{1}
	for _, p := range []Protocol{V1_7_6, V1_8, V1_19, V1_19_3, V1_21_4} {
		pks, _ := RemovePlayers(p, [][16]byte{a}, []string{"A"})
		f.Add(pks[0].Payload, protoIndex(p))
	}
	f.Fuzz(func(t *testing.T, b []byte, pb byte) {
		p := fuzzProtocol(pb)
		_, _ = DecodePlayerInfo(b, p)
		_, _ = DecodePlayerInfoRemove(b)
		_, _ = DecodeBossBarHeader(b)
		_, _ = DecodeObjectiveHeader(b, p)
		_, _ = DecodeTeamHeader(b)
	})
}
