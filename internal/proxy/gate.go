package proxy

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/infrarust-go/infrarust/internal/events"
)

// The rules of a server a player may be refused by, as the metric's and the
// event's rule label says them.
const (
	ruleIPFilter    = "ip_filter"
	ruleBan         = "ban"
	ruleMaintenance = "maintenance"
	ruleCapacity    = "capacity"
)

// entrant is who asks to enter a server: what a server's rules look at.
type entrant struct {
	ip         netip.Addr
	name, uuid string
}

func (cn *conn) entrant() entrant { return entrant{ip: cn.ip, name: cn.player, uuid: cn.uuid} }

func (pl *onlinePlayer) entrant() entrant {
	return entrant{ip: pl.origin.ip, name: pl.origin.player, uuid: pl.origin.uuid}
}

// pass says which of a server's soft rules an entry may skip. The hard rules
// (ip_filter, bans) hold for every entry.
type pass struct {
	// force: an operator's explicit send overrides maintenance and capacity.
	force bool
	// queued: the player waited in the server's own queue, which is its capacity rule.
	queued bool
}

// refusal is a server's "no" to an entrant: the rule and the text the player reads.
type refusal struct {
	server, rule, text string
}

// Error is the text the player reads (a limbo exit kicks with it); the rule is
// in the logs, the metric and the event.
func (r *refusal) Error() string { return r.text }

// Unwrap makes every refusal an ErrRefused for callers outside the package.
func (r *refusal) Unwrap() error { return ErrRefused }

// ErrRefused: the target server's own rules (ip_filter, bans, maintenance,
// capacity) refused the player; RefusedBy says which.
var ErrRefused = errors.New("the target server's rules refused the player")

// RefusedBy names the server and the rule behind an ErrRefused.
func RefusedBy(err error) (server, rule string, ok bool) {
	var r *refusal
	if !errors.As(err, &r) {
		return "", "", false
	}
	return r.server, r.rule, true
}

// hard reports a rule no handler, limbo or force lifts.
func (r *refusal) hard() bool { return r.rule == ruleIPFilter || r.rule == ruleBan }

// admitTo is the one decision "may this player enter server t now", made for a
// login (every target of its redirects) and for every move (fallback, redirect,
// send, the BungeeCord Connect, drain, limbo exits) alike. The rules are checked
// hard ones first, so a soft refusal (maintenance, capacity) means the hard ones
// passed and the caller may hold the player in the limbo instead.
func (p *moves) admitTo(e entrant, t *server, ps pass) *refusal {
	if !t.filter.Allowed(e.ip) {
		return &refusal{t.id, ruleIPFilter, "You are not allowed to join " + t.id}
	}
	if b := p.opts.Bans; b != nil {
		now := p.now()
		if ban, banned := b.CheckPlayer(e.ip, e.name, e.uuid, now); banned {
			return &refusal{t.id, ruleBan, ban.KickMessage(now)}
		}
	}
	if ps.force {
		return nil
	}
	if p.limbos.inMaintenance(t, e) {
		return &refusal{t.id, ruleMaintenance, t.id + " is under maintenance, please come back later"}
	}
	if !ps.queued {
		if n := p.limbos.queueLen(t.id); n > 0 {
			return &refusal{t.id, ruleCapacity, fmt.Sprintf("%s is full (%d players are waiting for a slot)", t.id, n)}
		}
	}
	return nil
}

// moveRefused records a move a server's rules refused: one log line, the metric
// and the player.move_refused event.
func (p *moves) moveRefused(e entrant, from string, r *refusal, reason string) {
	p.met.MoveRefused(r.server, r.rule)
	p.bus.Publish(events.PlayerMoveRefused, events.MoveRefused{
		Username: e.name, UUID: e.uuid, FromServer: from, ToServer: r.server,
		Rule: r.rule, Message: r.text, Reason: reason,
	})
	p.log.Info("move refused", "player", e.name, "from", from, "to", r.server, "rule", r.rule, "reason", reason)
}
