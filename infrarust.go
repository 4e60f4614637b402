// Package infrarust is the extension API of the Infrarust proxy: the player events
// a handler compiled into your own build of the proxy receives, the results it may
// set, and Main, which runs the proxy with your handlers.
//
//	func main() {
//		r := infrarust.NewRegistry()
//		infrarust.On(r, "whitelist", func(ctx context.Context, e *infrarust.Login) {
//			if !allowed(e.Profile.UUID) {
//				e.Deny("§cYou are not on the whitelist")
//			}
//		})
//		infrarust.Main(r)
//	}
//
// Every handler runs with a deadline (one second unless Timeout says otherwise),
// on its own copy of the event: a handler that panics or overruns is logged and
// skipped, and the login goes on without its result. Handlers of one event run in
// registration order and see the results of the ones before them; a Deny is final.
// The events, their fields, their order and which proxy modes fire them are in
// docs/events.md; examples/plugin is a complete module.
//
// This is the module's only public package. The event types are defined in the
// proxy's internal packages and named here, so that the proxy and your handlers
// share them without copies.
package infrarust

import (
	"context"
	"time"

	"github.com/infrarust-go/infrarust/internal/command"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/player"
)

// The events, in the order one login fires them (see each type's documentation).
type (
	// PreLogin: a login arrived; Deny refuses it before anything is spent on it.
	PreLogin = hooks.PreLogin
	// GameProfileRequest: the profile is known (intercepted modes); set Profile to change it.
	GameProfileRequest = hooks.GameProfileRequest
	// Login: the final profile passed the ban check; Deny refuses it.
	Login = hooks.Login
	// PostLogin: the player is accepted (report only).
	PostLogin = hooks.PostLogin
	// ChooseInitialServer: Redirect picks another server than the routed one.
	ChooseInitialServer = hooks.ChooseInitialServer
	// ServerPreConnect: before each connection to a server; Deny or Redirect it.
	ServerPreConnect = hooks.ServerPreConnect
	// KickedFromServer: a server could not take the player; Redirect, SendToLimbo or Disconnect.
	KickedFromServer = hooks.KickedFromServer
	// ServerConnected: the player is on a server (report only).
	ServerConnected = hooks.ServerConnected
	// Disconnect: the connection ended, whatever happened (report only).
	Disconnect = hooks.Disconnect
	// PermissionsSetup: set Permission to decide a player's permissions yourself.
	PermissionsSetup = hooks.PermissionsSetup
)

// Commands players type in the game (docs/commands.md): the built-ins are of the
// same type.
type (
	// Command is one command: its name, aliases, permission, arguments and Run.
	Command = command.Command
	// CommandArg is one argument, for the client's completion and colouring.
	CommandArg = command.Arg
	// CommandInvocation is one run: who, with which label and arguments.
	CommandInvocation = command.Invocation
	// CommandSource is the player running it.
	CommandSource = command.Source
)

// The player handle: what commands and handlers know of a player and do to
// him. Connect goes through the proxy's one route into a server, with every
// check of the target (network, proof, ip_filter, bans, maintenance, capacity,
// the ServerPreConnect handlers).
type (
	// Player is one connected player (a command's Source is one).
	Player = player.Player
	// Proof is what a player has proven of who he is.
	Proof = player.Proof
	// Title is a title change for Player.Title.
	Title = player.Title
	// ConnectResult is how a Connect ended: Status, the Server, the Rule of a
	// refusal and the Reason the player reads.
	ConnectResult = player.ConnectResult
	// ConnectStatus is a ConnectResult's Status.
	ConnectStatus = player.Status
	// FakePlayer is a Player for your commands' and handlers' tests: it
	// records what was done to it.
	FakePlayer = player.Fake
)

// The ways a Connect ends.
const (
	Connected    = player.Connected
	AlreadyThere = player.AlreadyThere
	Held         = player.Held
	Refused      = player.Refused
	Failed       = player.Failed
)

// ErrNotIntercepted: the player is on a passthrough server, where the proxy
// cannot write to him (Tell, Title, ActionBar, SendPluginMessage).
var ErrNotIntercepted = player.ErrNotIntercepted

// ErrUsage, returned by a command's Run, shows the player its usage line.
var ErrUsage = command.ErrUsage

// RegisterCommand adds a command players type in the game. A label taken by
// another command makes the proxy refuse to start, naming both.
func RegisterCommand(r *Registry, c *Command) { hooks.RegisterCommand(r, c) }

// Packet filters on intercepted sessions (docs/events.md).
type (
	// Packet is one packet shown to a filter: read Payload, Replace it, Drop it,
	// or send packets of your own.
	Packet = hooks.PacketContext
	// Direction says who sent a packet.
	Direction = mc.Direction
)

// The directions.
const (
	Serverbound = mc.Serverbound // from the player
	Clientbound = mc.Clientbound // to the player
)

// OnPacket registers fn for the packets named (as docs/events.md lists them:
// "chat_command", "system_chat", "plugin_message", ...) in direction d, in the
// configuration and play states of every version that has them. Filters run on
// the session's goroutine in registration order; a panic turns the filter off
// for that session. An unknown name panics at start.
func OnPacket(r *Registry, name string, d Direction, packets []string, fn func(p *Packet)) {
	types, err := hooks.PacketTypes(packets)
	if err != nil {
		panic("infrarust.OnPacket(" + name + "): " + err.Error())
	}
	hooks.OnPacket(r, hooks.PacketFilter{Name: name, Direction: d, Types: types, Fn: fn})
}

