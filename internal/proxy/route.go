package proxy

import (
	"errors"
	"fmt"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/forwarding"
	"github.com/infrarust-go/infrarust/internal/player"
	"github.com/infrarust-go/infrarust/internal/session"
)

// The one route into a server. Every way an intercepted player reaches a
// backend goes through enter (or admitInto, for a limbo stay's next try): his
// login's placement, /server, /send, the admin API and the CLI, a backend's
// BungeeCord Connect, fallback and handler redirects, a drain's move, a fleet
// send, every limbo exit. A guarantee written here holds on every path; one
// written anywhere else is one some path skips (docs/security.md).

// Why a player moves: the reason label of infrarust_moves_total and of the
// player.switch and player.move_refused events. A fixed set: a kick's text
// goes in Move.detail, never in a label.
const (
	whyLogin    = "login"    // the login's placement, its redirects and tries
	whyCommand  = "command"  // the player's own /server
	whySend     = "send"     // a staff member's /send
	whyAdmin    = "admin"    // the admin API, the CLI, top
	whyPlugin   = "plugin"   // a backend's BungeeCord Connect or ConnectOther
	whyFallback = "fallback" // the player's server kicked him, closed or stalled
	whyDrain    = "drain"    // backends drain --move
	whyFleet    = "fleet"    // another proxy of the fleet passed on a send
	whyLimbo    = "limbo"    // leaving the limbo for the server it held him for
)

// Move is one player going to one server, whatever asked for it.
type Move struct {
	who    *onlinePlayer
	to     *server
	why    string   // one of the why* reasons
	detail string   // what the events and the log add to why (a kick's text)
	pass   pass     // the soft rules an operator's send may skip
	avoid  []string // addresses of to not to use (the one the player just lost)
}

// reason is the move's reason as the events and the log give it.
func (m Move) reason() string {
	if m.detail == "" {
		return m.why
	}
	return m.why + ": " + m.detail
}

// Rules a move is refused by besides the server's own (gate.go).
const (
	// ruleNetwork: the target is not an intercepted server of the player's network.
	ruleNetwork = "network"
	// ruleProof: the target requires a proof the player has not given and
	// cannot give in the middle of a session (a Mojang login, a premium account).
	ruleProof = "proof"
)

// errBetweenServers: the player is in the limbo or in the middle of a move.
var errBetweenServers = errors.New("the player is between servers (in the limbo or moving); try again in a moment")

// move carries out m for a playing player under his move lock; held: he
// waits in the limbo on his way (the target owes a check, a wake or a queue).
func (p *moves) move(m Move) (held bool, err error) {
	m.who.move.mu.Lock()
	defer m.who.move.mu.Unlock()
	return p.moveLocked(m)
}

// moveLocked carries out m for a playing player whose move lock the caller
// holds: the route (enter), then the switch to the backend it gives, or the
// limbo stay it asks the player to wait in first (a check the target
// requires). The player stays where he is when it fails.
func (p *moves) moveLocked(m Move) (held bool, err error) {
	pl := m.who
	outcome := "moved"
	defer func() {
		if err != nil {
			outcome = moveOutcome(err)
		}
		p.met.Move(m.why, outcome)
	}()
	if pl.sess == nil {
		return false, ErrNotSwitchable
	}
	if pl.sess.Between() {
		return false, errBetweenServers
	}
	from, _ := pl.where()
	cn := pl.dialConn(p.state.Load())
	b, stay, err := p.enter(cn, from, m, false)
	if err != nil {
		return false, err
	}
	pl.setReason(m.reason())
	if stay != nil {
		outcome = "held"
		p.log.Info("player held in the limbo on his way", "player", pl.name, "from", from.id, "to", m.to.id, "handler", stay.Handler, "reason", m.reason())
		pl.sess.ToLimbo(*stay)
		return true, nil
	}
	endSpan := pl.origin.ev.trace.Switch(from.id, b.Server)
	err = pl.sess.Switch(b, ackWait)
	endSpan(err)
	return false, err
}

// enter is the one way into a server: the player of cn, on server from (nil
// at login), goes to m.to. The ServerPreConnect handlers are asked first (they
// may refuse him, or send him elsewhere), then admitInto decides. It returns the
// backend he is logged in to, or the limbo stay he waits in first.
func (p *moves) enter(cn *conn, from *server, m Move, holds bool) (*session.Backend, *session.Stay, error) {
	previous := ""
	if from != nil {
		previous = from.id
	}
	t, text, ok := p.players.preConnect(cn, m.to, previous, interceptedFamily)
	if !ok {
		return nil, nil, &handlerRefusal{text: text}
	}
	m.to = t
	return p.admitInto(cn, from, m, holds)
}

