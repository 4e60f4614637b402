package proxy

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/accounts"
	"github.com/infrarust-go/infrarust/internal/passes"
)

// The parts of the proxy. Each has one job, its own state, and names the
// other parts it calls; all share the core (core.go). assemble wires them.

// assemble makes the parts over c and tells each the others it calls.
func assemble(c *core) *Proxy {
	p := &Proxy{core: c,
		door: &door{core: c}, status: &statusHandler{core: c}, moves: &moves{core: c}, limbos: &limbos{core: c},
		checks: &checks{core: c}, cmds: &commander{core: c}, players: &players{core: c},
	}
	p.door.status, p.door.players, p.door.moves = p.status, p.players, p.moves
	p.moves.door, p.moves.limbos, p.moves.checks, p.moves.cmds, p.moves.players = p.door, p.limbos, p.checks, p.cmds, p.players
	p.limbos.moves, p.limbos.status = p.moves, p.status
	p.checks.limbos, p.checks.players = p.limbos, p.players
	p.cmds.checks, p.cmds.moves, p.cmds.players = p.checks, p.moves, p.players
	p.players.door, p.players.moves, p.players.cmds = p.door, p.moves, p.cmds
	return p
}

// door is where every connection comes in: the admission chain (admission.go:
// PROXY header, transport filters, IP filters, handshake, login start, route,
// bans, rate limits), the refusals and their counts, and the hand-over to the
// status handler or a login handler (handler.go). Its connections end here
// too (finish).
type door struct {
	*core
	status  *statusHandler
	players *players
	moves   *moves // the login handlers

	proxyHeaderTimeout time.Duration
	sem                chan struct{} // max_connections permits; nil = unlimited
	perIP              ipCounter
	failLog            failedLogins  // one INFO line per IP and reason per failedLogWindow
	transportIDs       atomic.Uint64 // numbers the connections transport filters see
	accepted, rejected atomic.Uint64
	active             atomic.Int64
}

// statusHandler answers server list pings (status.go): the proxy's own MOTDs,
// a backend's answer through the cache, legacy pings.
type statusHandler struct {
	*core
}

// moves is every way a player reaches a backend: the login handlers
// (passthrough.go, intercepted.go), the one route into a server (route.go,
// gate.go, handle.go's connect), switching and fallback (switch.go), the
// BungeeCord channel's moves (bungee.go) and the balanced backend connection
// (connect.go).
type moves struct {
	*core
	door    *door
	limbos  *limbos
	checks  *checks
	cmds    *commander
	players *players
}

// limbos holds players in the proxy's void world while a server owes them
// something (limbo.go): its wake, a queue slot, the end of its maintenance,
// or a way back after it went down.
type limbos struct {
	*core
	moves  *moves
	status *statusHandler

	mu     sync.Mutex            // guards queues and wakes
	queues map[string]*waitQueue // full servers' limbo queues, by server id
	wakes  map[string]*waking    // managed servers' starts players wait for, by id
}

// checks are what a player proves in the limbo before a server takes him
// (authlimbo.go, verify.go): the password login of the auth limbo, premium
// auto-login, bot verification; and the proof he carries (proof.go).
type checks struct {
	*core
	limbos  *limbos
	players *players

	// accounts is the auth limbo's store, opened once on first need.
	accountsMu sync.Mutex
	accounts   accounts.Store
	// passes keeps bot verification's passes beyond memory (verify.go); nil
	// until a configuration with "verify" opened it. Guarded by accountsMu.
	passes     passes.Store
	passesOpen bool
	cracked    expiringSet // premium names whose proof failed, for allow_cracked_retry
	verify     verifier    // bot verification: passes, attack mode
}

// commander is the in-game commands (commands.go): the built-ins, the
// plugins', who may use which (perms.go), and each player's command state
// and packet filters (cmdfilter.go).
type commander struct {
	*core
	checks  *checks // the account commands
	moves   *moves
	players *players

	perms permissions // who may use which command
}

// players is what happens to a player as a whole (playerevents.go,
// players.go, identity.go, handle.go): the events of his login, his claim to
// his identity (one player, one session), his arrival and departure, and the
// handle commands and plugins act on him through.
type players struct {
	*core
	door  *door
	moves *moves
	cmds  *commander
}
