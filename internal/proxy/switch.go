package proxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/bungeechannel"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/player"
	"github.com/infrarust-go/infrarust/internal/session"
)

// ackWait bounds how long a client may take to acknowledge a move into its
// configuration phase.
const ackWait = 10 * time.Second

// Errors of the player operations.
var (
	// ErrUnknownPlayer: no player of that name is connected.
	ErrUnknownPlayer = errors.New("no such player")
	// ErrNotSwitchable: the player is on a passthrough server, whose bytes the
	// proxy only forwards.
	ErrNotSwitchable = errors.New("the player's server is passthrough; only offline and client_only sessions can be moved")
	// ErrOtherNetwork: the target is not an intercepted server of the player's network.
	ErrOtherNetwork = errors.New("the target server is not an intercepted server of the player's network")
)

// dialConn is the player seen as a new login, for logging them in to another
// backend: their identity and handshake, under the configuration in force now.
func (pl *onlinePlayer) dialConn(st *state) *conn {
	o := pl.origin
	return &conn{
		st: st, client: o.client, ip: o.ip, hs: o.hs, protocol: o.protocol,
		player: o.player, uuid: o.uuid, profile: o.profile, intent: intentLogin,
		ev: o.ev, pl: pl,
	}
}

// sessionPolicy is how the proxy decides for the intercepted sessions that
// start under st: moves are accounted and announced, and a lost backend is
// replaced when possible. Built once per configuration; each hook finds its
// player as the session's owner.
func (p *moves) sessionPolicy(st *state) *session.Policy {
	return &session.Policy{
		StallTimeout: st.cfg.StallTimeout.D(),
		Moved: func(s *session.Session, from, to *session.Backend) {
			pl := ownerOf(s)
			p.moved(pl, from, to, pl.takeReason())
		},
		Lost: func(s *session.Session, b *session.Backend, gone session.Gone) error {
			return p.fallback(ownerOf(s), b, gone)
		},
		PluginMessage:  p.bungeeMessages(st),
		PluginChannels: bungeechannel.IsChannel,
		Filter:         p.cmds.sessionFilter(st),
		Limbo:          p.met.Limbo,
	}
}

// ownerOf is the player of an intercepted session.
func ownerOf(s *session.Session) *onlinePlayer { return s.Owner().(*onlinePlayer) }

// moved moves the player's accounting from one backend to the next, for
// every completed move and limbo exit: the counts, the player.switch event,
// ServerConnected (previous: the server he was on, "" for his first).
func (p *moves) moved(pl *onlinePlayer, from, to *session.Backend, reason string) {
	st := p.state.Load()
	srv := st.servers[to.Server]
	if srv == nil {
		srv, _ = pl.where() // removed by a reload meanwhile: count them where they were
	}
	if reason == "" {
		reason = whyLimbo
	}
	pl.mu.Lock()
	prev, landed := pl.srv, pl.landed
	pl.landed = true
	pl.mu.Unlock()
	p.players.depart(pl)
	p.players.arrive(pl, srv, to.Address)
	if pl.cmds != nil {
		// Roles limited to some servers change with the server.
		pl.cmds.scheduleRefresh()
	}
	sw := events.Switch{Username: pl.origin.player, UUID: pl.origin.uuid, ToServer: to.Server, ToAddress: to.Address, Reason: reason}
	if from != nil {
		sw.FromServer, sw.FromAddress = from.Server, from.Address
	}
	p.bus.Publish(events.PlayerSwitch, sw)
	fromLog := "limbo"
	if from != nil {
		fromLog = sw.FromServer + "/" + sw.FromAddress
	}
	p.log.Info("player moved", "player", sw.Username, "from", fromLog, "to", sw.ToServer+"/"+sw.ToAddress, "reason", reason)
	previous := ""
	if landed {
		previous = prev.id
	}
	if from == nil {
		p.met.Move(whyLimbo, "moved")
	}
	p.players.connected(pl.origin, srv, to.Address, previous)
}

