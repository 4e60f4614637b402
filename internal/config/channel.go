package config

// ChannelPermissions says which BungeeCord plugin channel operations backends
// may use ([forwarding.channel_permissions]); names and defaults are the Rust
// Infrarust's: what reads state is allowed, what acts on other players is not.
type ChannelPermissions struct {
	Connect         bool `toml:"connect"`
	ConnectOther    bool `toml:"connect_other"`
	IP              bool `toml:"ip"`
	IPOther         bool `toml:"ip_other"`
	PlayerCount     bool `toml:"player_count"`
	PlayerList      bool `toml:"player_list"`
	GetServers      bool `toml:"get_servers"`
	GetServer       bool `toml:"get_server"`
	GetPlayerServer bool `toml:"get_player_server"`
	Forward         bool `toml:"forward"`
	ForwardToPlayer bool `toml:"forward_to_player"`
	UUID            bool `toml:"uuid"`
	UUIDOther       bool `toml:"uuid_other"`
	ServerIP        bool `toml:"server_ip"`
	Message         bool `toml:"message"`
	MessageRaw      bool `toml:"message_raw"`
	KickPlayer      bool `toml:"kick_player"`
	KickPlayerRaw   bool `toml:"kick_player_raw"`
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
