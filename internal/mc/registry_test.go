package mc

import (
	"testing"
)

const none = -1

// verifiedPlayIDs were read from minecraft-data (data/pc/<version>/protocol.json,
// PrismarineJS/minecraft-data at 2026-08-17) and each equals Gate's state
// registry (minekube/gate pkg/edition/java/proto/state/register.go at
// 2026-08-08), two sources written independently of each other.
var verifiedPlayIDs = []struct {
	version                                                string
	cbKeepAlive, joinGame, respawn, cbDisconnect, cbPlugin int32
	sbKeepAlive, sbPlugin, clientInformation               int32
}{
	{"1.7.10", 0x00, 0x01, 0x07, 0x40, 0x3F, 0x00, 0x17, 0x15},
	{"1.8", 0x00, 0x01, 0x07, 0x40, 0x3F, 0x00, 0x17, 0x15},
	{"1.9", 0x1F, 0x23, 0x33, 0x1A, 0x18, 0x0B, 0x09, 0x04},
	{"1.9.4", 0x1F, 0x23, 0x33, 0x1A, 0x18, 0x0B, 0x09, 0x04},
	{"1.10.2", 0x1F, 0x23, 0x33, 0x1A, 0x18, 0x0B, 0x09, 0x04},
	{"1.11.2", 0x1F, 0x23, 0x33, 0x1A, 0x18, 0x0B, 0x09, 0x04},
	{"1.12", 0x1F, 0x23, 0x34, 0x1A, 0x18, 0x0C, 0x0A, 0x05},
	{"1.12.1", 0x1F, 0x23, 0x35, 0x1A, 0x18, 0x0B, 0x09, 0x04},
	{"1.12.2", 0x1F, 0x23, 0x35, 0x1A, 0x18, 0x0B, 0x09, 0x04},
	{"1.13", 0x21, 0x25, 0x38, 0x1B, 0x19, 0x0E, 0x0A, 0x04},
	{"1.13.2", 0x21, 0x25, 0x38, 0x1B, 0x19, 0x0E, 0x0A, 0x04},
	{"1.14", 0x20, 0x25, 0x3A, 0x1A, 0x18, 0x0F, 0x0B, 0x05},
	{"1.14.4", 0x20, 0x25, 0x3A, 0x1A, 0x18, 0x0F, 0x0B, 0x05},
	{"1.15.2", 0x21, 0x26, 0x3B, 0x1B, 0x19, 0x0F, 0x0B, 0x05},
	{"1.16", 0x20, 0x25, 0x3A, 0x1A, 0x18, 0x10, 0x0B, 0x05},
	{"1.16.1", 0x20, 0x25, 0x3A, 0x1A, 0x18, 0x10, 0x0B, 0x05},
	{"1.16.2", 0x1F, 0x24, 0x39, 0x19, 0x17, 0x10, 0x0B, 0x05},
	{"1.16.5", 0x1F, 0x24, 0x39, 0x19, 0x17, 0x10, 0x0B, 0x05},
	{"1.17", 0x21, 0x26, 0x3D, 0x1A, 0x18, 0x0F, 0x0A, 0x05},
	{"1.17.1", 0x21, 0x26, 0x3D, 0x1A, 0x18, 0x0F, 0x0A, 0x05},
	{"1.18.2", 0x21, 0x26, 0x3D, 0x1A, 0x18, 0x0F, 0x0A, 0x05},
	{"1.19", 0x1E, 0x23, 0x3B, 0x17, 0x15, 0x11, 0x0C, 0x07},
	{"1.19.2", 0x20, 0x25, 0x3E, 0x19, 0x16, 0x12, 0x0D, 0x08},
	{"1.19.3", 0x1F, 0x24, 0x3D, 0x17, 0x15, 0x11, 0x0C, 0x07},
	{"1.19.4", 0x23, 0x28, 0x41, 0x1A, 0x17, 0x12, 0x0D, 0x08},
	{"1.20.1", 0x23, 0x28, 0x41, 0x1A, 0x17, 0x12, 0x0D, 0x08},
	{"1.20.2", 0x24, 0x29, 0x43, 0x1B, 0x18, 0x14, 0x0F, 0x09},
	{"1.20.4", 0x24, 0x29, 0x45, 0x1B, 0x18, 0x15, 0x10, 0x09},
	{"1.20.6", 0x26, 0x2B, 0x47, 0x1D, 0x19, 0x18, 0x12, 0x0A},
	{"1.21.1", 0x26, 0x2B, 0x47, 0x1D, 0x19, 0x18, 0x12, 0x0A},
	{"1.21.3", 0x27, 0x2C, 0x4C, 0x1D, 0x19, 0x1A, 0x14, 0x0C},
	{"1.21.4", 0x27, 0x2C, 0x4C, 0x1D, 0x19, 0x1A, 0x14, 0x0C},
	{"1.21.5", 0x26, 0x2B, 0x4B, 0x1C, 0x18, 0x1A, 0x14, 0x0C},
	{"1.21.6", 0x26, 0x2B, 0x4B, 0x1C, 0x18, 0x1B, 0x15, 0x0D},
	{"1.21.8", 0x26, 0x2B, 0x4B, 0x1C, 0x18, 0x1B, 0x15, 0x0D},
	{"1.21.10", 0x2B, 0x30, 0x50, 0x20, 0x18, 0x1B, 0x15, 0x0D},
	{"1.21.11", 0x2B, 0x30, 0x50, 0x20, 0x18, 0x1B, 0x15, 0x0D},
	{"26.1", 0x2C, 0x31, 0x52, 0x20, 0x18, 0x1C, 0x16, 0x0E},
}

