package limbo

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// coveredProtocols are the versions the bundled data serves.
func coveredProtocols() []mc.Protocol {
	var out []mc.Protocol
	for _, p := range mc.KnownProtocols() {
		if DefaultRegistries.Covers(p) {
			out = append(out, p)
		}
	}
	return out
}

func TestCoverage(t *testing.T) {
	want := map[mc.Protocol]bool{}
	for _, p := range mc.KnownProtocols() {
		switch {
		case p > mc.NewestLayout: // 26.2, 26.3: no layout source yet
		case p.AtLeast(mc.V1_21_5) && p.Before(mc.V1_21_11): // no usable capture
		default:
			want[p] = true
		}
	}
	for _, p := range mc.KnownProtocols() {
		if got := DefaultRegistries.Covers(p); got != want[p] {
			t.Errorf("%v: covered = %v, want %v", p, got, want[p])
		}
	}
	for _, name := range []string{"1.8.8", "1.12.2", "1.16.5", "1.19.4", "1.20.4", "1.21.4", "1.21.11", "26.1"} {
		p, _ := mc.ParseVersion(name)
		if !DefaultRegistries.Covers(p) {
			t.Errorf("%s must be covered", name)
		}
	}
}

// Every bundled capture decodes and yields the three vanilla dimensions,
// with the player placed above the build height.
func TestBundledRegistries(t *testing.T) {
	r := NewRegistries()
	for p := range bundledFiles {
		for _, d := range []Dimension{TheEnd, Overworld, Nether} {
			w, err := r.world(p, d, false)
			if err != nil {
				t.Fatalf("%v %v: %v", p, d, err)
			}
			paths := []*regPath{w.direct}
			if p.AtLeast(mc.V1_20_5) {
				if w.full == nil || w.lean == nil || len(w.packs) == 0 {
					t.Fatalf("%v: bundled data must give a full and a lean path", p)
				}
				for _, pk := range w.packs {
					if !pk.IsCore() {
						t.Errorf("%v: offers %+v", p, pk)
					}
				}
				paths = []*regPath{w.full, w.lean}
			}
			for _, path := range paths {
				jg, err := mc.DecodeJoinGame(path.joinBytes, p)
				if err != nil {
					t.Fatalf("%v: join game: %v", p, err)
				}
				if jg.Spawn.WorldName != d.key() {
					t.Errorf("%v: world %q, want %q", p, jg.Spawn.WorldName, d.key())
				}
				top := map[Dimension]float64{TheEnd: 256, Overworld: 256, Nether: 256}[d]
				if p.AtLeast(mc.V1_18) && d == Overworld {
					top = 320
				}
				if path.y <= top {
					t.Errorf("%v %v: y %v is not above the build height %v", p, d, path.y, top)
				}
				for _, payload := range path.registries {
					if _, err := mc.DecodeRegistryData(payload, p); err != nil {
						t.Fatalf("%v: registry data: %v", p, err)
					}
				}
			}
		}
	}
}

// The 1.20.5+ entry lists carry what vanilla clients require: the dimension
// types, plains, and (from 1.19.4) the damage types their code looks up.
func TestBundledRegistryContents(t *testing.T) {
	r := NewRegistries()
	for _, p := range []mc.Protocol{mc.V1_20_5, mc.V1_21, mc.V1_21_4, mc.V1_21_11, mc.V26_1} {
		r.mu.Lock()
		s, err := r.loadBundled(p)
		r.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]map[string]bool{}
		for _, reg := range s.registries {
			keys[reg.Registry] = map[string]bool{}
			for _, e := range reg.Entries {
				keys[reg.Registry][e.Key] = true
				if e.Data.IsZero() {
					t.Errorf("%v: %s %s without data", p, reg.Registry, e.Key)
				}
			}
		}
		for _, need := range [][2]string{
			{"minecraft:dimension_type", "minecraft:the_end"}, {"minecraft:worldgen/biome", "minecraft:plains"},
			{"minecraft:damage_type", "minecraft:fall"}, {"minecraft:chat_type", "minecraft:chat"},
		} {
			if !keys[need[0]][need[1]] {
				t.Errorf("%v: %s lacks %s", p, need[0], need[1])
			}
		}
		if p.AtLeast(mc.V1_21_11) && len(keys["minecraft:zombie_nautilus_variant"]) == 0 {
			t.Errorf("%v: the variant registries 1.21.5+ clients require are missing", p)
		}
	}
}

