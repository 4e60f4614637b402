// Package player is the handle on one connected player that everything beside
// the proxy's core acts through: the built-in commands, compiled-in plugins (as
// infrarust.Player) and, later, runtime plugins. It names what a caller may
// know of a player and do to him; the proxy implements it. Every Connect goes
// through the proxy's one route into a server, with all its checks.
package player

import (
	"context"
	"errors"
	"time"
)

// Player is one connected player.
type Player interface {
	// ID is the connection's number, the Connection.ID of his events.
	ID() uint64
	// Name and UUID are his profile (the authenticated one on intercepted
	// servers; a passthrough player's are what his client claimed).
	Name() string
	UUID() string
	// Protocol is his client's protocol version number.
	Protocol() int32
	// Server is the server he is on ("" while in the limbo between servers).
	Server() string
	// Proven is what he has proven of who he is.
	Proven() Proof
	// HasPermission answers for him (roles, or a PermissionsSetup handler).
	HasPermission(perm string) bool

	// Tell shows text in his chat: legacy § text, or a JSON component when it
	// starts with '{' or '['. Lines told while he is between worlds are shown
	// once he is in the next one.
	Tell(text string) error
	// Title shows a title and subtitle (legacy § text or JSON) for stay after
	// fading in, then fades out; before 1.8 it is a chat line.
	Title(t Title) error
	// ActionBar shows text above his hotbar (1.8+).
	ActionBar(text string) error
	// SendPluginMessage sends a plugin message to his client.
	SendPluginMessage(channel string, data []byte) error
	// Kick disconnects him with reason on his screen (a passthrough player's
	// stream is closed: the proxy does not speak to his client).
	Kick(reason string)
	// Connect moves him to server by the proxy's one route: the target's
	// network, its proof requirements, ip_filter, bans, maintenance,
	// capacity and the ServerPreConnect handlers all apply.
	Connect(ctx context.Context, server string) ConnectResult
}

// Proof is what a player has proven of who he is.
type Proof struct {
	// Mojang: Mojang's session server vouched for his profile.
	Mojang bool `json:"mojang"`
	// Password: he typed his account's password (or was remembered) in this session.
	Password bool `json:"password"`
	// BotCheck: he passed the bot check in this session.
	BotCheck bool `json:"bot_check"`
}

// Title is a title change for Player.Title.
type Title struct {
	Title, Subtitle       string
	FadeIn, Stay, FadeOut time.Duration
}

// Status is how a Connect ended.
type Status uint8

const (
	// Connected: he is on the server now.
	Connected Status = iota + 1
	// AlreadyThere: he was on it; nothing happened.
	AlreadyThere
	// Held: the server owes something first (a wake, a queue, a check in the
	// limbo); he waits in the limbo and goes on when it is done.
	Held
	// Refused: a rule or a handler said no; Rule names it and Reason is what
	// he reads. He stays where he was.
	Refused
	// Failed: the server could not take him (unreachable, it kicked him, he
	// was between servers). He stays where he was.
	Failed
)

var statusNames = [...]string{"", "connected", "already_there", "held", "refused", "failed"}

func (s Status) String() string {
	if int(s) < len(statusNames) && s != 0 {
		return statusNames[s]
	}
	return "unknown"
}

// ConnectResult is what a Connect came to.
type ConnectResult struct {
	Status Status
	// Server is the server he went to, or that refused him (a handler's
	// redirect may have named another than the one asked for).
	Server string
	// Rule names the rule of a refusal: network, proof, ip_filter, ban,
	// maintenance, full, handler.
	Rule string
	// Reason is what the player reads of a refusal or failure.
	Reason string
}

// OK reports that he is on the server, or on his way there through the limbo.
func (r ConnectResult) OK() bool {
	return r.Status == Connected || r.Status == AlreadyThere || r.Status == Held
}

// ErrNotIntercepted: the player's server is passthrough, where the proxy only
// moves his bytes and cannot write to him.
var ErrNotIntercepted = errors.New("the player is on a passthrough server: the proxy cannot write to him")
