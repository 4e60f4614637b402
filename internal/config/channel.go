package config

// ChannelPermissions says which BungeeCord plugin channel operations backends
// may use ([plugin_messaging.bungeecord_permissions]); names and defaults are
// the Rust Infrarust's: what reads state is allowed, what acts on other players
// is not. Each key is also accepted under its subchannel's name ("KickPlayer").
type ChannelPermissions struct {
	Connect         bool `toml:"connect" alias:"Connect"`
	ConnectOther    bool `toml:"connect_other" alias:"ConnectOther"`
	IP              bool `toml:"ip" alias:"IP"`
	IPOther         bool `toml:"ip_other" alias:"IPOther"`
	PlayerCount     bool `toml:"player_count" alias:"PlayerCount"`
	PlayerList      bool `toml:"player_list" alias:"PlayerList"`
	GetServers      bool `toml:"get_servers" alias:"GetServers"`
	GetServer       bool `toml:"get_server" alias:"GetServer"`
	GetPlayerServer bool `toml:"get_player_server" alias:"GetPlayerServer"`
	Forward         bool `toml:"forward" alias:"Forward"`
	ForwardToPlayer bool `toml:"forward_to_player" alias:"ForwardToPlayer"`
	UUID            bool `toml:"uuid" alias:"UUID"`
	UUIDOther       bool `toml:"uuid_other" alias:"UUIDOther"`
	ServerIP        bool `toml:"server_ip" alias:"ServerIP"`
	Message         bool `toml:"message" alias:"Message"`
	MessageRaw      bool `toml:"message_raw" alias:"MessageRaw"`
	KickPlayer      bool `toml:"kick_player" alias:"KickPlayer"`
	KickPlayerRaw   bool `toml:"kick_player_raw" alias:"KickPlayerRaw"`
}

// DefaultChannelPermissions allows every operation except ConnectOther,
// Message(Raw) and KickPlayer(Raw), which act on players other than the one
// whose backend asks.
func DefaultChannelPermissions() ChannelPermissions {
	return ChannelPermissions{
		Connect: true, IP: true, IPOther: true, PlayerCount: true, PlayerList: true,
		GetServers: true, GetServer: true, GetPlayerServer: true, Forward: true,
		ForwardToPlayer: true, UUID: true, UUIDOther: true, ServerIP: true,
	}
}
