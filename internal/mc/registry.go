package mc

import "fmt"

// State is the connection state a packet id belongs to; the same id means
// different packets in different states.
type State uint8

// Connection states in the order a connection passes through them.
const (
	HandshakeState State = iota
	StatusState
	LoginState
	ConfigState // 1.20.2+
	PlayState
	numStates
)

func (s State) String() string {
	switch s {
	case HandshakeState:
		return "handshake"
	case StatusState:
		return "status"
	case LoginState:
		return "login"
	case ConfigState:
		return "configuration"
	case PlayState:
		return "play"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Direction says who sends a packet; ids are numbered separately per direction.
type Direction uint8

// The two directions of a Minecraft connection.
const (
	Serverbound Direction = iota // client to server
	Clientbound                  // server to client
)

func (d Direction) String() string {
	if d == Serverbound {
		return "serverbound"
	}
	return "clientbound"
}

// PacketType names a packet the proxy understands. Everything else is relayed
// as an opaque frame, so the registry only answers for these.
type PacketType uint8

// The packets the proxy must recognise. A type may exist in several states
// and both directions (KeepAlive, PluginMessage, Disconnect); the registry
// resolves it per (protocol, state, direction).
const (
	PacketHandshake           PacketType = iota + 1 // handshake, serverbound
	PacketStatusRequest                             // status, serverbound
	PacketStatusResponse                            // status, clientbound
	PacketPing                                      // status, both directions (ping and pong)
	PacketLoginStart                                // login, serverbound
	PacketDisconnect                                // login, configuration and play, clientbound
	PacketEncryptionRequest                         // login, clientbound
	PacketEncryptionResponse                        // login, serverbound
	PacketLoginSuccess                              // login, clientbound
	PacketSetCompression                            // login, clientbound (1.8+)
	PacketLoginPluginRequest                        // login, clientbound (1.13+)
	PacketLoginPluginResponse                       // login, serverbound (1.13+)
	PacketLoginAcknowledged                         // login, serverbound (1.20.2+)
	PacketFinishConfiguration                       // configuration, both directions
	PacketKeepAlive                                 // configuration and play, both directions
	PacketPluginMessage                             // configuration and play, both directions
	PacketKnownPacks                                // configuration, both directions (1.20.5+)
	PacketClientInformation                         // configuration and play, serverbound
	PacketRegistryData                              // configuration, clientbound
	PacketJoinGame                                  // play, clientbound
	PacketRespawn                                   // play, clientbound
	PacketStartConfiguration                        // play, clientbound (1.20.2+)
	PacketConfigurationAck                          // play, serverbound (1.20.2+)
	// The packets below serve switching and limbo (registry_switch.go).
	PacketPlayerPosition      // play, clientbound: synchronize player position
	PacketSpawnPosition       // play, clientbound: default spawn position
	PacketGameEvent           // play, clientbound: game event (change game state)
	PacketBossBar             // play, clientbound (1.9+)
	PacketPlayerInfo          // play, clientbound: player info (update from 1.19.3)
	PacketPlayerInfoRemove    // play, clientbound (1.19.3+)
	PacketScoreboardObjective // play, clientbound
	PacketTeams               // play, clientbound
	PacketTabListHeaderFooter // play, clientbound (1.8+)
	PacketTitle               // play, clientbound (1.8–1.16.5: every title action)
	PacketSetTitleText        // play, clientbound (1.17+)
	PacketSetSubtitleText     // play, clientbound (1.17+)
	PacketSetActionBarText    // play, clientbound (1.17+)
	PacketSetTitleTimes       // play, clientbound (1.17+)
	PacketClearTitles         // play, clientbound (1.17+)
	PacketSystemChat          // play, clientbound: system chat (the chat message packet before 1.19)
	PacketDeclareCommands     // play, clientbound (1.13+): the command tree
	PacketTabCompleteRequest  // play, serverbound
	PacketTabCompleteResponse // play, clientbound
	PacketChatMessage         // play, serverbound: chat (and, before 1.19, commands)
	PacketChatCommand         // play, serverbound (1.19+)
	PacketChatCommandSigned   // play, serverbound (1.20.5+)
	PacketChatAck             // play, serverbound (1.19.1+): message acknowledgement
	// The packets below serve a limbo with ground (registry_world.go).
	PacketTeleportConfirm  // play, serverbound (1.9+)
	PacketMovePosition     // play, serverbound: position and on-ground
	PacketMovePositionLook // play, serverbound: position, rotation and on-ground
	PacketMoveLook         // play, serverbound: rotation and on-ground
	PacketMoveStatus       // play, serverbound: on-ground only (flying)
	PacketChunkData        // play, clientbound: a chunk (with its light from 1.18)
	PacketSetCenterChunk   // play, clientbound (1.14+): the chunk the client loads around
	PacketUpdateLight      // play, clientbound (1.14+)
	numPacketTypes
)

var packetTypeNames = [numPacketTypes]string{
	PacketHandshake:           "handshake",
	PacketStatusRequest:       "status request",
	PacketStatusResponse:      "status response",
	PacketPing:                "ping",
	PacketLoginStart:          "login start",
	PacketDisconnect:          "disconnect",
	PacketEncryptionRequest:   "encryption request",
	PacketEncryptionResponse:  "encryption response",
	PacketLoginSuccess:        "login success",
	PacketSetCompression:      "set compression",
	PacketLoginPluginRequest:  "login plugin request",
	PacketLoginPluginResponse: "login plugin response",
	PacketLoginAcknowledged:   "login acknowledged",
	PacketFinishConfiguration: "finish configuration",
	PacketKeepAlive:           "keep alive",
	PacketPluginMessage:       "plugin message",
	PacketKnownPacks:          "known packs",
	PacketClientInformation:   "client information",
	PacketRegistryData:        "registry data",
	PacketJoinGame:            "join game",
	PacketRespawn:             "respawn",
	PacketStartConfiguration:  "start configuration",
	PacketConfigurationAck:    "configuration acknowledged",
	PacketPlayerPosition:      "player position",
	PacketSpawnPosition:       "spawn position",
	PacketGameEvent:           "game event",
	PacketBossBar:             "boss bar",
	PacketPlayerInfo:          "player info",
	PacketPlayerInfoRemove:    "player info remove",
	PacketScoreboardObjective: "scoreboard objective",
	PacketTeams:               "teams",
	PacketTabListHeaderFooter: "tab list header and footer",
	PacketTitle:               "title",
	PacketSetTitleText:        "set title text",
	PacketSetSubtitleText:     "set subtitle text",
	PacketSetActionBarText:    "set action bar text",
	PacketSetTitleTimes:       "set title times",
	PacketClearTitles:         "clear titles",
	PacketSystemChat:          "system chat",
	PacketDeclareCommands:     "declare commands",
	PacketTabCompleteRequest:  "tab complete request",
	PacketTabCompleteResponse: "tab complete response",
	PacketChatMessage:         "chat message",
	PacketChatCommand:         "chat command",
	PacketChatCommandSigned:   "chat command signed",
	PacketChatAck:             "chat ack",
	PacketTeleportConfirm:     "teleport confirm",
	PacketMovePosition:        "move position",
	PacketMovePositionLook:    "move position and look",
	PacketMoveLook:            "move look",
	PacketMoveStatus:          "move status",
	PacketChunkData:           "chunk data",
	PacketSetCenterChunk:      "set center chunk",
	PacketUpdateLight:         "update light",
}

func (t PacketType) String() string {
	if t > 0 && t < numPacketTypes {
		return packetTypeNames[t]
	}
	return fmt.Sprintf("packet(%d)", uint8(t))
}

// since says that from protocol `from` on (until the next since of the same
// packet) the packet has id `id`; id -1 means the packet no longer exists.
type since struct {
	from Protocol
	id   int32
}

type packetIDs struct {
	s     State
	d     Direction
	t     PacketType
	spans []since
}

// packetTable is the source of every id the registry returns. Ranges were
// taken from Gate's state registry and checked, for every release it covers,
// against minecraft-data's protocol.json (1.7 to 26.1); 26.2 renumbered
// nothing (Gate; ViaVersion's 26.1->26.2 protocol keeps the 26.1 packet
// enums). 26.3 inserted clientbound add_transient_block (0x25) and
// post_effects (0x53) before join game and respawn, and serverbound punch
// (0x2E) after every serverbound packet listed here; those 26.3 ids follow
// from one source only (the 26.3 support change in the Void proxy), see
// registry_test.go.
var packetTable = []packetIDs{
	{HandshakeState, Serverbound, PacketHandshake, []since{{V1_7_2, 0x00}}},

	{StatusState, Serverbound, PacketStatusRequest, []since{{V1_7_2, 0x00}}},
	{StatusState, Serverbound, PacketPing, []since{{V1_7_2, 0x01}}},
	{StatusState, Clientbound, PacketStatusResponse, []since{{V1_7_2, 0x00}}},
	{StatusState, Clientbound, PacketPing, []since{{V1_7_2, 0x01}}},

	{LoginState, Serverbound, PacketLoginStart, []since{{V1_7_2, 0x00}}},
	{LoginState, Serverbound, PacketEncryptionResponse, []since{{V1_7_2, 0x01}}},
	{LoginState, Serverbound, PacketLoginPluginResponse, []since{{V1_13, 0x02}}},
	{LoginState, Serverbound, PacketLoginAcknowledged, []since{{V1_20_2, 0x03}}},
	{LoginState, Clientbound, PacketDisconnect, []since{{V1_7_2, 0x00}}},
	{LoginState, Clientbound, PacketEncryptionRequest, []since{{V1_7_2, 0x01}}},
	{LoginState, Clientbound, PacketLoginSuccess, []since{{V1_7_2, 0x02}}},
	{LoginState, Clientbound, PacketSetCompression, []since{{V1_8, 0x03}}},
	{LoginState, Clientbound, PacketLoginPluginRequest, []since{{V1_13, 0x04}}},

	{ConfigState, Clientbound, PacketPluginMessage, []since{{V1_20_2, 0x00}, {V1_20_5, 0x01}}},
	{ConfigState, Clientbound, PacketDisconnect, []since{{V1_20_2, 0x01}, {V1_20_5, 0x02}}},
	{ConfigState, Clientbound, PacketFinishConfiguration, []since{{V1_20_2, 0x02}, {V1_20_5, 0x03}}},
	{ConfigState, Clientbound, PacketKeepAlive, []since{{V1_20_2, 0x03}, {V1_20_5, 0x04}}},
	{ConfigState, Clientbound, PacketRegistryData, []since{{V1_20_2, 0x05}, {V1_20_5, 0x07}}},
	{ConfigState, Clientbound, PacketKnownPacks, []since{{V1_20_5, 0x0E}}},
	{ConfigState, Serverbound, PacketClientInformation, []since{{V1_20_2, 0x00}}},
	{ConfigState, Serverbound, PacketPluginMessage, []since{{V1_20_2, 0x01}, {V1_20_5, 0x02}}},
	{ConfigState, Serverbound, PacketFinishConfiguration, []since{{V1_20_2, 0x02}, {V1_20_5, 0x03}}},
	{ConfigState, Serverbound, PacketKeepAlive, []since{{V1_20_2, 0x03}, {V1_20_5, 0x04}}},
	{ConfigState, Serverbound, PacketKnownPacks, []since{{V1_20_5, 0x07}}},

	{PlayState, Clientbound, PacketKeepAlive, []since{
		{V1_7_2, 0x00}, {V1_9, 0x1F}, {V1_13, 0x21}, {V1_14, 0x20}, {V1_15, 0x21}, {V1_16, 0x20},
		{V1_16_2, 0x1F}, {V1_17, 0x21}, {V1_19, 0x1E}, {V1_19_1, 0x20}, {V1_19_3, 0x1F}, {V1_19_4, 0x23},
		{V1_20_2, 0x24}, {V1_20_5, 0x26}, {V1_21_2, 0x27}, {V1_21_5, 0x26}, {V1_21_9, 0x2B}, {V26_1, 0x2C},
		{V26_3, 0x2D}}},
	{PlayState, Clientbound, PacketJoinGame, []since{
		{V1_7_2, 0x01}, {V1_9, 0x23}, {V1_13, 0x25}, {V1_15, 0x26}, {V1_16, 0x25}, {V1_16_2, 0x24},
		{V1_17, 0x26}, {V1_19, 0x23}, {V1_19_1, 0x25}, {V1_19_3, 0x24}, {V1_19_4, 0x28}, {V1_20_2, 0x29},
		{V1_20_5, 0x2B}, {V1_21_2, 0x2C}, {V1_21_5, 0x2B}, {V1_21_9, 0x30}, {V26_1, 0x31}, {V26_3, 0x32}}},
	{PlayState, Clientbound, PacketRespawn, []since{
		{V1_7_2, 0x07}, {V1_9, 0x33}, {V1_12, 0x34}, {V1_12_1, 0x35}, {V1_13, 0x38}, {V1_14, 0x3A},
		{V1_15, 0x3B}, {V1_16, 0x3A}, {V1_16_2, 0x39}, {V1_17, 0x3D}, {V1_19, 0x3B}, {V1_19_1, 0x3E},
		{V1_19_3, 0x3D}, {V1_19_4, 0x41}, {V1_20_2, 0x43}, {V1_20_3, 0x45}, {V1_20_5, 0x47}, {V1_21_2, 0x4C},
		{V1_21_5, 0x4B}, {V1_21_9, 0x50}, {V26_1, 0x52}, {V26_3, 0x54}}},
	{PlayState, Clientbound, PacketDisconnect, []since{
		{V1_7_2, 0x40}, {V1_9, 0x1A}, {V1_13, 0x1B}, {V1_14, 0x1A}, {V1_15, 0x1B}, {V1_16, 0x1A},
		{V1_16_2, 0x19}, {V1_17, 0x1A}, {V1_19, 0x17}, {V1_19_1, 0x19}, {V1_19_3, 0x17}, {V1_19_4, 0x1A},
		{V1_20_2, 0x1B}, {V1_20_5, 0x1D}, {V1_21_5, 0x1C}, {V1_21_9, 0x20}}},
	{PlayState, Clientbound, PacketPluginMessage, []since{
		{V1_7_2, 0x3F}, {V1_9, 0x18}, {V1_13, 0x19}, {V1_14, 0x18}, {V1_15, 0x19}, {V1_16, 0x18},
		{V1_16_2, 0x17}, {V1_17, 0x18}, {V1_19, 0x15}, {V1_19_1, 0x16}, {V1_19_3, 0x15}, {V1_19_4, 0x17},
		{V1_20_2, 0x18}, {V1_20_5, 0x19}, {V1_21_5, 0x18}}},
	{PlayState, Clientbound, PacketStartConfiguration, []since{
		{V1_20_2, 0x65}, {V1_20_3, 0x67}, {V1_20_5, 0x69}, {V1_21_2, 0x70}, {V1_21_5, 0x6F}, {V1_21_9, 0x74},
		{V26_1, 0x76}, {V26_3, 0x78}}},

	{PlayState, Serverbound, PacketKeepAlive, []since{
		{V1_7_2, 0x00}, {V1_9, 0x0B}, {V1_12, 0x0C}, {V1_12_1, 0x0B}, {V1_13, 0x0E}, {V1_14, 0x0F},
		{V1_16, 0x10}, {V1_17, 0x0F}, {V1_19, 0x11}, {V1_19_1, 0x12}, {V1_19_3, 0x11}, {V1_19_4, 0x12},
		{V1_20_2, 0x14}, {V1_20_3, 0x15}, {V1_20_5, 0x18}, {V1_21_2, 0x1A}, {V1_21_6, 0x1B}, {V26_1, 0x1C}}},
	{PlayState, Serverbound, PacketPluginMessage, []since{
		{V1_7_2, 0x17}, {V1_9, 0x09}, {V1_12, 0x0A}, {V1_12_1, 0x09}, {V1_13, 0x0A}, {V1_14, 0x0B},
		{V1_17, 0x0A}, {V1_19, 0x0C}, {V1_19_1, 0x0D}, {V1_19_3, 0x0C}, {V1_19_4, 0x0D}, {V1_20_2, 0x0F},
		{V1_20_3, 0x10}, {V1_20_5, 0x12}, {V1_21_2, 0x14}, {V1_21_6, 0x15}, {V26_1, 0x16}}},
	{PlayState, Serverbound, PacketClientInformation, []since{
		{V1_7_2, 0x15}, {V1_9, 0x04}, {V1_12, 0x05}, {V1_12_1, 0x04}, {V1_14, 0x05}, {V1_19, 0x07},
		{V1_19_1, 0x08}, {V1_19_3, 0x07}, {V1_19_4, 0x08}, {V1_20_2, 0x09}, {V1_20_5, 0x0A}, {V1_21_2, 0x0C},
		{V1_21_6, 0x0D}, {V26_1, 0x0E}}},
	{PlayState, Serverbound, PacketConfigurationAck, []since{
		{V1_20_2, 0x0B}, {V1_20_5, 0x0C}, {V1_21_2, 0x0E}, {V1_21_6, 0x0F}, {V26_1, 0x10}}},
}

// Registry answers packet-id questions for one protocol version. It is
// immutable and shared, so a session looks it up once and keeps the pointer.
type Registry struct {
	p     Protocol
	index int                                 // its place among the registries (Index)
	ids   [numStates][2][numPacketTypes]int32 // -1 = not in this version/state/direction
	// types is ids reversed (0 = a packet the proxy relays without knowing it),
	// so the relay names a frame's packet with one load instead of a scan.
	types [numStates][2][maxKnownID + 1]PacketType
}

// maxKnownID bounds the ids the registry holds (every id of every version is
// below it; buildRegistries panics on one that is not).
const maxKnownID = 0xFF

// registries holds one immutable Registry per known protocol, built once.
var registries = buildRegistries()

func buildRegistries() map[Protocol]*Registry {
	m := make(map[Protocol]*Registry, len(versionTable))
	for i, v := range versionTable {
		r := &Registry{p: v.p, index: i}
		for s := range r.ids {
			for d := range r.ids[s] {
				for t := range r.ids[s][d] {
					r.ids[s][d][t] = -1
				}
			}
		}
		for _, e := range allPacketIDs() {
			id := int32(-1)
			for _, sp := range e.spans {
				if sp.from <= v.p {
					id = sp.id
				}
			}
			r.ids[e.s][e.d][e.t] = id
			if id > maxKnownID {
				panic(fmt.Sprintf("mc: packet id %#x of %s is over %#x", id, e.t, maxKnownID))
			}
			if id >= 0 {
				r.types[e.s][e.d][id] = e.t
			}
		}
		m[v.p] = r
	}
	return m
}

// RegistryFor returns the registry of a known protocol; ok is false for a
// version outside the table (a snapshot, or a release newer than this build),
// whose packets the proxy cannot interpret.
func RegistryFor(p Protocol) (r *Registry, ok bool) {
	r, ok = registries[p]
	return r, ok
}

// Index is the registry's place among all of them, 0 to RegistryCount()-1:
// for tables kept per version.
func (r *Registry) Index() int { return r.index }

// RegistryCount is how many registries (known protocols) there are.
func RegistryCount() int { return len(versionTable) }

// Protocol is the version this registry describes.
func (r *Registry) Protocol() Protocol { return r.p }

// ID returns the id of packet t in state s and direction d; ok is false when
// that packet does not exist there (for example configuration before 1.20.2).
func (r *Registry) ID(s State, d Direction, t PacketType) (id int32, ok bool) {
	if s >= numStates || d > Clientbound || t == 0 || t >= numPacketTypes {
		return 0, false
	}
	id = r.ids[s][d][t]
	return id, id >= 0
}

// Type returns which known packet id is in state s and direction d; ok is
// false for every packet the proxy relays without understanding.
func (r *Registry) Type(s State, d Direction, id int32) (t PacketType, ok bool) {
	if s >= numStates || d > Clientbound || id < 0 || id > maxKnownID {
		return 0, false
	}
	t = r.types[s][d][id]
	return t, t != 0
}

// PacketID is Registry.ID for callers holding only a protocol number.
func PacketID(p Protocol, s State, d Direction, t PacketType) (int32, bool) {
	r, ok := RegistryFor(p)
	if !ok {
		return 0, false
	}
	return r.ID(s, d, t)
}

// PacketTypeOf is Registry.Type for callers holding only a protocol number.
func PacketTypeOf(p Protocol, s State, d Direction, id int32) (PacketType, bool) {
	r, ok := RegistryFor(p)
	if !ok {
		return 0, false
	}
	return r.Type(s, d, id)
}
