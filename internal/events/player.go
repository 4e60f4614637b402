package events

// The player events of docs/events.md, the ones compiled-in handlers and
// webhooks receive, as the bus carries them: each is published once its
// handlers and webhooks have run, with the decision it ended with (Data is a
// webhook delivery's envelope: id, seq, event, timestamp, data, result). They
// are the same events, not copies made elsewhere: hooks.Fire publishes them.
const (
	PlayerPreLogin            Type = "player.pre_login"
	PlayerGameProfileRequest  Type = "player.game_profile_request"
	PlayerLogin               Type = "player.login"
	PlayerPostLogin           Type = "player.post_login"
	PlayerChooseInitialServer Type = "player.choose_initial_server"
	PlayerServerPreConnect    Type = "player.server_pre_connect"
	PlayerKickedFromServer    Type = "player.kicked_from_server"
	PlayerServerConnected     Type = "player.server_connected"
	PlayerDisconnect          Type = "player.disconnect"
)

// playerEvents are the types above in firing order.
var playerEvents = []Type{PlayerPreLogin, PlayerGameProfileRequest, PlayerLogin, PlayerPostLogin,
	PlayerChooseInitialServer, PlayerServerPreConnect, PlayerKickedFromServer, PlayerServerConnected, PlayerDisconnect}
