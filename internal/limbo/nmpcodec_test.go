package limbo_test

import (
	"testing"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// nmpNames is what minecraft-data calls our packet types.
var nmpNames = map[mc.PacketType]string{
	mc.PacketJoinGame: "login", mc.PacketRespawn: "respawn", mc.PacketKeepAlive: "keep_alive",
	mc.PacketPlayerPosition: "position", mc.PacketSpawnPosition: "spawn_position", mc.PacketGameEvent: "game_state_change",
	mc.PacketBossBar: "boss_bar", mc.PacketPlayerInfo: "player_info", mc.PacketPlayerInfoRemove: "player_remove",
	mc.PacketScoreboardObjective: "scoreboard_objective", mc.PacketTeams: "teams", mc.PacketTabListHeaderFooter: "playerlist_header",
	mc.PacketTitle: "title", mc.PacketSetTitleText: "set_title_text", mc.PacketSetSubtitleText: "set_title_subtitle",
	mc.PacketSetActionBarText: "action_bar", mc.PacketSetTitleTimes: "set_title_time", mc.PacketClearTitles: "clear_titles",
	mc.PacketSystemChat: "system_chat", mc.PacketDisconnect: "kick_disconnect", mc.PacketStartConfiguration: "start_configuration",
	mc.PacketRegistryData: "registry_data", mc.PacketKnownPacks: "select_known_packs", mc.PacketFinishConfiguration: "finish_configuration",
}

func nmpName(t mc.PacketType, p mc.Protocol) string {
	switch {
	case t == mc.PacketSystemChat && p.Before(mc.V1_19):
		return "chat"
	case t == mc.PacketTeams && p.Before(mc.V1_9):
		return "scoreboard_team"
	}
	return nmpNames[t]
}

// playPackets is every play packet the limbo and a switch write, encoded for p.
func playPackets(t *testing.T, p mc.Protocol, jg mc.JoinGame) []mc.Packet {
	t.Helper()
	var out []mc.Packet
	add := func(ty mc.PacketType, payload []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%v %s: %v", p, ty, err)
		}
		out = append(out, mc.Packet{Type: ty, Payload: payload})
	}
	addPk := func(pk mc.Packet, err error) { t.Helper(); add(pk.Type, pk.Payload, err) }
	seq, err := jg.SwitchSequence(p)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, seq...)
	jp, err := jg.AppendPayload(nil, p)
	add(mc.PacketJoinGame, jp, err)
	rp, err := jg.Respawn().AppendPayload(nil, p)
	add(mc.PacketRespawn, rp, err)
	add(mc.PacketKeepAlive, mc.KeepAlive{ID: 7}.AppendPayload(nil, p), nil)
	pos, err := mc.PlayerPosition{X: 0.5, Y: 300, Z: 0.5, TeleportID: 1}.AppendPayload(nil, p)
	add(mc.PacketPlayerPosition, pos, err)
	sp, err := mc.SpawnPosition{Y: 300, Dimension: "minecraft:the_end"}.AppendPayload(nil, p)
	add(mc.PacketSpawnPosition, sp, err)
	add(mc.PacketGameEvent, mc.GameEvent{Event: mc.GameEventStartWaitingForChunks}.AppendPayload(nil), nil)
	chat, err := mc.SystemChat{Message: mc.TextComponent("hello")}.AppendPayload(nil, p)
	add(mc.PacketSystemChat, chat, err)
	kick, err := mc.DisconnectText("bye").AppendPayload(nil, p, mc.PlayState)
	add(mc.PacketDisconnect, kick, err)
	if p.AtLeast(mc.V1_8) {
		for _, ti := range []mc.Title{
			{Action: mc.TitleTimes, Stay: 100}, {Action: mc.TitleSubtitle, Text: mc.TextComponent("sub")},
			{Action: mc.TitleShow, Text: mc.TextComponent("title")}, {Action: mc.TitleActionBar, Text: mc.TextComponent("bar")},
			{Action: mc.TitleHide}, {Action: mc.TitleReset},
		} {
			addPk(ti.Packet(p))
		}
		addPk(mc.TabListHeaderFooter{}.Packet(p))
	}
	id := [16]byte{1, 2, 3}
	if p.AtLeast(mc.V1_9) {
		addPk(mc.RemoveBossBar(p, id))
	}
	rm, err := mc.RemovePlayers(p, [][16]byte{id}, []string{"Ghost"})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, rm...)
	addPk(mc.RemoveObjective(p, "sidebar"))
	addPk(mc.RemoveTeam(p, "red"))
	if p.AtLeast(mc.V1_20_2) {
		add(mc.PacketStartConfiguration, nil, nil)
	}
	return out
}