// admitInto takes the player of cn into m.to once the decision to go there is
// made and announced, in this order: the network; what m.to requires of his
// proof (requirements: a check is a limbo stay, always); its rules (admitTo);
// its wake; its backends. With holds (a login, or a player already in the
// limbo), a server that holds players for what stops him now (asleep with
// "wake", in maintenance with "maintenance", full with "queue") gives the stay
// to wait in; without, those answers are errors (a playing player stays where
// he is; a stay's own retry waits on).
func (p *moves) admitInto(cn *conn, from *server, m Move, holds bool) (*session.Backend, *session.Stay, error) {
	t := m.to
	if !t.cfg.ProxyMode.Intercepted() || (from != nil && t.cfg.Network != from.cfg.Network) {
		r := &refusal{t.id, ruleNetwork, t.id + " is not a server of your network"}
		p.recordRefusal(cn, from, m, r, holds)
		return nil, nil, r
	}
	cn.srv = t
	stay, err := p.requirements(cn, t, m.why == whyLogin)
	if r, ok := errors.AsType[*refusal](err); ok {
		p.recordRefusal(cn, from, m, r, holds)
		return nil, nil, r
	}
	if err != nil {
		return nil, nil, &gateError{err}
	}
	if stay != nil {
		return nil, stay, nil
	}
	if r := p.admitTo(cn.entrant(), t, m.pass); r != nil {
		if holds && !r.hard() {
			if stay := p.limbos.refusedStay(cn, t, r); stay != nil {
				return nil, stay, nil
			}
		}
		p.recordRefusal(cn, from, m, r, holds)
		return nil, nil, r
	}
	if holds {
		if stay := p.limbos.loginStay(cn, t); stay != nil {
			return nil, stay, nil
		}
	}
	if p.limbos.asleep(t) {
		if err := p.wake(cn); err != nil {
			return nil, nil, &wakeFailed{server: t.id, err: err}
		}
	}
	b, outcome, err := p.joinBackend(cn, t, &cn.lease, m.avoid, m.why == whyLogin)
	if err != nil {
		if _, full := errors.AsType[*fullError](err); full && holds && t.cfg.HasLimbo(config.LimboQueue) && limboCovers(cn.protocol) {
			return nil, p.limbos.queueStay(cn, t), nil
		}
		return nil, nil, err
	}
	if outcome.Kick != "" {
		return nil, nil, &backendRefused{server: t.id, kick: outcome.Kick}
	}
	return b, nil, nil
}

// recordRefusal publishes a refusal of a move (event, metric, log line). A
// login's refusal is the login's own log line and metric; a soft refusal a
// limbo stay's retry waits through is the wait itself, told by its title.
func (p *moves) recordRefusal(cn *conn, from *server, m Move, r *refusal, holds bool) {
	if m.why == whyLogin || (m.why == whyLimbo && !holds && !r.hard()) {
		return
	}
	fromID := "limbo"
	if from != nil {
		fromID = from.id
	}
	p.moveRefused(cn.entrant(), fromID, r, m.reason())
}

// handlerRefusal: a ServerPreConnect handler refused the move; text is what
// the player reads.
type handlerRefusal struct{ text string }

func (e *handlerRefusal) Error() string { return "refused by an event handler: " + e.text }
func (e *handlerRefusal) Unwrap() error { return errHandlerRefused }

// errHandlerRefused: a ServerPreConnect handler refused the move.
var errHandlerRefused = errors.New("refused by an event handler")

// backendRefused: the backend took the connection and refused the player by
// name (its whitelist, a ban of its own); the address is healthy.
type backendRefused struct{ server, kick string }

func (e *backendRefused) Error() string { return e.server + " refused the player: " + e.kick }

// gateError: a check the server requires could not be run (the account
// store does not answer, too many checks run, the client's version cannot be
// held); its text is the player's.
type gateError struct{ err error }

func (e *gateError) Error() string { return e.err.Error() }
func (e *gateError) Unwrap() error { return e.err }

// wakeFailed: a managed server could not be started; the manager's error is
// the text the player reads.
type wakeFailed struct {
	server string
	err    error
}

func (e *wakeFailed) Error() string { return e.err.Error() }
func (e *wakeFailed) Unwrap() error { return e.err }

