// Package bungeechannel speaks the BungeeCord plugin messaging channel: the
// de-facto API through which Spigot and Paper plugins ask their proxy to move
// players (Connect), answer questions (PlayerCount, GetServers, UUID, ...) and
// relay data between servers (Forward). It decodes a backend's request,
// checks it against the operator's permissions, acts on it through a Proxy the
// caller implements, and encodes the reply. No sockets, no goroutines.
package bungeechannel

import "github.com/infrarust-go/infrarust/internal/mc"

// The channel's names. Spigot translates "BungeeCord" to "bungeecord:main" on
// the wire from 1.13, when channel names became namespaced.
const (
	// LegacyChannel is the channel's name before 1.13.
	LegacyChannel = "BungeeCord"
	// ModernChannel is the channel's name from 1.13.
	ModernChannel = "bungeecord:main"
)

// ChannelFor is the name a connection of protocol p uses, for messages the
// proxy starts itself (Forward deliveries); a reply reuses the request's name.
func ChannelFor(p mc.Protocol) string {
	if p.AtLeast(mc.V1_13) {
		return ModernChannel
	}
	return LegacyChannel
}

// IsChannel reports whether a plugin message on channel name is for the proxy.
// Both names are accepted at every version, as BungeeCord and Velocity do.
func IsChannel(name string) bool {
	return name == ModernChannel || name == LegacyChannel
}
