package admin

import (
	"context"
	"errors"
	"time"
)

// Player is one entry of GET /api/v1/players: a player connected through this
// proxy, on the server and address of the moment.
type Player struct {
	Name     string `json:"name"`
	UUID     string `json:"uuid,omitempty"` // known on intercepted servers, and from 1.20.2 clients elsewhere
	Server   string `json:"server"`
	Address  string `json:"address"`
	ClientIP string `json:"client_ip"`
	Protocol int32  `json:"protocol"`
	// Version names the client's protocol ("1.21.4"); empty for one the proxy does not know.
	Version   string    `json:"version,omitempty"`
	ProxyMode string    `json:"proxy_mode"`
	Since     time.Time `json:"since"`
	// Switchable says the player can be moved (send, drain --move, fallback): only
	// sessions of intercepted servers (offline, client_only) can.
	Switchable bool `json:"switchable"`
}

// SendRequest is the body of POST /api/v1/players/{name}/send.
type SendRequest struct {
	Server string `json:"server"`
	// Force overrides the target's maintenance and capacity (staff moving a
	// player past them); never its ip_filter or bans.
	Force bool `json:"force,omitempty"`
}

// KickRequest is the body of POST /api/v1/players/{name}/kick.
type KickRequest struct {
	Reason string `json:"reason"`
}

// MoveResult answers a drain with move: how many players left the drained
// address for another, and how many stayed because no other address took them.
type MoveResult struct {
	Moved  int `json:"moved"`
	Stayed int `json:"stayed"`
}

// Errors of the player operations, so the API answers 404/409 rather than 500.
var (
	// ErrUnknownPlayer: no player of that name is connected.
	ErrUnknownPlayer = errors.New("no such player")
	// ErrNotSwitchable: the player is on a passthrough server; the proxy only
	// forwards their bytes and cannot move them.
	ErrNotSwitchable = errors.New("the player's server is passthrough; only offline and client_only sessions can be moved")
	// ErrOtherNetwork: the target server is not in the player's network.
	ErrOtherNetwork = errors.New("the target server is not in the player's network")
	// ErrMoveFailed: the target refused the player (a kick, full, unreachable) and
	// the player stayed where they were. The runtime wraps it with the backend's
	// reason (fmt.Errorf("%w: lobby 10.0.0.5:25565: server is full", ErrMoveFailed)),
	// which the API answers as 502 so a caller can tell "retry later" from "cannot".
	ErrMoveFailed = errors.New("the move failed; the player stays where they were")
	// ErrRefused: the target server's own rules (ip_filter, bans, maintenance,
	// capacity) refused the player, who stays where they were; a *Refusal says which.
	ErrRefused = errors.New("the target server's rules refused the player")
)

// DefaultKickReason is what a kicked player is told when the operator gave no reason.
const DefaultKickReason = "Kicked by an operator"

// MaxKickReasonLen bounds a kick reason (in characters), so a request cannot
// hand a client an absurd disconnect screen.
const MaxKickReasonLen = 1024

// KickResult answers POST /api/v1/players/{name}/kick: the player as they were
// when kicked, and the reason they were shown.
type KickResult struct {
	Player Player `json:"player"`
	Reason string `json:"reason"`
}

// DrainRequest is the optional body of POST .../backends/{address}/drain:
// {"move": true} also moves the address's players elsewhere once it is drained.
type DrainRequest struct {
	Move bool `json:"move"`
}

// PlayerRuntime is the part of Runtime that lists and moves players.
type PlayerRuntime interface {
	// Players lists the connected players, of one server or ("") of all, by name.
	Players(server string) []Player
	// SendPlayer moves a player to server (balanced like a login); the player
	// stays where they were, told why, when the move fails.
	SendPlayer(ctx context.Context, name, server string, force bool) (Player, error)
	// KickPlayer disconnects a player with reason.
	KickPlayer(name, reason string) error
	// MessagePlayer shows text in one player's chat (ErrNotIntercepted for a
	// player of a passthrough server).
	MessagePlayer(name, text string) error
	// Broadcast shows text to every player the proxy speaks to, of server only
	// when given, and says how many.
	Broadcast(text, server string) int
	// MovePlayers moves every player off one address of server to its other
	// addresses (or its fallback servers), for a drain with move.
	MovePlayers(ctx context.Context, server, address string) (MoveResult, error)
}

// Refusal is which rule of which server refused a move, and what the player was
// told; it is an ErrRefused.
type Refusal struct {
	Server, Rule, Text string
}

func (r *Refusal) Error() string { return r.Server + "'s " + r.Rule + " refuses the player: " + r.Text }

// Unwrap makes a Refusal an ErrRefused.
func (r *Refusal) Unwrap() error { return ErrRefused }
