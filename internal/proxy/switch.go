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
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
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
	}
}

// sessionPolicy is how the proxy decides for the intercepted sessions that
// start under st: moves are accounted and announced, and a lost backend is
// replaced when possible. Built once per configuration; each hook finds its
// player as the session's owner.
func (p *Proxy) sessionPolicy(st *state) *session.Policy {
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
		Filter:         p.sessionFilter(st),
		Limbo:          p.met.Limbo,
	}
}

// ownerOf is the player of an intercepted session.
func ownerOf(s *session.Session) *onlinePlayer { return s.Owner().(*onlinePlayer) }

// moved moves the player's accounting from one backend to the next.
func (p *Proxy) moved(pl *onlinePlayer, from, to *session.Backend, reason string) {
	st := p.state.Load()
	srv := st.servers[to.Server]
	if srv == nil {
		srv, _ = pl.where() // removed by a reload meanwhile: count them where they were
	}
	p.depart(pl)
	p.arrive(pl, srv, to.Address)
	sw := events.Switch{Username: pl.origin.player, UUID: pl.origin.uuid, ToServer: to.Server, ToAddress: to.Address, Reason: reason}
	if from != nil {
		sw.FromServer, sw.FromAddress = from.Server, from.Address
	}
	p.bus.Publish(events.PlayerSwitch, sw)
	p.log.Info("player moved", "player", sw.Username, "from", sw.FromServer+"/"+sw.FromAddress, "to", sw.ToServer+"/"+sw.ToAddress, "reason", reason)
}