// fallback replaces a backend that kicked the player, closed or stalled: a
// handler's redirect first, then another address of the same server, then the
// server's fallback_servers in order, each balanced like a login and admitted by
// its own rules (admitTo). Within one incident each server is tried at most
// once, and a player who bounced fallback_max_bounces times within bounceWindow
// is disconnected with the last reason. A kick matching fallback_skip_kicks ends
// the session.
func (p *moves) fallback(pl *onlinePlayer, lost *session.Backend, gone session.Gone) error {
	st := p.state.Load()
	srv := st.servers[lost.Server]
	if srv == nil {
		return errors.New("the server is no longer configured")
	}
	if errors.Is(gone.Err, os.ErrDeadlineExceeded) || strings.HasPrefix(errString(gone.Err), "nothing received") {
		lost.Failed("stalled: " + gone.Err.Error())
	}
	if gone.Kick != "" && matchesAny(gone.Kick, lowerAll(srv.cfg.FallbackSkipKicks)) {
		return errors.New("kick ends the session")
	}
	pl.move.mu.Lock()
	defer pl.move.mu.Unlock()
	if cur := pl.sess.Current(); cur != nil && cur != lost {
		return nil // a move that held the lock meanwhile took the player elsewhere
	}
	if !pl.move.bounce(p.now(), st.cfg.FallbackMaxBounces) {
		p.met.FallbackExhausted(srv.id)
		p.log.Info("fallback budget spent: player disconnected", "player", pl.origin.player, "server", srv.id,
			"bounces", st.cfg.FallbackMaxBounces, "within", bounceWindow, "why", gone.Reason())
		return fmt.Errorf("bounced %d times within %s", st.cfg.FallbackMaxBounces, bounceWindow)
	}
	cause := hooks.CauseUnreachable
	if gone.Kick != "" {
		cause = hooks.CauseKicked
	}
	// A handler may send the player somewhere, or end the session with its words.
	res := hooks.Fire(p.opts.Hooks, pl.origin.ev.ctx, &hooks.KickedFromServer{
		Connection: pl.origin.ev.conn, Profile: pl.origin.hookProfile(), Server: srv.id, Cause: cause, Reason: gone.Reason(),
	})
	if res.Denied() {
		if res.Reason != "" {
			pl.sess.Kick(res.Reason)
			return nil
		}
		return errors.New("an event handler ended the session")
	}
	if res.Action == hooks.Limbo && limboCovers(pl.protocol) {
		// A handler holds the player in the limbo until his server takes him again.
		p.log.Info("player held in the limbo by an event handler", "player", pl.origin.player, "server", srv.id, "why", gone.Reason())
		p.holdUntilBack(pl, st, srv)
		return nil
	}
	targets := st.fallbacks(srv)
	if res.Redirected() {
		if t := st.servers[res.Server]; t != nil && t.cfg.ProxyMode.Intercepted() {
			targets = append([]*server{t}, targets...)
		}
	}
	var lastErr error = errors.New("no fallback server")
	for _, t := range targets {
		if !pl.move.try(t.id) {
			continue // tried in this incident already
		}
		var avoid []string
		if t == srv {
			avoid = []string{lost.Address}
		}
		if _, err := p.moveLocked(Move{who: pl, to: t, why: whyFallback, detail: gone.Reason(), avoid: avoid}); err != nil {
			lastErr = err
			continue
		}
		pl.tellMoved(t.id, gone.Reason())
		return nil
	}
	if gone.Kick == "" && (srv.cfg.HasLimbo(config.LimboWake) || srv.cfg.HasLimbo(config.LimboQueue)) && limboCovers(pl.protocol) {
		// The server went away (it did not kick the player) and nothing else takes
		// them: the player waits in the limbo and comes back when it is up again.
		p.log.Info("player held in the limbo until their server is back", "player", pl.origin.player, "server", srv.id, "why", gone.Reason())
		p.holdUntilBack(pl, st, srv)
		return nil
	}
	p.log.Info("no fallback for a player", "player", pl.origin.player, "server", srv.id, "why", gone.Reason(), "err", lastErr)
	return lastErr
}

// holdUntilBack moves a player whose server went away into the limbo, to wait
// there until srv takes him again (downStay).
func (p *moves) holdUntilBack(pl *onlinePlayer, st *state, srv *server) {
	pl.setReason(whyFallback)
	pl.sess.ToLimbo(*p.limbos.downStay(pl.dialConn(st), srv))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func lowerAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}

