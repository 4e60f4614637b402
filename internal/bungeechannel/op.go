package bungeechannel

// Op is one subcommand of the channel (the first string of every message).
type Op uint8

// The subcommands BungeeCord answers; OpUnknown is anything else.
const (
	OpUnknown Op = iota
	OpConnect
	OpConnectOther
	OpIP
	OpIPOther
	OpPlayerCount
	OpPlayerList
	OpGetServers
	OpGetServer
	OpGetPlayerServer
	OpUUID
	OpUUIDOther
	OpServerIP
	OpMessage
	OpMessageRaw
	OpKickPlayer
	OpKickPlayerRaw
	OpForward
	OpForwardToPlayer
	numOps
)

// opNames are the subchannel names as plugins write them (case matters) and
// the [plugin_messaging.bungeecord_permissions] keys that allow them.
var opNames = [numOps]struct{ sub, key string }{
	OpUnknown:         {"", ""},
	OpConnect:         {"Connect", "connect"},
	OpConnectOther:    {"ConnectOther", "connect_other"},
	OpIP:              {"IP", "ip"},
	OpIPOther:         {"IPOther", "ip_other"},
	OpPlayerCount:     {"PlayerCount", "player_count"},
	OpPlayerList:      {"PlayerList", "player_list"},
	OpGetServers:      {"GetServers", "get_servers"},
	OpGetServer:       {"GetServer", "get_server"},
	OpGetPlayerServer: {"GetPlayerServer", "get_player_server"},
	OpUUID:            {"UUID", "uuid"},
	OpUUIDOther:       {"UUIDOther", "uuid_other"},
	OpServerIP:        {"ServerIP", "server_ip"},
	OpMessage:         {"Message", "message"},
	OpMessageRaw:      {"MessageRaw", "message_raw"},
	OpKickPlayer:      {"KickPlayer", "kick_player"},
	OpKickPlayerRaw:   {"KickPlayerRaw", "kick_player_raw"},
	OpForward:         {"Forward", "forward"},
	OpForwardToPlayer: {"ForwardToPlayer", "forward_to_player"},
}

// Ops lists every known subcommand, for tests and documentation tables.
func Ops() []Op {
	out := make([]Op, 0, numOps-1)
	for o := OpConnect; o < numOps; o++ {
		out = append(out, o)
	}
	return out
}

// String is the subchannel name ("ConnectOther"), for logs.
func (o Op) String() string {
	if o >= numOps || o == OpUnknown {
		return "unknown"
	}
	return opNames[o].sub
}

// Key is the [plugin_messaging.bungeecord_permissions] key that allows o ("connect_other").
func (o Op) Key() string {
	if o >= numOps {
		return ""
	}
	return opNames[o].key
}

// ParseOp maps a subchannel name to its Op; OpUnknown when it is none of them.
func ParseOp(sub string) Op {
	for o := OpConnect; o < numOps; o++ {
		if opNames[o].sub == sub {
			return o
		}
	}
	return OpUnknown
}