// Enter works for every covered version, fresh from login and compressed.
func TestEnterEveryVersion(t *testing.T) {
	for _, p := range coveredProtocols() {
		state := mc.PlayState
		if p.AtLeast(mc.V1_20_2) {
			state = mc.ConfigState
		}
		player, client := pair(t, p, state, 64)
		done := make(chan error, 1)
		go func() { done <- Enter(player, World{}) }()
		jg, regs, pos := client.join(nil)
		if err := <-done; err != nil {
			t.Fatalf("%v: Enter: %v", p, err)
		}
		if player.State != mc.PlayState || !player.Spawned {
			t.Errorf("%v: player left in %s, spawned %v", p, player.State, player.Spawned)
		}
		wantMode := mc.GameModeSpectator
		if p.Before(mc.V1_8) {
			wantMode = mc.GameModeAdventure
		}
		if jg.Spawn.GameMode != wantMode {
			t.Errorf("%v: game mode %d", p, jg.Spawn.GameMode)
		}
		if p.Before(mc.V1_16) && jg.Spawn.Dimension != mc.DimensionEnd {
			t.Errorf("%v: dimension %d", p, jg.Spawn.Dimension)
		}
		if p.AtLeast(mc.V1_16) && jg.Spawn.WorldName != "minecraft:the_end" {
			t.Errorf("%v: world %q", p, jg.Spawn.WorldName)
		}
		if pos.Y < 256 {
			t.Errorf("%v: placed at y %v, inside the build height", p, pos.Y)
		}
		if p.AtLeast(mc.V1_20_5) {
			// nmp and modded clients answer no pack: every entry carries data.
			for _, r := range regs {
				for _, e := range r.Entries {
					if e.Data.IsZero() {
						t.Fatalf("%v: %s %s sent without data to a client that knows no pack", p, r.Registry, e.Key)
					}
				}
			}
			idx := -1
			for _, r := range regs {
				if r.Registry == "minecraft:dimension_type" {
					for i, e := range r.Entries {
						if e.Key == "minecraft:the_end" {
							idx = i
						}
					}
				}
			}
			if int32(idx) != jg.Spawn.DimensionTypeID {
				t.Errorf("%v: join game names dimension type %d, the_end is %d", p, jg.Spawn.DimensionTypeID, idx)
			}
		}
		client.quiet()
	}
}

// A vanilla client knows its release's core pack: entries then travel
// without data, and the join game still points at the_end.
func TestEnterKnownPacks(t *testing.T) {
	for _, p := range []mc.Protocol{mc.V1_20_5, mc.V1_21, mc.V1_21_4, mc.V26_1} {
		player, client := pair(t, p, mc.ConfigState, -1)
		done := make(chan error, 1)
		go func() { done <- Enter(player, World{}) }()
		names := p.Names()
		jg, regs, _ := client.join([]mc.KnownPack{mc.CorePack(names[len(names)-1])})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for _, r := range regs {
			for _, e := range r.Entries {
				if !e.Data.IsZero() {
					t.Fatalf("%v: %s %s carries data to a client that knows the core pack", p, r.Registry, e.Key)
				}
			}
		}
		if len(regs) < 8 {
			t.Errorf("%v: only %d registries", p, len(regs))
		}
		var end int32 = -1
		for _, r := range regs {
			for i, e := range r.Entries {
				if r.Registry == "minecraft:dimension_type" && e.Key == "minecraft:the_end" {
					end = int32(i)
				}
			}
		}
		if jg.Spawn.DimensionTypeID != end {
			t.Errorf("%v: dimension type %d, the_end is %d", p, jg.Spawn.DimensionTypeID, end)
		}
	}
}

