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

	"github.com/infrarust-go/infrarust/internal/hooks"
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
)

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
