package proxy

import (
	"context"
	"time"

	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/telemetry"
)

// loginEvents is what a login carries for the player events and its trace.
type loginEvents struct {
	conn    hooks.Connection
	ctx     context.Context // carries the session's trace
	trace   *telemetry.Session
	start   time.Time
	fired   bool   // PreLogin fired: Disconnect must fire when the connection ends
	outcome string // how it ended, for Disconnect and the trace
}

// family says which servers a handler may send a player to: the handler's own
// kind (a passthrough login cannot be redirected to an intercepted server, or the
// other way round).
type family func(*server) bool

func passthroughFamily(s *server) bool { return !s.cfg.ProxyMode.Intercepted() }
func interceptedFamily(s *server) bool { return s.cfg.ProxyMode.Intercepted() }

func (cn *conn) hookProfile() hooks.Profile {
	if cn.profile.Name != "" {
		return hooks.ProfileFromAuth(cn.profile)
	}
	return hooks.Profile{Name: cn.player, UUID: cn.uuid}
}

// preLogin starts the login's trace and fires PreLogin; false means a handler
// refused the player, who has been told.
func (p *players) preLogin(cn *conn) bool {
	ev := &cn.ev
	ev.start = p.now()
	ev.outcome = hooks.OutcomeFailed
	ev.ctx, ev.trace = p.opts.Tracer.StartSession(p.ctx, telemetry.SessionInfo{
		Server: cn.srv.id, Username: cn.player, ProxyMode: string(cn.srv.cfg.ProxyMode),
		ClientIP: cn.ip, Host: cn.host, Protocol: cn.protocol,
	})
	ev.conn = hooks.Connection{
		ID: p.opts.Hooks.NextConnection(), ClientIP: cn.ip, Host: cn.host, Protocol: cn.protocol,
		ProxyMode: string(cn.srv.cfg.ProxyMode), Legacy: cn.legacy == legacyLogin,
	}
	ev.fired = true
	res := hooks.Fire(p.opts.Hooks, ev.ctx, &hooks.PreLogin{Connection: ev.conn, Server: cn.srv.id, Username: cn.player, UUID: cn.uuid})
	if res.Denied() {
		ev.outcome = hooks.OutcomeDenied
		p.door.refused(cn, refuse("hook", "PreLogin denied by "+res.By, orText(res.Reason, cn.srv.cfg.DisconnectMessage)))
		return false
	}
	return true
}

// endEvents fires Disconnect once for a login that fired PreLogin, and ends its trace.
func (p *players) endEvents(cn *conn) {
	ev := &cn.ev
	if !ev.fired {
		return
	}
	ev.fired = false
	// An event is built only when a handler takes it: its fields (the
	// profile's UUID as text) cost allocations on every login otherwise.
	if p.opts.Hooks.Wants(hooks.KindDisconnect) {
		d := hooks.Disconnect{Connection: ev.conn, Profile: cn.hookProfile(), Outcome: ev.outcome, Duration: p.now().Sub(ev.start)}
		if cn.srv != nil && ev.outcome == hooks.OutcomePlayed {
			// The server the player was on last, not the one he logged in to.
			d.Server, d.Address = cn.srv.id, cn.lease.Address()
			if cn.pl != nil {
				if srv, addr := cn.pl.where(); srv != nil {
					d.Server, d.Address = srv.id, addr
				}
			}
		}
		hooks.Fire(p.opts.Hooks, ev.ctx, &d)
	}
	ev.trace.End(ev.outcome, nil)
}

func orText(s, fallback string) string {
	if s != "" {
		return s
	}
	return fallback
}