// verifiedConfigIDs: configuration-state ids plus the two play packets that
// enter and leave it, from the same two sources as verifiedPlayIDs.
var verifiedConfigIDs = []struct {
	version                                                     string
	cbPlugin, cbDisconnect, cbFinish, cbKeepAlive, registryData int32
	cbKnownPacks, sbClientInfo, sbPlugin, sbFinish, sbKeepAlive int32
	sbKnownPacks, startConfiguration, configurationAck          int32
}{
	{"1.20.2", 0x00, 0x01, 0x02, 0x03, 0x05, none, 0x00, 0x01, 0x02, 0x03, none, 0x65, 0x0B},
	{"1.20.4", 0x00, 0x01, 0x02, 0x03, 0x05, none, 0x00, 0x01, 0x02, 0x03, none, 0x67, 0x0B},
	{"1.20.6", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x69, 0x0C},
	{"1.21.1", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x69, 0x0C},
	{"1.21.3", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x70, 0x0E},
	{"1.21.4", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x70, 0x0E},
	{"1.21.5", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x6F, 0x0E},
	{"1.21.6", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x6F, 0x0F},
	{"1.21.8", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x6F, 0x0F},
	{"1.21.10", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x74, 0x0F},
	{"1.21.11", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x74, 0x0F},
	{"26.1", 0x01, 0x02, 0x03, 0x04, 0x07, 0x0E, 0x00, 0x02, 0x03, 0x04, 0x07, 0x76, 0x10},
}

type idCheck struct {
	s    State
	d    Direction
	t    PacketType
	want int32
}

func checkIDs(t *testing.T, version string, checks []idCheck) {
	t.Helper()
	p, ok := ParseVersion(version)
	if !ok {
		t.Fatalf("version %s is not in the table", version)
	}
	r, ok := RegistryFor(p)
	if !ok {
		t.Fatalf("no registry for %s", version)
	}
	for _, c := range checks {
		got, ok := r.ID(c.s, c.d, c.t)
		if !ok {
			got = none
		}
		if got != c.want {
			t.Errorf("%s %s %s %s: id 0x%02X, want 0x%02X", version, c.s, c.d, c.t, got, c.want)
		}
		if c.want == none {
			continue
		}
		if back, ok := r.Type(c.s, c.d, c.want); !ok || back != c.t {
			t.Errorf("%s %s %s id 0x%02X: type %v, want %v", version, c.s, c.d, c.want, back, c.t)
		}
	}
}

