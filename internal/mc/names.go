package mc

import "strings"

// Name is the packet's name for plugins and logs: its description in
// snake_case ("plugin_message", "chat_command").
func (t PacketType) Name() string {
	return strings.ReplaceAll(t.String(), " ", "_")
}

// PacketTypeByName finds a packet by Name.
func PacketTypeByName(name string) (PacketType, bool) {
	for t := PacketType(1); t < numPacketTypes; t++ {
		if t.Name() == name {
			return t, true
		}
	}
	return 0, false
}

// PacketNames lists every packet name PacketTypeByName knows.
func PacketNames() []string {
	out := make([]string, 0, numPacketTypes-1)
	for t := PacketType(1); t < numPacketTypes; t++ {
		out = append(out, t.Name())
	}
	return out
}

// ChangesState reports whether the packet moves a connection between protocol
// states: a filter may not drop or change those.
func (t PacketType) ChangesState() bool {
	switch t {
	case PacketHandshake, PacketLoginSuccess, PacketLoginAcknowledged, PacketFinishConfiguration,
		PacketStartConfiguration, PacketConfigurationAck, PacketSetCompression, PacketEncryptionRequest,
		PacketEncryptionResponse, PacketDisconnect, PacketJoinGame, PacketRespawn:
		return true
	}
	return false
}