// fallback replaces a backend that kicked the player, closed or stalled: a
// handler's redirect first, then another address of the same server, then the
// server's fallback_servers in order, each balanced like a login and admitted by
// its own rules (admitTo). Within one incident each server is tried at most
// once, and a player who bounced fallback_max_bounces times within bounceWindow
// is disconnected with the last reason. A kick matching fallback_skip_kicks ends
// the session.
func (p *Proxy) fallback(pl *onlinePlayer, lost *session.Backend, gone session.Gone) error {
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
	targets := st.fallbacks(srv)
	if res.Redirected() {
		if t := st.servers[res.Server]; t != nil && t.cfg.ProxyMode.Intercepted() {
			targets = append([]*server{t}, targets...)
		}
	}
	var lastErr error = errors.New("no fallback server")
	reason := "fallback: " + gone.Reason()
	for _, t := range targets {
		if !pl.move.try(t.id) {
			continue // tried in this incident already
		}
		var avoid []string
		if t == srv {
			avoid = []string{lost.Address}
		}
		if err := p.moveTo(pl, st, t, avoid, pass{}, reason); err != nil {
			lastErr = err
			continue
		}
		_ = pl.sess.Tell("§eYou were moved to " + t.id + ": " + gone.Reason())
		return nil
	}
	if gone.Kick == "" && (srv.cfg.HasLimbo(config.LimboWake) || srv.cfg.HasLimbo(config.LimboQueue)) && limboCovers(pl.protocol) {
		// The server went away (it did not kick the player) and nothing else takes
		// them: the player waits in the limbo and comes back when it is up again.
		p.log.Info("player held in the limbo until their server is back", "player", pl.origin.player, "server", srv.id, "why", gone.Reason())
		pl.sess.ToLimbo(*p.downStay(pl.origin, srv))
		return nil
	}
	p.log.Info("no fallback for a player", "player", pl.origin.player, "server", srv.id, "why", gone.Reason(), "err", lastErr)
	return lastErr
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

// moveTo logs the player in to one of t's addresses and switches them there,
// with the ServerPreConnect and ServerConnected events around it (a handler may
// refuse the move or send it elsewhere) and t's own rules (admitTo) deciding on
// the server it would land on. The caller holds the player's move lock.
func (p *Proxy) moveTo(pl *onlinePlayer, st *state, t *server, avoid []string, ps pass, reason string) (err error) {
	defer func() { p.met.Move(reason, moveOutcome(err)) }()
	cur, _ := pl.where()
	t, text, ok := p.preConnect(pl.origin, t, cur.id, interceptedFamily)
	if !ok {
		return fmt.Errorf("%w: %s", errHandlerRefused, text)
	}
	if !t.cfg.ProxyMode.Intercepted() {
		return ErrOtherNetwork
	}
	if r := p.admitTo(pl.entrant(), t, ps); r != nil {
		p.moveRefused(pl.entrant(), cur.id, r, reason)
		return r
	}
	cn := pl.dialConn(st)
	cn.ev = pl.origin.ev
	if m := p.opts.Manager; m != nil && m.Managed(t.id) {
		cn.srv = t
		if err := p.wake(cn); err != nil {
			return fmt.Errorf("%s could not be started: %w", t.id, err)
		}
	}
	lease := new(balance.Lease)
	next, outcome, err := p.joinBackend(cn, t, lease, avoid, false)
	if err != nil {
		return fmt.Errorf("%s: %w", t.id, err)
	}
	if outcome.Kick != "" {
		return fmt.Errorf("%s refused the player: %s", t.id, outcome.Kick)
	}
	endSpan := pl.origin.ev.trace.Switch(cur.id, t.id)
	pl.setReason(reason)
	err = pl.sess.Switch(next, ackWait)
	endSpan(err)
	if err == nil {
		p.connected(pl.origin, t, next.Address, cur.id)
	}
	return err
}

// errHandlerRefused: a ServerPreConnect handler refused the move.
var errHandlerRefused = errors.New("refused by an event handler")

// moveOutcome names how a move ended, for infrarust_moves_total: moved, refused
// (the target's rules or a handler said no) or failed.
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

// SendPlayer moves a player to server, balanced like a login and admitted by
// the server's rules; force overrides its maintenance and capacity (never its
// ip_filter or bans). The player stays where they were when the move fails, is
// told why in chat, and the error says why.
func (p *Proxy) SendPlayer(ctx context.Context, name, serverID string, force bool) (PlayerInfo, error) {
	return p.send(name, serverID, "admin", pass{force: force})
}

// send is SendPlayer with the reason the player.switch event gives.
func (p *Proxy) send(name, serverID, reason string, ps pass) (PlayerInfo, error) {
	pl, err := p.player(name)
	if err != nil {
		return PlayerInfo{}, err
	}
	if pl.sess == nil {
		return PlayerInfo{}, ErrNotSwitchable
	}
	st := p.state.Load()
	t := st.servers[serverID]
	if t == nil {
		return PlayerInfo{}, fmt.Errorf("%w %q", ErrUnknownServer, serverID)
	}
	cur, _ := pl.where()
	if !t.cfg.ProxyMode.Intercepted() || t.cfg.Network != cur.cfg.Network {
		return PlayerInfo{}, fmt.Errorf("%w (%s is in network %q, %s in %q)", ErrOtherNetwork, cur.id, cur.cfg.Network, t.id, t.cfg.Network)
	}
	pl.move.mu.Lock()
	err = p.moveTo(pl, st, t, nil, ps, reason)
	pl.move.mu.Unlock()
	if err != nil {
		where := t.id
		var r *refusal
		if errors.As(err, &r) {
			where = r.server // a handler's redirect may have named another
		}
		_ = pl.sess.Tell("§cYou could not be moved to " + where + ": " + err.Error())
	}
	return pl.info(), err
}

// KickPlayer disconnects a player: with reason in their client on intercepted
// servers; a passthrough player's connection is closed (the proxy cannot write
// into a stream it only forwards).
func (p *Proxy) KickPlayer(name, reason string) error {
	pl, err := p.player(name)
	if err != nil {
		return err
	}
	if reason == "" {
		reason = "Kicked by an operator"
	}
	p.log.Info("player kicked by an operator", "player", pl.origin.player, "reason", reason)
	pl.disconnect(reason)
	return nil
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
		if p.moveOff(ctx, pl, st, srv, address) {
			res.Moved++
		} else {
			res.Stayed++
		}
	}
	return res, ctx.Err()
}

// moveOff moves one player off address of srv for a drain: to srv's other
// addresses, else its fallback servers, each admitted by its own rules.
func (p *Proxy) moveOff(ctx context.Context, pl *onlinePlayer, st *state, srv *server, address string) bool {
	pl.move.mu.Lock()
	defer pl.move.mu.Unlock()
	if cur, addr := pl.where(); cur != srv || addr != address {
		return true // moved meanwhile
	}
	for _, t := range st.fallbacks(srv) {
		if ctx.Err() != nil {
			return false
		}
		if p.moveTo(pl, st, t, []string{address}, pass{}, "drain") == nil {
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