// A 1.20.2+ player coming from a backend goes back through configuration;
// an older one gets the join game sequence that resets its world.
func TestEnterFromPlay(t *testing.T) {
	for _, p := range []mc.Protocol{mc.V1_8, mc.V1_12_2, mc.V1_16_4, mc.V1_19_4, mc.V1_20_3, mc.V1_21_4} {
		player, client := pair(t, p, mc.PlayState, -1)
		player.Spawned = true
		done := make(chan error, 1)
		go func() { done <- Enter(player, World{Dimension: Overworld}) }()
		if p.AtLeast(mc.V1_20_2) {
			client.expect(mc.PacketStartConfiguration)
			client.sendRaw(0x7E, []byte{1, 2, 3}) // a play packet still in flight is dropped
			client.send(mc.PacketConfigurationAck, nil)
			client.state = mc.ConfigState
			jg, _, _ := client.join(nil)
			if jg.Spawn.WorldName != "minecraft:overworld" {
				t.Errorf("%v: world %q", p, jg.Spawn.WorldName)
			}
		} else {
			jg, err := mc.DecodeJoinGame(client.expect(mc.PacketJoinGame).Payload, p)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := mc.DecodeRespawn(client.expect(mc.PacketRespawn).Payload, p)
			if err != nil {
				t.Fatal(err)
			}
			if p.Before(mc.V1_16) {
				if jg.Spawn.Dimension == mc.DimensionOverworld || rs.Spawn.Dimension != mc.DimensionOverworld {
					t.Errorf("%v: flip %d -> %d", p, jg.Spawn.Dimension, rs.Spawn.Dimension)
				}
			} else if rs.Spawn.WorldName != "minecraft:overworld" {
				t.Errorf("%v: respawn into %q", p, rs.Spawn.WorldName)
			}
			client.expect(mc.PacketPlayerPosition)
			client.expect(mc.PacketSpawnPosition)
		}
		if err := <-done; err != nil {
			t.Fatalf("%v: %v", p, err)
		}
	}
}

func TestEnterRefusals(t *testing.T) {
	player, _ := pair(t, mc.V1_20_3, mc.LoginState, -1)
	if err := Enter(player, World{}); err == nil {
		t.Error("Enter from login accepted")
	}
	player, _ = pair(t, mc.V1_19_4, mc.ConfigState, -1)
	if err := Enter(player, World{}); err == nil {
		t.Error("a 1.19.4 client in configuration accepted")
	}
	player, _ = pair(t, mc.V1_21_5, mc.ConfigState, -1)
	if err := Enter(player, World{}); !errors.Is(err, ErrNoRegistries) {
		t.Errorf("1.21.5 without data: %v", err)
	}
	player, _ = pair(t, mc.V26_3, mc.ConfigState, -1)
	if err := Enter(player, World{}); !errors.Is(err, mc.ErrNoLayout) {
		t.Errorf("26.3: %v", err)
	}
}

// A backend's registries fill a version with no bundle: its entries without
// data go to a client that knows the packs it relied on, and nobody else.
func TestLearnConfiguration(t *testing.T) {
	r := NewRegistries()
	p := mc.V1_21_5
	pack := mc.CorePack("1.21.5")
	data := []mc.RegistryData{
		{Registry: "minecraft:dimension_type", Entries: []mc.RegistryEntry{{Key: "minecraft:overworld"}, {Key: "minecraft:the_end"}}},
		{Registry: "minecraft:worldgen/biome", Entries: []mc.RegistryEntry{{Key: "minecraft:plains"}}},
	}
	if r.Covers(p) {
		t.Fatal("1.21.5 covered before learning")
	}
	if err := r.LearnConfiguration(p, []mc.KnownPack{pack}, data); err != nil {
		t.Fatal(err)
	}
	if !r.Covers(p) {
		t.Fatal("1.21.5 not covered after learning")
	}
	player, client := pair(t, p, mc.ConfigState, -1)
	done := make(chan error, 1)
	go func() { done <- Enter(player, World{Registries: r}) }()
	offer, err := mc.DecodeKnownPacks(client.expect(mc.PacketKnownPacks).Payload)
	if err != nil || len(offer.Packs) != 1 || offer.Packs[0] != pack {
		t.Fatalf("offer %+v %v", offer, err)
	}
	client.send(mc.PacketKnownPacks, mc.KnownPacks{Packs: []mc.KnownPack{pack}}.AppendPayload(nil))
	client.state = mc.ConfigState
	var regs []mc.RegistryData
	for {
		f := client.next()
		if ty, _ := client.reg.Type(mc.ConfigState, mc.Clientbound, f.ID); ty == mc.PacketFinishConfiguration {
			break
		}
		d, _ := mc.DecodeRegistryData(f.Payload, p)
		regs = append(regs, d)
	}
	client.send(mc.PacketFinishConfiguration, nil)
	client.state = mc.PlayState
	jg, _ := mc.DecodeJoinGame(client.expect(mc.PacketJoinGame).Payload, p)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(regs) != 2 || jg.Spawn.DimensionTypeID != 1 || jg.Spawn.WorldName != "minecraft:the_end" {
		t.Errorf("learnt world: %d registries, dimension %d %q", len(regs), jg.Spawn.DimensionTypeID, jg.Spawn.WorldName)
	}

	// A client that does not know the pack cannot be served from it.
	player, client = pair(t, p, mc.ConfigState, -1)
	go func() { done <- Enter(player, World{Registries: r}) }()
	client.expect(mc.PacketKnownPacks)
	client.send(mc.PacketKnownPacks, mc.KnownPacks{}.AppendPayload(nil))
	if err := <-done; !errors.Is(err, ErrNoRegistries) {
		t.Errorf("client without the pack: %v", err)
	}

	if err := r.LearnConfiguration(p, nil, []mc.RegistryData{{Registry: "minecraft:worldgen/biome"}}); err == nil {
		t.Error("registries without dimension types learnt")
	}
	if err := r.LearnJoinGame(mc.V1_16_4, mc.JoinGame{}); err == nil {
		t.Error("join game without codec learnt")
	}
}

