package hooks

import (
	"github.com/infrarust-go/infrarust/internal/events"

	"net/netip"
	"time"
)

// Kind names an event. Its String is the name webhooks use in `events` and in payloads.
type Kind uint8

// The events, in the order one login fires them.
const (
	KindPreLogin Kind = iota + 1
	KindGameProfileRequest
	KindLogin
	KindPostLogin
	KindChooseInitialServer
	KindServerPreConnect
	KindKickedFromServer
	KindServerConnected
	KindDisconnect
	KindPermissionsSetup
	numKinds
)

var kindNames = [numKinds]string{
	"", "pre_login", "game_profile_request", "login", "post_login", "choose_initial_server",
	"server_pre_connect", "kicked_from_server", "server_connected", "disconnect", "permissions_setup",
}

func (k Kind) String() string {
	if k == 0 || k >= numKinds {
		return "unknown"
	}
	return kindNames[k]
}

// kindTypes are the kinds' types on the events bus; PermissionsSetup carries a
// function and is not published.
var kindTypes = [numKinds]events.Type{"", events.PlayerPreLogin, events.PlayerGameProfileRequest,
	events.PlayerLogin, events.PlayerPostLogin, events.PlayerChooseInitialServer, events.PlayerServerPreConnect,
	events.PlayerKickedFromServer, events.PlayerServerConnected, events.PlayerDisconnect, ""}

// lastWebhookKind is the last event a webhook may receive: the ones after it
// carry a function (PermissionsSetup) and are for compiled-in handlers only.
const lastWebhookKind = KindDisconnect

// ParseKind reads an event name as written in [[webhooks]] events.
func ParseKind(s string) (Kind, bool) {
	for k := KindPreLogin; k <= lastWebhookKind; k++ {
		if kindNames[k] == s {
			return k, true
		}
	}
	return 0, false
}

// Kinds lists every event a webhook may receive, in firing order (docs, tests,
// config checks).
func Kinds() []Kind {
	out := make([]Kind, 0, numKinds-1)
	for k := KindPreLogin; k <= lastWebhookKind; k++ {
		out = append(out, k)
	}
	return out
}

// Action is what a handler decided. The zero value lets the proxy go on as it would.
type Action uint8

const (
	// Continue: no change.
	Continue Action = iota
	// Deny refuses the login or the connection to a server; on KickedFromServer it
	// disconnects the player. Reason is what the player reads.
	Deny
	// Redirect sends the player to Result.Server instead.
	Redirect
	// Limbo holds the player in the proxy's limbo (KickedFromServer on intercepted servers).
	Limbo
)

var actionNames = [...]string{"continue", "deny", "redirect", "limbo"}

func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "unknown"
}

// Allows reports whether an event of kind k may end with action a: a webhook answer
// or a result outside this set is ignored (and logged).
func (k Kind) Allows(a Action) bool {
	switch a {
	case Continue:
		return true
	case Deny:
		return k == KindPreLogin || k == KindLogin || k == KindServerPreConnect || k == KindKickedFromServer
	case Redirect:
		return k == KindChooseInitialServer || k == KindServerPreConnect || k == KindKickedFromServer
	case Limbo:
		return k == KindKickedFromServer
	}
	return false
}

// Decides reports whether a handler's answer to kind k can change what happens
// (GameProfileRequest changes the profile instead, and the rest only report).
func (k Kind) Decides() bool {
	return k.Allows(Deny) || k.Allows(Redirect)
}

// Result is the decision an event ended with. The proxy acts on it; the zero value
// means "go on".
type Result struct {
	Action Action
	// Reason is the text the player reads on Deny ("" means the proxy's usual text).
	Reason string
	// Server is the server id to use on Redirect.
	Server string
	// By names the handler or webhook that decided, for logs and traces.
	By string
}

// Denied reports whether the player must be refused (or, for KickedFromServer, disconnected).
func (r Result) Denied() bool { return r.Action == Deny }

// Redirected reports whether the player goes to r.Server instead.
func (r Result) Redirected() bool { return r.Action == Redirect }

// decision is the result part every event carries; handlers set it through the
// event's own methods, so an event only offers the results it allows.
type decision struct{ res Result }

// Result is the decision so far; later handlers see what earlier ones set.
func (d *decision) Result() Result { return d.res }

// Event is one of the event types of this package (and nothing else: the set is
// closed, so the dispatcher knows every event's allowed results).
type Event interface {
	// Kind says which event this is; it works on a nil pointer.
	Kind() Kind
	// Result is the decision so far.
	Result() Result
	dec() *decision
}