func frames(t *testing.T, reg *mc.Registry, s mc.State, pks []mc.Packet) [][]byte {
	t.Helper()
	out := make([][]byte, len(pks))
	for i, pk := range pks {
		id, ok := reg.ID(s, mc.Clientbound, pk.Type)
		if !ok {
			t.Fatalf("%v: no %s id in %s", reg.Protocol(), pk.Type, s)
		}
		out[i] = append(mc.AppendVarInt(nil, id), pk.Payload...)
	}
	return out
}

// limboJoinGame is the join game the limbo sends p (bundled data) or, for a
// version without it, one with the same fields and no registries.
func limboJoinGame(t *testing.T, p mc.Protocol) (mc.JoinGame, []mc.RegistryData) {
	t.Helper()
	jg, regs, err := limbo.Describe(limbo.DefaultRegistries, p, limbo.TheEnd)
	if err == nil {
		return jg, regs
	}
	jg = mc.JoinGame{EntityID: 1, MaxPlayers: 1, WorldNames: []string{"minecraft:the_end"}, Spawn: mc.SpawnInfo{
		GameMode: 3, PreviousGameMode: -1, DimensionType: "minecraft:the_end", WorldName: "minecraft:the_end", DimensionTypeID: 2, SeaLevel: 63}}
	return jg, nil
}

// Every packet the limbo and a switch write parses with node-minecraft-
// protocol's definitions (minecraft-data) for every version from 1.7 to the
// newest layout: the right packet for the id, every byte read, the fields
// where they belong.
func TestCodecsMatchMinecraftData(t *testing.T) {
	d := nmp.Setup(t).StartDecoder(t)
	versions := []string{"1.7.10", "1.8.8", "1.9", "1.9.2", "1.9.4", "1.10.2", "1.11.2", "1.12", "1.12.1", "1.12.2",
		"1.13.2", "1.14.4", "1.15.2", "1.16.1", "1.16.5", "1.17.1", "1.18.2", "1.19", "1.19.2", "1.19.3", "1.19.4",
		"1.20.1", "1.20.2", "1.20.4", "1.20.6", "1.21.1", "1.21.3", "1.21.4", "1.21.5", "1.21.6", "1.21.8", "1.21.10",
		"1.21.11", "26.1"}
	for _, v := range versions {
		p, ok := mc.ParseVersion(v)
		if !ok {
			t.Fatalf("%s not in the version table", v)
		}
		reg, _ := mc.RegistryFor(p)
		jg, regs := limboJoinGame(t, p)
		pks := playPackets(t, p, jg)
		check := func(state string, pks []mc.Packet, got []nmp.Decoded) {
			if len(got) != len(pks) {
				t.Fatalf("%s: %d results for %d packets", v, len(got), len(pks))
			}
			for i, r := range got {
				want := nmpName(pks[i].Type, p)
				switch {
				case r.Error != "":
					t.Errorf("%s %s %s: nmp cannot parse it: %s", v, state, pks[i].Type, r.Error)
				case r.Name != want:
					t.Errorf("%s %s %s: nmp reads packet %q", v, state, pks[i].Type, r.Name)
				case r.Read != r.Length:
					t.Errorf("%s %s %s: nmp's definition reads %d of %d bytes", v, state, pks[i].Type, r.Read, r.Length)
				}
			}
		}
		got := d.Decode(v, "play", frames(t, reg, mc.PlayState, pks))
		check("play", pks, got)
		if got[0].Name == "login" {
			if id, _ := got[0].Params["entityId"].(float64); id != 1 {
				t.Errorf("%s: entity id %v", v, got[0].Params["entityId"])
			}
		}
		if p.AtLeast(mc.V1_20_2) {
			cfg := []mc.Packet{{Type: mc.PacketFinishConfiguration}, {Type: mc.PacketKeepAlive, Payload: mc.KeepAlive{ID: 3}.AppendPayload(nil, p)}}
			if p.AtLeast(mc.V1_20_5) {
				cfg = append(cfg, mc.Packet{Type: mc.PacketKnownPacks, Payload: mc.KnownPacks{Packs: []mc.KnownPack{mc.CorePack(v)}}.AppendPayload(nil)})
			}
			for _, r := range regs {
				payload, err := r.AppendPayload(nil, p)
				if err != nil {
					t.Fatal(err)
				}
				cfg = append(cfg, mc.Packet{Type: mc.PacketRegistryData, Payload: payload})
				if p.AtLeast(mc.V1_20_5) {
					lean := mc.RegistryData{Registry: r.Registry}
					for _, e := range r.Entries {
						lean.Entries = append(lean.Entries, mc.RegistryEntry{Key: e.Key})
					}
					payload, _ := lean.AppendPayload(nil, p)
					cfg = append(cfg, mc.Packet{Type: mc.PacketRegistryData, Payload: payload})
				}
			}
			check("configuration", cfg, d.Decode(v, "configuration", frames(t, reg, mc.ConfigState, cfg)))
		}
	}
}