// SendPlayer moves a player to server, balanced like a login and admitted by
// the server's requirements and rules; force overrides its maintenance and
// capacity (never its ip_filter, bans or what it requires the player to have
// proven). The player stays where he was when the move fails, is told why in
// chat, and the error says why.
func (p *Proxy) SendPlayer(ctx context.Context, name, serverID string, force bool) (PlayerInfo, error) {
	return p.moves.send(name, serverID, whyAdmin, pass{force: force})
}

// SendFromFleet is SendPlayer for another proxy of the fleet, by the same
// route and rules (never forced).
func (p *Proxy) SendFromFleet(name, serverID string) (PlayerInfo, error) {
	return p.moves.send(name, serverID, whyFleet, pass{})
}

// send is SendPlayer with the reason the events and the moves metric give:
// connect, and the player told why when it failed.
func (p *moves) send(name, serverID, why string, ps pass) (PlayerInfo, error) {
	pl, err := p.players.player(name)
	if err != nil {
		return PlayerInfo{}, err
	}
	res, err := p.connect(pl, serverID, why, ps)
	switch {
	case errors.Is(err, ErrNotSwitchable), errors.Is(err, ErrUnknownServer), errors.Is(err, ErrOtherNetwork):
		return PlayerInfo{}, err // asked wrong: nothing was tried
	case err != nil:
		p.players.tell(pl, fill(p.msgs().MoveFailed, "server", res.Server, "reason", res.Reason))
	}
	return pl.info(), err
}

// tellMoved tells the player where a fallback took him and why; a 1.20.2+
// client reads it once back in play (the session holds it until then).
func (pl *onlinePlayer) tellMoved(server, why string) {
	if pl.sess != nil {
		_ = pl.sess.Tell("§eYou were moved to " + server + ": " + why)
	}
}

// Player is the handle of the connected player called name (the exact-case
// match, else the only one in any case), for the admin API, the CLI and the
// fleet: his moves count as "admin". ErrUnknownPlayer when he is not here.
func (p *Proxy) Player(name string) (player.Player, error) {
	pl, err := p.players.player(name)
	if err != nil {
		return nil, err
	}
	return p.players.handleOf(pl, whyAdmin), nil
}

// MoveResult says how many players a move took off an address, and how many
// stayed because nothing else took them.
type MoveResult struct{ Moved, Stayed int }

// MovePlayers moves every player off one address of server, for a drain with
// move: to the server's other addresses, else its fallback servers.
func (p *Proxy) MovePlayers(ctx context.Context, serverID, address string) (MoveResult, error) {
	st := p.state.Load()
	srv := st.servers[serverID]
	if srv == nil {
		return MoveResult{}, fmt.Errorf("%w %q", ErrUnknownServer, serverID)
	}
	var res MoveResult
	for _, pl := range p.roster.all() {
		cur, addr := pl.where()
		if cur != srv || addr != address {
			continue
		}
		if pl.sess == nil {
			return res, fmt.Errorf("%w: %s is on %s", ErrNotSwitchable, pl.name, srv.id)
		}
		if p.moves.moveOff(ctx, pl, st, srv, address) {
			res.Moved++
		} else {
			res.Stayed++
		}
	}
	return res, ctx.Err()
}

// moveOff moves one player off address of srv for a drain: to srv's other
// addresses, else its fallback servers, each admitted by its own rules.
func (p *moves) moveOff(ctx context.Context, pl *onlinePlayer, st *state, srv *server, address string) bool {
	pl.move.mu.Lock()
	defer pl.move.mu.Unlock()
	if cur, addr := pl.where(); cur != srv || addr != address {
		return true // moved meanwhile
	}
	for _, t := range st.fallbacks(srv) {
		if ctx.Err() != nil {
			return false
		}
		if _, err := p.moveLocked(Move{who: pl, to: t, why: whyDrain, avoid: []string{address}}); err == nil {
			return true
		}
	}
	return false
}

// fallbacks are where a player who leaves srv may go, in order: srv itself
// (another of its addresses), then its fallback_servers configured now.
func (st *state) fallbacks(srv *server) []*server {
	targets := []*server{srv}
	for _, id := range srv.cfg.FallbackServers {
		if t := st.servers[id]; t != nil && t != srv {
			targets = append(targets, t)
		}
	}
	return targets
}