func TestRegistryMatchesTwoSources(t *testing.T) {
	for _, v := range verifiedPlayIDs {
		checkIDs(t, v.version, []idCheck{
			{PlayState, Clientbound, PacketKeepAlive, v.cbKeepAlive},
			{PlayState, Clientbound, PacketJoinGame, v.joinGame},
			{PlayState, Clientbound, PacketRespawn, v.respawn},
			{PlayState, Clientbound, PacketDisconnect, v.cbDisconnect},
			{PlayState, Clientbound, PacketPluginMessage, v.cbPlugin},
			{PlayState, Serverbound, PacketKeepAlive, v.sbKeepAlive},
			{PlayState, Serverbound, PacketPluginMessage, v.sbPlugin},
			{PlayState, Serverbound, PacketClientInformation, v.clientInformation},
		})
	}
	for _, v := range verifiedConfigIDs {
		checkIDs(t, v.version, []idCheck{
			{ConfigState, Clientbound, PacketPluginMessage, v.cbPlugin},
			{ConfigState, Clientbound, PacketDisconnect, v.cbDisconnect},
			{ConfigState, Clientbound, PacketFinishConfiguration, v.cbFinish},
			{ConfigState, Clientbound, PacketKeepAlive, v.cbKeepAlive},
			{ConfigState, Clientbound, PacketRegistryData, v.registryData},
			{ConfigState, Clientbound, PacketKnownPacks, v.cbKnownPacks},
			{ConfigState, Serverbound, PacketClientInformation, v.sbClientInfo},
			{ConfigState, Serverbound, PacketPluginMessage, v.sbPlugin},
			{ConfigState, Serverbound, PacketFinishConfiguration, v.sbFinish},
			{ConfigState, Serverbound, PacketKeepAlive, v.sbKeepAlive},
			{ConfigState, Serverbound, PacketKnownPacks, v.sbKnownPacks},
			{PlayState, Clientbound, PacketStartConfiguration, v.startConfiguration},
			{PlayState, Serverbound, PacketConfigurationAck, v.configurationAck},
		})
	}
}

// 26.2 kept 26.1's numbering (Gate registers nothing new for it and
// ViaVersion's 26.1->26.2 protocol maps the 26.1 packet enums onto
// themselves). 26.3's ids come from one source only, the 26.3 change of the
// Void proxy (void-community/Void#1445): keep-alive 0x2C->0x2D and start
// configuration 0x76->0x78 are stated there; join game and respawn follow from
// the insertions it lists (0x25 and 0x53); serverbound ids sit below the one
// serverbound insertion (0x2E) and do not move.
func TestRegistryNewestReleases(t *testing.T) {
	r261, _ := RegistryFor(V26_1)
	r262, _ := RegistryFor(V26_2)
	if r261.ids != r262.ids {
		t.Error("26.2 should number every known packet as 26.1 does")
	}
	checkIDs(t, "26.3", []idCheck{
		{PlayState, Clientbound, PacketKeepAlive, 0x2D},
		{PlayState, Clientbound, PacketStartConfiguration, 0x78},
		{PlayState, Clientbound, PacketJoinGame, 0x32},
		{PlayState, Clientbound, PacketRespawn, 0x54},
		{PlayState, Clientbound, PacketDisconnect, 0x20},
		{PlayState, Clientbound, PacketPluginMessage, 0x18},
		{PlayState, Serverbound, PacketKeepAlive, 0x1C},
		{PlayState, Serverbound, PacketConfigurationAck, 0x10},
		{ConfigState, Clientbound, PacketKnownPacks, 0x0E},
	})
}

func TestRegistryLoginAndEarlyStates(t *testing.T) {
	for _, p := range KnownProtocols() {
		checks := []idCheck{
			{HandshakeState, Serverbound, PacketHandshake, 0x00},
			{StatusState, Serverbound, PacketStatusRequest, 0x00},
			{StatusState, Serverbound, PacketPing, 0x01},
			{StatusState, Clientbound, PacketStatusResponse, 0x00},
			{StatusState, Clientbound, PacketPing, 0x01},
			{LoginState, Serverbound, PacketLoginStart, 0x00},
			{LoginState, Serverbound, PacketEncryptionResponse, 0x01},
			{LoginState, Clientbound, PacketDisconnect, 0x00},
			{LoginState, Clientbound, PacketEncryptionRequest, 0x01},
			{LoginState, Clientbound, PacketLoginSuccess, 0x02},
			{LoginState, Clientbound, PacketSetCompression, pick(p.AtLeast(V1_8), 0x03)},
			{LoginState, Clientbound, PacketLoginPluginRequest, pick(p.AtLeast(V1_13), 0x04)},
			{LoginState, Serverbound, PacketLoginPluginResponse, pick(p.AtLeast(V1_13), 0x02)},
			{LoginState, Serverbound, PacketLoginAcknowledged, pick(p.AtLeast(V1_20_2), 0x03)},
			{PlayState, Clientbound, PacketStartConfiguration, pick(p.AtLeast(V1_20_2), -2)},
		}
		for _, c := range checks {
			id, ok := PacketID(p, c.s, c.d, c.t)
			switch {
			case c.want == -2: // present, any id
				if !ok {
					t.Errorf("%v: %s missing", p, c.t)
				}
			case c.want == none && ok:
				t.Errorf("%v: %s %s %s should not exist, got 0x%02X", p, c.s, c.d, c.t, id)
			case c.want != none && (!ok || id != c.want):
				t.Errorf("%v: %s %s %s = 0x%02X (%v), want 0x%02X", p, c.s, c.d, c.t, id, ok, c.want)
			}
		}
		if _, ok := PacketID(p, ConfigState, Clientbound, PacketKeepAlive); ok != p.AtLeast(V1_20_2) {
			t.Errorf("%v: configuration keep-alive present = %v", p, ok)
		}
		if _, ok := PacketID(p, ConfigState, Serverbound, PacketKnownPacks); ok != p.AtLeast(V1_20_5) {
			t.Errorf("%v: known packs present = %v", p, ok)
		}
	}
}