// Connection is who connected and how, the same in every event of one login.
type Connection struct {
	// ID is unique per connection for the life of the process; it ties the events of
	// one login together (webhooks receive them as separate requests).
	ID uint64 `json:"id"`
	// ClientIP is the player's address (from the PROXY header when one is received).
	ClientIP netip.Addr `json:"client_ip"`
	// Host is the hostname the player typed, normalised.
	Host string `json:"host"`
	// Protocol is the client's protocol version (0 for a pre-1.7 client).
	Protocol int32 `json:"protocol"`
	// ProxyMode is the routed server's proxy_mode ("passthrough", "client_only", ...).
	ProxyMode string `json:"proxy_mode"`
	// Legacy is set for a pre-1.7 (0x02) login.
	Legacy bool `json:"legacy,omitempty"`
}

// Profile is the player's identity: authenticated by Mojang on client_only servers,
// claimed by the client everywhere else.
type Profile struct {
	// Name is the player name.
	Name string `json:"name"`
	// UUID is dashed lower-case hex; "" when the client did not say (before 1.20.2) on
	// a server that does not authenticate.
	UUID string `json:"uuid,omitempty"`
	// Properties are the signed profile properties (the skin), intercepted modes only.
	Properties []Property `json:"properties,omitempty"`
}

// Property is one profile property, kept byte for byte (backends check the signature).
type Property struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Signature string `json:"signature,omitempty"`
}

// PreLogin fires when a login arrives, after the admission chain (filters, the ban
// check on the claimed identity, the rate limit) and before anything is spent on
// it: no authentication, no backend. Handlers may Deny it.
type PreLogin struct {
	decision
	Connection Connection `json:"connection"`
	// Server is the server the hostname routed to.
	Server string `json:"server"`
	// Username is the name the client claims.
	Username string `json:"username"`
	// UUID is the UUID the client claims (1.20.2+), "" otherwise.
	UUID string `json:"uuid,omitempty"`
}

// GameProfileRequest fires on intercepted servers (offline, client_only) once the
// proxy knows the player's profile (from Mojang, or the offline one), before bans
// are checked against it. Handlers may replace Profile: the backend, the ban check
// and every later event see the new one. Passthrough servers never fire it (the
// backend reads the client's own login).
type GameProfileRequest struct {
	decision
	Connection Connection `json:"connection"`
	Server     string     `json:"server"`
	// Profile is the profile the player logs in with; set it to change it.
	Profile Profile `json:"profile"`
	// OnlineMode is true when Mojang authenticated the player (client_only).
	OnlineMode bool `json:"online_mode"`
}

// Login fires once the player's final profile passed the ban check; handlers may
// Deny it. On passthrough servers the profile is the claimed one.
type Login struct {
	decision
	Connection Connection `json:"connection"`
	Server     string     `json:"server"`
	Profile    Profile    `json:"profile"`
}

// PostLogin reports a player the proxy accepted, before a server is chosen.
type PostLogin struct {
	decision
	Connection Connection `json:"connection"`
	Server     string     `json:"server"`
	Profile    Profile    `json:"profile"`
}

// ChooseInitialServer fires before the first backend connection; handlers may
// Redirect the player to another server than the one the hostname routed to.
type ChooseInitialServer struct {
	decision
	Connection Connection `json:"connection"`
	Profile    Profile    `json:"profile"`
	// Server is the routed server.
	Server string `json:"server"`
}

// ServerPreConnect fires before each connection to a server (the initial one, a
// redirect, a switch), before the server is woken; handlers may Deny it or
// Redirect it to another server.
type ServerPreConnect struct {
	decision
	Connection Connection `json:"connection"`
	Profile    Profile    `json:"profile"`
	// Server is where the player is about to be connected.
	Server string `json:"server"`
	// Previous is the server the player is on, "" for the initial connection.
	Previous string `json:"previous,omitempty"`
}

// Kick causes, in KickedFromServer.Cause.
const (
	CauseUnreachable = "unreachable"  // no address answered
	CauseStartFailed = "start_failed" // the managed server could not be started
	CauseKicked      = "kicked"       // the backend sent a disconnect
)

// KickedFromServer fires when a server could not take the player (none of its
// addresses answered, it could not be started, or it kicked them). Handlers may
// Redirect the player, SendToLimbo (intercepted servers), or Disconnect with a text;
// without a decision the player is disconnected with Reason.
type KickedFromServer struct {
	decision
	Connection Connection `json:"connection"`
	Profile    Profile    `json:"profile"`
	Server     string     `json:"server"`
	// Cause is one of the Cause constants.
	Cause string `json:"cause"`
	// Reason is the backend's kick text, or the text the proxy would show.
	Reason string `json:"reason"`
	// DuringLogin is true while the player has not played on any server yet.
	DuringLogin bool `json:"during_login"`
}