// Learnt data replaces the bundle only when asked to.
func TestLearnJoinGamePreference(t *testing.T) {
	r := NewRegistries()
	p := mc.V1_19_4
	custom := (&mc.CompoundBuilder{}).Tag("minecraft:dimension_type", (&mc.CompoundBuilder{}).
		String("type", "minecraft:dimension_type").
		List("value", mc.NBTCompound, (&mc.CompoundBuilder{}).String("name", "custom:void").Int("id", 0).
			Tag("element", (&mc.CompoundBuilder{}).Int("min_y", 0).Int("height", 64).Build()).Build()).Build()).Build()
	if err := r.LearnJoinGame(p, mc.JoinGame{RegistryCodec: custom}); err != nil {
		t.Fatal(err)
	}
	w, err := r.world(p, TheEnd, false)
	if err != nil || w.direct.join.Spawn.WorldName != "minecraft:the_end" {
		t.Fatalf("bundled should win: %v", err)
	}
	r.PreferLearnt = true
	if err := r.LearnJoinGame(p, mc.JoinGame{RegistryCodec: custom}); err != nil {
		t.Fatal(err)
	}
	w, err = r.world(p, TheEnd, false)
	if err != nil || w.direct.join.Spawn.WorldName != "custom:void" || w.direct.y != 80 {
		t.Fatalf("learnt should win: %+v %v", w, err)
	}
}

func TestRejoin(t *testing.T) {
	player, client := pair(t, mc.V1_12_2, mc.PlayState, -1)
	player.Spawned = true
	jg := mc.JoinGame{EntityID: 42, MaxPlayers: 20, Spawn: mc.SpawnInfo{Dimension: mc.DimensionNether, LevelType: "default"}}
	if err := Rejoin(player, jg); err != nil {
		t.Fatal(err)
	}
	first, _ := mc.DecodeJoinGame(client.expect(mc.PacketJoinGame).Payload, mc.V1_12_2)
	second, _ := mc.DecodeRespawn(client.expect(mc.PacketRespawn).Payload, mc.V1_12_2)
	if first.EntityID != 42 || first.Spawn.Dimension == mc.DimensionNether || second.Spawn.Dimension != mc.DimensionNether {
		t.Errorf("rejoin %+v then %+v", first, second)
	}
	player.State = mc.ConfigState
	if err := Rejoin(player, jg); err == nil {
		t.Error("rejoin from configuration accepted")
	}
}

func TestStartConfiguration(t *testing.T) {
	player, client := pair(t, mc.V1_21_4, mc.PlayState, -1)
	done := make(chan error, 1)
	go func() { done <- StartConfiguration(player) }()
	client.expect(mc.PacketStartConfiguration)
	client.send(mc.PacketKeepAlive, mc.KeepAlive{ID: 7}.AppendPayload(nil, mc.V1_21_4))
	client.send(mc.PacketConfigurationAck, nil)
	if err := <-done; err != nil || player.State != mc.ConfigState {
		t.Fatalf("%v, state %s", err, player.State)
	}
	old, _ := pair(t, mc.V1_19_4, mc.PlayState, -1)
	if err := StartConfiguration(old); err == nil {
		t.Error("1.19.4 start configuration accepted")
	}
	// A client that never acknowledges is bounded by the caller's deadline.
	player, _ = pair(t, mc.V1_20_3, mc.PlayState, -1)
	_ = player.Net.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if err := StartConfiguration(player); err == nil {
		t.Error("no acknowledgement accepted")
	}
}