// playerText is what a player reads of a move or login to t that failed with
// err: a rule's, a handler's or the backend's own words, else t's
// disconnect_message. Never an address or an error of the proxy's (those are
// in the log line).
func playerText(t *server, err error) string {
	var (
		r  *refusal
		h  *handlerRefusal
		g  *gateError
		br *backendRefused
		fe *fullError
		wf *wakeFailed
	)
	switch {
	case errors.As(err, &r):
		return r.text
	case errors.As(err, &g):
		return g.Error()
	case errors.As(err, &h):
		return h.text
	case errors.As(err, &br):
		return br.kick
	case errors.As(err, &fe):
		return fe.kick
	case errors.Is(err, errVelocityTooOld):
		return forwarding.KickVelocityTooOld
	case errors.As(err, &wf):
		return wf.err.Error() // the manager's errors are written for players (manager.StartError)
	case errors.Is(err, errBetweenServers), errors.Is(err, session.ErrNotPlaying):
		return "you are between servers; try again in a moment"
	case errors.Is(err, ErrNotSwitchable):
		return "you cannot be moved from this server"
	}
	if t != nil {
		return t.cfg.DisconnectMessage
	}
	return "the server is not answering"
}

// requirements is what t asks of the player's proof before anything else of
// it, on every way in: a client_only server a Mojang-authenticated profile
// (refused otherwise: it cannot be proven in the middle of a session); a
// "verify" server the bot check; an "auth" server the password of the name's
// account (or Mojang's word for it). A check is the limbo stay it runs in; nil
// and no error: nothing more is owed.
func (p *moves) requirements(cn *conn, t *server, login bool) (*session.Stay, error) {
	if t.cfg.ProxyMode == config.ModeClientOnly && !cn.proven().mojang {
		return nil, &refusal{t.id, ruleProof, fill(p.msgs().MoveNeedsMojang, "server", t.id)}
	}
	return p.checks.gateStay(cn, t, login)
}

// moveOutcome names how a move ended, for infrarust_moves_total: moved, held
// (in the limbo on the way), refused (the target's rules or a handler said
// no) or failed.
func moveOutcome(err error) string {
	var r *refusal
	switch {
	case err == nil:
		return "moved"
	case errors.As(err, &r), errors.Is(err, ErrOtherNetwork), errors.Is(err, errHandlerRefused):
		return "refused"
	}
	return "failed"
}

// connect moves pl to serverID by the route, for why, and says how it went;
// the error is the move's own (nil unless it was refused or failed), for
// callers that answer with it (the admin API's status codes). A refused or
// failed player stays where he was; the caller tells him.
func (p *moves) connect(pl *onlinePlayer, serverID, why string, ps pass) (player.ConnectResult, error) {
	res := player.ConnectResult{Server: serverID}
	fail := func(st player.Status, rule string, err error) (player.ConnectResult, error) {
		res.Status, res.Rule = st, rule
		if res.Reason == "" {
			res.Reason = err.Error()
		}
		return res, err
	}
	if pl.sess == nil {
		res.Reason = playerText(nil, ErrNotSwitchable)
		return fail(player.Failed, "", ErrNotSwitchable)
	}
	t := p.state.Load().servers[serverID]
	if t == nil {
		res.Reason = fill(p.msgs().ServerUnknown, "server", serverID)
		return fail(player.Refused, ruleNetwork, fmt.Errorf("%w %q", ErrUnknownServer, serverID))
	}
	cur, _ := pl.where()
	if !t.cfg.ProxyMode.Intercepted() || t.cfg.Network != cur.cfg.Network {
		res.Reason = fill(p.msgs().ServerUnknown, "server", serverID)
		return fail(player.Refused, ruleNetwork, fmt.Errorf("%w (%s is in network %q, %s in %q)", ErrOtherNetwork, cur.id, cur.cfg.Network, t.id, t.cfg.Network))
	}
	if cur.id == t.id && !pl.sess.Between() {
		res.Status = player.AlreadyThere
		return res, nil
	}
	held, err := p.move(Move{who: pl, to: t, why: why, pass: ps})
	switch {
	case err == nil && held:
		res.Status = player.Held
		return res, nil
	case err == nil:
		res.Status = player.Connected
		return res, nil
	}
	res.Reason = playerText(t, err)
	var r *refusal
	switch {
	case errors.As(err, &r):
		res.Server = r.server // a handler's redirect may have named another
		return fail(player.Refused, r.rule, err)
	case errors.Is(err, errHandlerRefused):
		return fail(player.Refused, "handler", err)
	}
	return fail(player.Failed, "", err)
}
