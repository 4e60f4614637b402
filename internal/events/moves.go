package events

// PlayerMoveRefused is published when a server's own rules (ip_filter, bans,
// maintenance, capacity) refuse a player a move into it: a fallback, a
// handler's redirect, a send, a BungeeCord Connect, a drain or a limbo exit.
const PlayerMoveRefused Type = "player.move_refused"

// MoveRefused is the Data of a player.move_refused event.
type MoveRefused struct {
	Username   string `json:"username"`
	UUID       string `json:"uuid,omitempty"`
	FromServer string `json:"from_server"`
	ToServer   string `json:"to_server"`
	// Rule is the rule that refused: ip_filter, ban, maintenance or capacity.
	Rule string `json:"rule"`
	// Message is what the player was told.
	Message string `json:"message"`
	// Reason is why the move was asked: "admin", "drain", "fallback: <why>", "plugin", "limbo".
	Reason string `json:"reason"`
}
