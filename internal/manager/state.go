package manager

import "slices"

// State is where a managed server is in its life; the proxy's status MOTD, the
// admin API and SSE compare and show it, so it is typed and defined once here.
type State string

// States a managed server can be in.
const (
	StateOnline   State = "online"   // ready: logins go straight through
	StateOffline  State = "offline"  // not known (first panel poll pending, provider unreachable)
	StateSleeping State = "sleeping" // down on purpose; a login wakes it
	StateStarting State = "starting" // a start is under way; logins wait for it
	StateStopping State = "stopping" // a stop is under way; logins wait for it, then start it again
	StateCrashed  State = "crashed"  // went down on its own; the reason is kept, a login retries
)

// States lists every state, for completions, docs and exhaustive tests.
var States = []State{StateOnline, StateOffline, StateSleeping, StateStarting, StateStopping, StateCrashed}

// transitions is the state machine, written once: the states each state may move
// to. Staying in a state with a new reason is always allowed. Where each move comes
// from:
//
//   - to starting: a login or an operator starts a down server, or a poll sees one
//     started outside the proxy (never from online: it is already up).
//   - to online: only from starting, once the provider says it runs and it answers a ping.
//   - to stopping: an idle, operator, reload or shutdown stop, or a poll sees a stop
//     made outside the proxy.
//   - to sleeping: a stop finished, a poll finds it down, or a reload swaps in a new provider.
//   - to crashed: the process died, the start failed, or a poll finds it crashed.
//   - to offline: the provider cannot be used (bad config after a reload) or a stop failed.
var transitions = map[State][]State{
	StateOffline:  {StateSleeping, StateStarting, StateStopping, StateCrashed},
	StateSleeping: {StateOffline, StateStarting, StateStopping, StateCrashed},
	StateCrashed:  {StateOffline, StateSleeping, StateStarting, StateStopping},
	StateStarting: {StateOnline, StateStopping, StateCrashed},
	StateOnline:   {StateStopping, StateSleeping, StateCrashed},
	StateStopping: {StateOffline, StateSleeping, StateStarting, StateCrashed},
}

// canMove reports whether the state machine allows from -> to. The zero State is
// a server just configured, which may enter any state.
func canMove(from, to State) bool {
	return from == "" || from == to || slices.Contains(transitions[from], to)
}

// down reports whether nothing runs for the state, so a login must start it and a
// reloaded provider may be swapped in.
func (s State) down() bool {
	return s == StateSleeping || s == StateOffline || s == StateCrashed
}