// acceptLogin fires Login (a handler may refuse the player), PostLogin and
// ChooseInitialServer (a handler may pick another server of the same family). It
// returns the server to connect, or the text the refused player reads.
func (p *players) acceptLogin(cn *conn, fam family) (*server, string, bool) {
	ev := &cn.ev
	if d := p.opts.Hooks; !d.Wants(hooks.KindLogin) && !d.Wants(hooks.KindPostLogin) && !d.Wants(hooks.KindChooseInitialServer) {
		return cn.srv, "", true
	}
	prof := cn.hookProfile()
	if res := hooks.Fire(p.opts.Hooks, ev.ctx, &hooks.Login{Connection: ev.conn, Server: cn.srv.id, Profile: prof}); res.Denied() {
		ev.outcome = hooks.OutcomeDenied
		return nil, orText(res.Reason, cn.srv.cfg.DisconnectMessage), false
	}
	hooks.Fire(p.opts.Hooks, ev.ctx, &hooks.PostLogin{Connection: ev.conn, Server: cn.srv.id, Profile: prof})
	target := cn.srv
	if res := hooks.Fire(p.opts.Hooks, ev.ctx, &hooks.ChooseInitialServer{Connection: ev.conn, Profile: prof, Server: cn.srv.id}); res.Redirected() {
		t, ok := p.redirectTarget(cn, res, fam)
		if !ok {
			return nil, cn.srv.cfg.DisconnectMessage, false
		}
		target = t
	}
	return target, "", true
}

// redirectTarget resolves a handler's redirect: a configured server of the
// family, or (logged) nothing.
func (p *players) redirectTarget(cn *conn, res hooks.Result, fam family) (*server, bool) {
	t := p.state.Load().servers[res.Server]
	if t == nil || !fam(t) {
		p.log.Warn("an event handler redirected a player to a server that cannot take them", "by", res.By, "server", res.Server, "player", cn.player)
		return nil, false
	}
	return t, true
}

// preConnect fires ServerPreConnect before a connection to target (previous is
// the server the player is on, "" at login); it returns where to connect, or the
// text of a refusal.
func (p *players) preConnect(cn *conn, target *server, previous string, fam family) (*server, string, bool) {
	ev := &cn.ev
	if !p.opts.Hooks.Wants(hooks.KindServerPreConnect) {
		return target, "", true
	}
	res := hooks.Fire(p.opts.Hooks, ev.ctx, &hooks.ServerPreConnect{Connection: ev.conn, Profile: cn.hookProfile(), Server: target.id, Previous: previous})
	switch {
	case res.Denied():
		ev.outcome = hooks.OutcomeDenied
		return nil, orText(res.Reason, target.cfg.DisconnectMessage), false
	case res.Redirected():
		t, ok := p.redirectTarget(cn, res, fam)
		if !ok {
			return nil, target.cfg.DisconnectMessage, false
		}
		return t, "", true
	}
	return target, "", true
}

// kicked is what the KickedFromServer handlers decided for a logging-in
// player: a server to try instead, a hold in the limbo, or the text he reads
// (denied: a handler's own words, which end the login).
type kicked struct {
	next   *server
	limbo  bool
	denied bool
	text   string
}

// kickedFrom fires KickedFromServer for a server a logging-in player could not
// get onto: a handler may redirect them (another round), hold them in the
// limbo, or end the login with its words; otherwise the player reads text.
// (A player kicked once in play goes through fallback in switch.go.)
func (p *players) kickedFrom(cn *conn, srv *server, cause, text string, fam family) kicked {
	ev := &cn.ev
	k := hooks.KickedFromServer{Connection: ev.conn, Profile: cn.hookProfile(), Server: srv.id, Cause: cause, Reason: text, DuringLogin: true}
	res := hooks.Fire(p.opts.Hooks, ev.ctx, &k)
	switch {
	case res.Redirected():
		if t, ok := p.redirectTarget(cn, res, fam); ok {
			return kicked{next: t, text: text}
		}
	case res.Action == hooks.Limbo:
		return kicked{limbo: true, text: text}
	case res.Denied() && res.Reason != "":
		return kicked{denied: true, text: res.Reason}
	}
	return kicked{text: text}
}

// connected fires ServerConnected and notes the backend in the trace.
func (p *players) connected(cn *conn, srv *server, address, previous string) {
	ev := &cn.ev
	if previous == "" { // a move's connection runs beside the session: leave the login's fields be
		ev.outcome = hooks.OutcomePlayed
		ev.trace.SetServer(srv.id)
		ev.trace.SetBackend(address)
	}
	if p.opts.Hooks.Wants(hooks.KindServerConnected) {
		hooks.Fire(p.opts.Hooks, ev.ctx, &hooks.ServerConnected{Connection: ev.conn, Profile: cn.hookProfile(), Server: srv.id, Address: address, Previous: previous})
	}
}

// maxRedirects bounds how often handlers may send a login elsewhere, so two
// handlers that redirect to each other cannot hold a player forever.
const maxRedirects = 3
