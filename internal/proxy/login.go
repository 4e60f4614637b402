package proxy

import (
	"errors"

	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/session"
)

// loginMode is what differs between the proxy modes' logins in the one login
// loop (loginRounds): how one server is tried, and how a failed login ends.
type loginMode struct {
	// fam is which servers a handler or the try list may send the login to.
	fam family
	// try puts the player on t: nil once a backend (or a limbo stay) has him.
	// Its refusals are the route's: *handlerRefusal, *refusal, *gateError are
	// final; any other error is a server that could not take him.
	try func(t *server) error
	// end counts the failed login, logs it and tells the player text.
	end func(o metrics.LoginOutcome, reason, detail, text string)
	// holds: the proxy speaks to the player (intercepted), so a handler may
	// hold him in the limbo, and the routed server's fallback_servers are
	// tried in turn (Velocity's "try"); a passthrough stream can do neither.
	holds bool
}

// loginRounds is the one login loop of every proxy mode: it tries target, and
// when that server cannot take the player, the KickedFromServer handlers may
// send him elsewhere (at most maxRedirects times) or hold him in the limbo;
// otherwise the next server of the routed server's fallback_servers of the
// same family is tried, each once. A refusal by a handler or a rule ends the
// login. It returns the limbo stay a handler asked for (nil: mode.try placed
// him), or false once mode.end has told the player why.
func (p *moves) loginRounds(cn *conn, target *server, mode loginMode) (*session.Stay, bool) {
	routed := cn.srv
	// What a failure needs is made at the first one: a login that lands
	// allocates nothing for them.
	var tries, failed []*server // the routed server's fallbacks left; the servers that did not take him
	triesTaken, redirects := false, 0
	for {
		err := mode.try(target)
		if err == nil {
			return nil, true
		}
		var (
			h *handlerRefusal
			r *refusal
			g *gateError
		)
		switch {
		case errors.As(err, &h):
			mode.end(metrics.LoginFailed, "hook", "ServerPreConnect denied", h.text)
			return nil, false
		case errors.As(err, &r):
			mode.end(refusalOutcome(r), r.rule, "refused by "+r.server, r.text)
			return nil, false
		case errors.As(err, &g):
			mode.end(metrics.LoginFailed, "gate", "limbo gate: "+err.Error(), g.Error())
			return nil, false
		}
		failed = append(failed, cn.srv)
		outcome, cause := loginFailure(err)
		text := playerText(cn.srv, err)
		res := p.players.kickedFrom(cn, cn.srv, cause, text, mode.fam)
		if res.limbo && mode.holds && limboCovers(cn.protocol) {
			// A handler holds the player in the limbo: he waits there and the
			// server is tried again until it takes him.
			p.log.Info("player held in the limbo by an event handler", "player", cn.player, "server", cn.srv.id)
			return p.limbos.downStay(cn, cn.srv), true
		}
		next := res.next
		if next != nil {
			if redirects++; redirects > maxRedirects {
				next = nil
			}
		} else if !res.denied && mode.holds {
			if !triesTaken {
				tries, triesTaken = cn.st.fallbacks(routed)[1:], true
			}
			next = tryNext(routed, mode.fam, &tries, failed, err)
		}
		if next == nil {
			mode.end(outcome, "backend", err.Error(), res.text)
			return nil, false
		}
		p.log.Info("login goes on to the next server", "player", cn.player, "from", cn.srv.id, "to", next.id, "why", err)
		target = next
	}
}