// ServerConnected reports that the player is on Server, at backend Address.
type ServerConnected struct {
	decision
	Connection Connection `json:"connection"`
	Profile    Profile    `json:"profile"`
	Server     string     `json:"server"`
	Address    string     `json:"address"`
	Previous   string     `json:"previous,omitempty"`
}

// Disconnect outcomes, in Disconnect.Outcome.
const (
	OutcomePlayed = "played" // the player was on a server and the session ended
	OutcomeDenied = "denied" // a handler, a webhook or a ban refused the login
	OutcomeFailed = "failed" // authentication, the backend or the client failed first
)

// Disconnect fires exactly once for every connection that fired PreLogin, when it
// ends, whatever happened in between.
type Disconnect struct {
	decision
	Connection Connection `json:"connection"`
	Profile    Profile    `json:"profile"`
	// Server and Address are where the player was, "" if they never got there.
	Server  string `json:"server,omitempty"`
	Address string `json:"address,omitempty"`
	// Outcome is one of the Outcome constants.
	Outcome string `json:"outcome"`
	// Duration is how long the connection lasted.
	Duration time.Duration `json:"duration_ns"`
}

// PermissionsSetup fires once per intercepted player, before their first
// command: a handler may supply the function every permission check of this
// player consults (commands, plugins), for networks with their own permission
// system. Compiled-in handlers only (a webhook cannot answer with a function).
type PermissionsSetup struct {
	decision
	Connection Connection `json:"connection"`
	Profile    Profile    `json:"profile"`
	// OnlineMode is true when Mojang authenticated the player (client_only).
	OnlineMode bool `json:"online_mode"`
	// Admin is the proxy's own answer: [permissions] admins or a stored op.
	Admin bool `json:"admin"`
	// Permission is the check the proxy will use; replace it to decide yourself
	// (it may be called from any goroutine and must not block).
	Permission func(perm string) bool `json:"-"`
}

// Deny refuses the login; the player reads reason ("" shows the proxy's usual text).
func (e *PreLogin) Deny(reason string) { e.res = Result{Action: Deny, Reason: reason} }

// Deny refuses the login; the player reads reason.
func (e *Login) Deny(reason string) { e.res = Result{Action: Deny, Reason: reason} }

// Redirect sends the player to server instead of the routed one.
func (e *ChooseInitialServer) Redirect(server string) {
	e.res = Result{Action: Redirect, Server: server}
}

// Deny refuses this connection to the server; the player reads reason.
func (e *ServerPreConnect) Deny(reason string) { e.res = Result{Action: Deny, Reason: reason} }

// Redirect connects the player to server instead.
func (e *ServerPreConnect) Redirect(server string) {
	e.res = Result{Action: Redirect, Server: server}
}

// Redirect sends the player to server.
func (e *KickedFromServer) Redirect(server string) {
	e.res = Result{Action: Redirect, Server: server}
}

// SendToLimbo holds the player in the proxy's limbo (intercepted servers; on a
// passthrough server the player is disconnected instead).
func (e *KickedFromServer) SendToLimbo() { e.res = Result{Action: Limbo} }

// Disconnect ends the player's connection with text.
func (e *KickedFromServer) Disconnect(text string) { e.res = Result{Action: Deny, Reason: text} }

func (*PreLogin) Kind() Kind            { return KindPreLogin }
func (*GameProfileRequest) Kind() Kind  { return KindGameProfileRequest }
func (*Login) Kind() Kind               { return KindLogin }
func (*PostLogin) Kind() Kind           { return KindPostLogin }
func (*ChooseInitialServer) Kind() Kind { return KindChooseInitialServer }
func (*ServerPreConnect) Kind() Kind    { return KindServerPreConnect }
func (*KickedFromServer) Kind() Kind    { return KindKickedFromServer }
func (*ServerConnected) Kind() Kind     { return KindServerConnected }
func (*Disconnect) Kind() Kind          { return KindDisconnect }
func (*PermissionsSetup) Kind() Kind    { return KindPermissionsSetup }

func (d *decision) dec() *decision { return d }

// profiled is an event that carries a profile (only GameProfileRequest's may be changed).
type profiled interface{ profile() *Profile }

func (e *GameProfileRequest) profile() *Profile  { return &e.Profile }
func (e *Login) profile() *Profile               { return &e.Profile }
func (e *PostLogin) profile() *Profile           { return &e.Profile }
func (e *ChooseInitialServer) profile() *Profile { return &e.Profile }
func (e *ServerPreConnect) profile() *Profile    { return &e.Profile }
func (e *KickedFromServer) profile() *Profile    { return &e.Profile }
func (e *ServerConnected) profile() *Profile     { return &e.Profile }
func (e *Disconnect) profile() *Profile          { return &e.Profile }
func (e *PermissionsSetup) profile() *Profile    { return &e.Profile }