func TestParseDimension(t *testing.T) {
	for in, want := range map[string]Dimension{"the_end": TheEnd, "minecraft:overworld": Overworld, "nether": Nether} {
		if got, ok := ParseDimension(in); !ok || got != want {
			t.Errorf("%q: %v %v", in, got, ok)
		}
	}
	if _, ok := ParseDimension("moon"); ok {
		t.Error("moon parsed")
	}
}

// ctxWithCancel is context.WithCancel, cancelled at the test's end.
func ctxWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx, cancel
}

func TestLeftovers(t *testing.T) {
	x, y := [16]byte{0xA}, [16]byte{0xB}
	for _, p := range []mc.Protocol{mc.V1_7_6, mc.V1_12_2, mc.V1_19_1, mc.V1_21_4} {
		var l Leftovers
		observe := func(ty mc.PacketType, payload []byte) {
			t.Helper()
			if !Tracks(ty) {
				t.Fatalf("%s not tracked", ty)
			}
			if err := l.Observe(p, ty, payload); err != nil {
				t.Fatalf("%v %s: %v", p, ty, err)
			}
		}
		bar := func(id [16]byte, action int32) []byte { return mc.AppendVarInt(append([]byte(nil), id[:]...), action) }
		if p.AtLeast(mc.V1_9) {
			observe(mc.PacketBossBar, append(bar(x, 0), mc.AppendString(nil, `{"text":"x"}`)...))
			observe(mc.PacketBossBar, bar(y, 0))
			observe(mc.PacketBossBar, bar(y, 1))
		}
		switch {
		case p.Before(mc.V1_8):
			for _, n := range []string{"Alice", "Bob"} {
				observe(mc.PacketPlayerInfo, append(mc.AppendString(nil, n), 1, 0, 5))
			}
			observe(mc.PacketPlayerInfo, append(mc.AppendString(nil, "Bob"), 0, 0, 0))
		case p.Before(mc.V1_19_3):
			add := mc.AppendVarInt(mc.AppendVarInt(nil, 0), 2)
			for _, id := range [][16]byte{x, y} {
				add = append(append(add, id[:]...), mc.AppendString(nil, "P")...)
				add = append(add, 0, 0, 0, 0) // no properties, game mode, latency, no display name
				if p.AtLeast(mc.V1_19) {
					add = append(add, 0) // no chat key
				}
			}
			observe(mc.PacketPlayerInfo, add)
			rm, _ := mc.RemovePlayers(p, [][16]byte{y}, nil)
			observe(rm[0].Type, rm[0].Payload)
		default:
			add := append([]byte{0x01}, mc.AppendVarInt(nil, 2)...)
			for _, id := range [][16]byte{x, y} {
				add = append(append(add, id[:]...), append(mc.AppendString(nil, "P"), 0)...)
			}
			observe(mc.PacketPlayerInfo, add)
			rm, _ := mc.RemovePlayers(p, [][16]byte{y}, nil)
			observe(rm[0].Type, rm[0].Payload)
		}
		for _, name := range []string{"o1", "o2"} {
			create := mc.AppendString(nil, name)
			if p.Before(mc.V1_8) {
				create = mc.AppendString(create, "Display")
			}
			observe(mc.PacketScoreboardObjective, append(create, 0))
		}
		o2, _ := mc.RemoveObjective(p, "o2")
		observe(mc.PacketScoreboardObjective, o2.Payload)
		observe(mc.PacketTeams, append(mc.AppendString(nil, "red"), 0))
		if p.AtLeast(mc.V1_8) {
			hf, _ := mc.TabListHeaderFooter{Header: mc.TextComponent("h")}.Packet(p)
			observe(mc.PacketTabListHeaderFooter, hf.Payload)
			ti, _ := mc.Title{Action: mc.TitleShow, Text: mc.TextComponent("t")}.Packet(p)
			observe(ti.Type, ti.Payload)
		}
		pks, err := l.Clear(p)
		if err != nil {
			t.Fatal(err)
		}
		got := map[mc.PacketType]int{}
		for _, pk := range pks {
			got[pk.Type]++
			switch pk.Type {
			case mc.PacketBossBar:
				if h, _ := mc.DecodeBossBarHeader(pk.Payload); h.ID != x || h.Action != mc.BossBarRemove {
					t.Errorf("%v: removes bar %+v", p, h)
				}
			case mc.PacketPlayerInfo, mc.PacketPlayerInfoRemove:
				if pk.Type == mc.PacketPlayerInfoRemove {
					ids, _ := mc.DecodePlayerInfoRemove(pk.Payload)
					if len(ids) != 1 || ids[0] != x {
						t.Errorf("%v: removes players %x", p, ids)
					}
				} else if ch, _ := mc.DecodePlayerInfo(pk.Payload, p); len(ch.Removed)+len(ch.RemovedNames) != 1 {
					t.Errorf("%v: removes %+v", p, ch)
				}
			case mc.PacketScoreboardObjective:
				if h, _ := mc.DecodeObjectiveHeader(pk.Payload, p); h.Name != "o1" || h.Mode != mc.ScoreboardRemove {
					t.Errorf("%v: removes objective %+v", p, h)
				}
			}
		}
		want := map[mc.PacketType]int{mc.PacketScoreboardObjective: 1, mc.PacketTeams: 1}
		switch {
		case p.Before(mc.V1_8):
			want[mc.PacketPlayerInfo] = 1
		case p.Before(mc.V1_17):
			want[mc.PacketBossBar], want[mc.PacketPlayerInfo], want[mc.PacketTabListHeaderFooter], want[mc.PacketTitle] = 1, 1, 1, 1
		default:
			want[mc.PacketBossBar], want[mc.PacketPlayerInfoRemove], want[mc.PacketTabListHeaderFooter], want[mc.PacketClearTitles] = 1, 1, 1, 1
		}
		if p.Before(mc.V1_19_3) && p.AtLeast(mc.V1_17) {
			delete(want, mc.PacketPlayerInfoRemove)
			want[mc.PacketPlayerInfo] = 1
		}
		if len(got) != len(want) {
			t.Errorf("%v: cleanup %v, want %v", p, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%v: %d %s, want %d", p, got[k], k, v)
			}
		}
		if again, _ := l.Clear(p); len(again) != 0 {
			t.Errorf("%v: a second clear sent %d packets", p, len(again))
		}
	}
	var l Leftovers
	for i := range maxLeftovers + 100 {
		id := [16]byte{byte(i), byte(i >> 8), 1}
		_ = l.Observe(mc.V1_21_4, mc.PacketBossBar, mc.AppendVarInt(id[:], 0))
	}
	if len(l.bossBars) != maxLeftovers {
		t.Errorf("tracked %d bars, cap %d", len(l.bossBars), maxLeftovers)
	}
	if err := l.Observe(mc.V1_21_4, mc.PacketBossBar, []byte{1}); err == nil {
		t.Error("a truncated boss bar was accepted")
	}
	if Tracks(mc.PacketKeepAlive) {
		t.Error("keep-alives tracked")
	}
}