// Transport filters see every connection before anything of it is parsed.
type (
	// TransportFilter is a name, a Filter deciding Continue or Reject, and an
	// optional Closed told when a connection it let through closes.
	TransportFilter = hooks.TransportFilter
	// TransportConn is the connection: addresses, real client, accept time, id.
	TransportConn = hooks.TransportConn
	// TransportVerdict is a transport filter's decision.
	TransportVerdict = hooks.TransportVerdict
)

// The transport verdicts.
const (
	TransportContinue = hooks.TransportContinue
	TransportReject   = hooks.TransportReject
)

// OnTransport registers a transport filter. A panic, or a decision slower than
// [events] transport_filter_timeout, rejects the connection.
func OnTransport(r *Registry, f TransportFilter) { hooks.OnTransport(r, f) }

// The bus: everything the proxy announces (docs/admin-api.md, "Events"): the
// player events above once decided, joins, leaves and switches, bans, reloads,
// health and server state changes, verification. The admin SSE stream reads
// the same bus.
type (
	// Notice is one announcement: Type, Time and Data (as the SSE stream's
	// JSON carries it).
	Notice = events.Event
	// NoticeType names an announcement ("player.join", "ban.created", ...).
	NoticeType = events.Type
)

// Observe registers fn for the announcements of types (none: all). Observers
// report, never decide: each runs one announcement at a time on a goroutine of
// its own, after the fact; one that falls behind misses announcements and is
// given a "lagged" one with the count; a panic is logged and skipped.
func Observe(r *Registry, name string, fn func(ctx context.Context, n Notice), types ...NoticeType) {
	hooks.Observe(r, name, fn, types...)
}

// Types the events are made of.
type (
	// Event is any of the event types above.
	Event = hooks.Event
	// Connection is who connected and how; the same in every event of one login.
	Connection = hooks.Connection
	// Profile is the player's identity.
	Profile = hooks.Profile
	// Property is one signed profile property (the skin).
	Property = hooks.Property
	// Result is the decision an event ended with.
	Result = hooks.Result
	// Action is the kind of decision.
	Action = hooks.Action
	// Kind names an event ("pre_login", ...).
	Kind = hooks.Kind
	// Registry collects handlers for Main.
	Registry = hooks.Registry
	// HandlerOption changes how one handler runs.
	HandlerOption = hooks.HandlerOption
)

// The decisions a handler can leave (through the events' methods).
const (
	Continue = hooks.Continue
	Deny     = hooks.Deny
	Redirect = hooks.Redirect
	Limbo    = hooks.Limbo
)

// KickedFromServer causes and Disconnect outcomes.
const (
	CauseUnreachable = hooks.CauseUnreachable
	CauseStartFailed = hooks.CauseStartFailed
	CauseKicked      = hooks.CauseKicked
	OutcomePlayed    = hooks.OutcomePlayed
	OutcomeDenied    = hooks.OutcomeDenied
	OutcomeFailed    = hooks.OutcomeFailed
)

// DefaultHandlerTimeout is a handler's deadline unless Timeout sets another.
const DefaultHandlerTimeout = hooks.DefaultHandlerTimeout

// NewRegistry makes an empty registry to register handlers in before Main.
func NewRegistry() *Registry { return hooks.NewRegistry() }

// On registers fn for the event its second parameter names, for example
// func(ctx context.Context, e *infrarust.Login). name identifies the handler in
// logs and metrics. ctx ends at the handler's deadline or when the proxy stops,
// and carries the session's trace when tracing is on.
func On[P Event](r *Registry, name string, fn func(ctx context.Context, e P), opts ...HandlerOption) {
	hooks.On(r, name, fn, opts...)
}

// Timeout sets one handler's deadline.
func Timeout(d time.Duration) HandlerOption { return hooks.Timeout(d) }

// Fire runs r's handlers on e the way the proxy does (in order, each on its own
// copy under its deadline, panics recovered, a Deny final) and returns the
// result, which is also left in e. It is for your handlers' tests: no proxy, no
// webhooks.
func Fire[E any, P interface {
	*E
	Event
}](ctx context.Context, r *Registry, e P) Result {
	d, err := hooks.New(hooks.Options{Handlers: r})
	if err != nil {
		return Result{} // only webhooks make New fail, and there are none
	}
	return hooks.Fire(d, ctx, e)
}

// RunCommand runs a command line (without its '/') the way a player typing it
// runs it, with r's commands only (no built-ins), and reports whether one of
// them took it. It is for your commands' tests.
func RunCommand(ctx context.Context, r *Registry, src CommandSource, line string) bool {
	set, err := command.NewSet(r.RegisteredCommands()...)
	if err != nil {
		return false
	}
	c, inv := set.Parse(src, line)
	if c == nil {
		return false
	}
	command.Run(ctx, c, inv,
		func(label, usage string) string { return "Usage: /" + label + " " + usage },
		func(err error) string { return err.Error() })
	return true
}

// FilterPacket runs r's packet filters on p as a session does (p.Direction and
// p.Type say which see it). It is for your filters' tests.
func FilterPacket(r *Registry, p *Packet) {
	for _, f := range r.RegisteredPacketFilters() {
		if f.Direction != p.Direction {
			continue
		}
		for _, t := range f.Types {
			if t == p.Type {
				f.Fn(p)
				break
			}
		}
		if p.Dropped {
			return
		}
	}
}

// PacketNamed is the packet type of a name, for building a Packet in a test.
func PacketNamed(name string) (PacketType, bool) { return mc.PacketTypeByName(name) }

// PacketType identifies a packet the proxy knows by name.
type PacketType = mc.PacketType