func pick(cond bool, id int32) int32 {
	if cond {
		return id
	}
	return none
}

// No two known packets may share an id in one (version, state, direction),
// or Type would misclassify a frame.
func TestRegistryIDsAreUnique(t *testing.T) {
	for _, p := range KnownProtocols() {
		r, _ := RegistryFor(p)
		for s := HandshakeState; s < numStates; s++ {
			for _, d := range []Direction{Serverbound, Clientbound} {
				seen := map[int32]PacketType{}
				for ty := PacketType(1); ty < numPacketTypes; ty++ {
					id, ok := r.ID(s, d, ty)
					if !ok {
						continue
					}
					if other, dup := seen[id]; dup {
						t.Errorf("%v %s %s: %s and %s share id 0x%02X", p, s, d, other, ty, id)
					}
					seen[id] = ty
					if back, ok := r.Type(s, d, id); !ok || back != ty {
						t.Errorf("%v %s %s: Type(0x%02X) = %v, want %v", p, s, d, id, back, ty)
					}
				}
			}
		}
	}
}

func TestRegistryUnknownInputs(t *testing.T) {
	for _, p := range []Protocol{0, 3, 6, 46, 100, 999, 778, 0x40000000 | 200} {
		if _, ok := RegistryFor(p); ok {
			t.Errorf("registry for unknown protocol %d", p)
		}
		if _, ok := PacketID(p, PlayState, Clientbound, PacketKeepAlive); ok {
			t.Errorf("PacketID answered for unknown protocol %d", p)
		}
		if _, ok := PacketTypeOf(p, PlayState, Clientbound, 0); ok {
			t.Errorf("PacketTypeOf answered for unknown protocol %d", p)
		}
	}
	r, _ := RegistryFor(V1_21_4)
	if _, ok := r.Type(PlayState, Clientbound, 0x7F); ok {
		t.Error("an unknown play id was classified")
	}
	if _, ok := r.Type(PlayState, Clientbound, -1); ok {
		t.Error("a negative id was classified")
	}
	if _, ok := r.ID(State(9), Clientbound, PacketKeepAlive); ok {
		t.Error("an invalid state answered")
	}
	if _, ok := r.ID(PlayState, Direction(7), PacketKeepAlive); ok {
		t.Error("an invalid direction answered")
	}
	if _, ok := r.ID(PlayState, Clientbound, PacketType(0)); ok {
		t.Error("packet type 0 answered")
	}
	if r.Protocol() != V1_21_4 {
		t.Errorf("Protocol() = %v", r.Protocol())
	}
}

func BenchmarkRegistryType(b *testing.B) {
	r, _ := RegistryFor(V1_21_4)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := r.Type(PlayState, Clientbound, 0x7F); ok {
			b.Fatal("classified")
		}
	}
}

// Each registry has its own place among RegistryCount(): tables kept per
// version index by it.
func TestRegistryIndexes(t *testing.T) {
	seen := make([]Protocol, RegistryCount())
	for _, v := range versionTable {
		r, ok := RegistryFor(v.p)
		if !ok {
			t.Fatalf("protocol %d: no registry", v.p)
		}
		i := r.Index()
		if i < 0 || i >= len(seen) || seen[i] != 0 {
			t.Fatalf("protocol %d: index %d out of 0..%d or taken by %d", v.p, i, len(seen)-1, seen[max(0, min(i, len(seen)-1))])
		}
		seen[i] = v.p
	}
}