// The client's settings and brand, sent once after login, survive the limbo
// for the next backend.
func TestClientSettingsKept(t *testing.T) {
	p := mc.V1_20_3
	player, client := pair(t, p, mc.ConfigState, -1)
	done := make(chan error, 1)
	go func() { done <- Enter(player, World{}) }()
	settings := append(mc.AppendString(nil, "fr_fr"), 12, 0, 1, 0x7F, 1, 0, 1)
	client.send(mc.PacketClientInformation, settings)
	brand, _ := mc.PluginMessage{Channel: "minecraft:brand", Data: mc.AppendString(nil, "vanilla")}.AppendPayload(nil, p)
	client.send(mc.PacketPluginMessage, brand)
	client.join(nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if string(player.ClientInformation) != string(settings) || string(player.Brand) != string(mc.AppendString(nil, "vanilla")) {
		t.Fatalf("kept %x / %q", player.ClientInformation, player.Brand)
	}
	// Changed settings while held replace them.
	ctx, cancel := ctxWithCancel(t)
	go func() { done <- Hold(ctx, player, HoldOptions{}) }()
	client.nextOf(mc.PacketKeepAlive)
	settings2 := append(mc.AppendString(nil, "de_de"), 8, 0, 1, 0x7F, 1, 0, 1)
	client.send(mc.PacketClientInformation, settings2)
	cancel()
	ka, err := mc.DecodeKeepAlive(client.nextOf(mc.PacketKeepAlive).Payload, p)
	if err != nil {
		t.Fatal(err)
	}
	client.send(mc.PacketKeepAlive, ka.AppendPayload(nil, p))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if string(player.ClientInformation) != string(settings2) {
		t.Errorf("settings sent while held not kept: %x", player.ClientInformation)
	}
}

func TestBundledProtocols(t *testing.T) {
	got := BundledProtocols()
	if len(got) != len(bundledFiles) || got[0] != mc.V1_16 || got[len(got)-1] != mc.V26_1 {
		t.Fatalf("bundled %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("not ascending: %v", got)
		}
	}
}
