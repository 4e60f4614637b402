package proxy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// Kick texts of a duplicate login: vanilla's for the session a newer login
// replaces, Velocity's for a login refused because the player is online.
const (
	kickReplaced        = "You logged in from another location"
	kickAlreadyOnline   = "You are already connected to this proxy!"
	replacedWait        = 5 * time.Second // how long a login waits for the session it replaces to end
	errAmbiguousMessage = "several players match %q in any case (%s); give the exact name"
)

// ErrAmbiguousPlayer: no player has exactly that name and several have it in
// another case; the message lists them.
var ErrAmbiguousPlayer = errors.New("ambiguous player name")

// claim is one player's identity, held by a login from its check until the
// connection ends: a second login with the same identity replaces or is refused
// (duplicate_login), so a player is online once.
type claim struct {
	key string
	at  time.Time // when the login claimed it, to settle a duplicate on another proxy
	// strength is what the holder has proven (proof strengths); it only rises,
	// as the holder proves more (a /login in the auth limbo).
	strength atomic.Int32
	// fleet: the claim is held in the fleet's Redis too (duplicate_login
	// "refuse"), and released there when the connection ends.
	fleet bool

	mu       sync.Mutex
	end      func(text string) // ends the holder's session; nil until it has one
	replaced bool              // the holder is to end (a newer login, or the fleet's rule)
	text     string            // what it is told then
	gone     bool              // the holder's connection ended
	done     chan struct{}     // closed once gone; made by the first to wait (ended)
}

// ended is closed once the holder's connection has ended. Only a login that
// replaces the holder waits for it, so the channel is made then, not at every
// claim.
func (c *claim) ended() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.gone {
			close(c.done)
		}
	}
	return c.done
}

// identityKey is what makes two logins the same player: the UUID the proxy
// settled (Mojang's after authentication, or the offline one, which comes from
// the exact name). Only intercepted logins claim one: on a passthrough server the
// proxy knows only the name the client claims, which anyone can type, so a claim
// there would let a stranger end a real player's session; those backends judge
// their own duplicates, as vanilla does.
func identityKey(cn *conn) string {
	var b strings.Builder // one allocation: a login makes one of these
	b.Grow(len("uuid:") + 32)
	b.WriteString("uuid:")
	for i := 0; i < len(cn.uuid); i++ {
		switch c := cn.uuid[i]; {
		case c == '-':
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// claimIdentity takes cn's identity for its login, with the strength of what
// the login has proven. A second login of an online player may replace his
// session only when it proved at least as much (mayReplace): otherwise it is
// refused. Under "replace" the older session is ended and the login waits (at
// most replacedWait) until it is gone. The claim is released when the
// connection ends (finish). A login that owes a /login claims once it has
// logged in (strengthen), so it is weighed with what it proved.
func (p *players) claimIdentity(cn *conn) error {
	key := identityKey(cn)
	strength := cn.proven().strength()
	c := &claim{key: key, at: p.now()}
	c.strength.Store(int32(strength))
	ps := &p.roster
	ps.mu.Lock()
	old := ps.claims[key]
	if old != nil {
		if held := int(old.strength.Load()); !mayReplace(strength, held, cn.st.cfg.DuplicateLogin) {
			ps.mu.Unlock()
			p.log.Info("a second login of an online player refused", "player", cn.player, "client", cn.client,
				"proof", strengthName(strength), "online_with", strengthName(held))
			return refuse("duplicate", "already online: "+key, kickAlreadyOnline)
		}
	}
	if ps.claims == nil {
		ps.claims = map[string]*claim{}
	}
	ps.claims[key] = c
	cn.claim = c
	ps.mu.Unlock()
	if f := p.opts.Sessions; f != nil {
		if cn.st.cfg.DuplicateLogin == config.DuplicateRefuse {
			// "refuse" must hold across the fleet: the claim is made in Redis
			// before the player is let in, and a holder elsewhere refuses him.
			holder, err := f.Claim(p.ctx, key, c.at, strength)
			switch {
			case err != nil:
				p.log.Warn("the fleet could not be asked whether the player is online elsewhere; this proxy's own rule decides", "player", cn.player, "err", err)
			case holder != "":
				p.releaseClaim(cn)
				if old != nil { // this login never replaced it: the older claim stands
					ps.mu.Lock()
					if ps.claims[key] == nil {
						ps.claims[key] = old
					}
					ps.mu.Unlock()
				}
				p.log.Info("a login refused: the player is online through another proxy of the fleet", "player", cn.player, "client", cn.client, "proxy", holder)
				return refuse("duplicate", "already online through "+holder+": "+key, kickAlreadyOnline)
			default:
				c.fleet = true
			}
		}
		f.Claimed(key, c.at, strength) // the other proxies of the fleet settle theirs (never waits)
	}
	if old != nil {
		p.log.Info("a second login replaces a player's session", "player", cn.player, "client", cn.client, "identity", key,
			"proof", strengthName(strength), "replaced", strengthName(int(old.strength.Load())))
		old.supersede()
		select {
		case <-old.ended():
		case <-time.After(replacedWait):
		}
	}
	return nil
}

// mayReplace is the rule for a second login of an online player (proof
// strengths): it never ends a session that proved more than it did, since a
// bare offline name is anyone's to type; it always ends one that proved less,
// which was never shown to be that player; between equals duplicate_login
// decides.
func mayReplace(newer, held int, policy config.DuplicateLogin) bool {
	switch {
	case newer < held:
		return false
	case newer > held:
		return true
	}
	return policy != config.DuplicateRefuse
}

// strengthen raises pl's claim to strength s once he proved more: the claim
// a login that owed a /login defers is made now, and a stronger claim is
// told to the fleet. An error: a session that proved as much or more holds
// the identity.
func (p *players) strengthen(pl *onlinePlayer, s int) error {
	origin := pl.origin
	p.roster.mu.Lock()
	c := origin.claim
	p.roster.mu.Unlock()
	if c == nil {
		if err := p.claimIdentity(origin); err != nil {
			return err
		}
		p.roster.mu.Lock()
		c = origin.claim
		p.roster.mu.Unlock()
		c.bind(pl.disconnect)
		return nil
	}
	if int(c.strength.Load()) >= s {
		return nil
	}
	c.strength.Store(int32(s))
	if f := p.opts.Sessions; f != nil {
		f.Claimed(c.key, p.now(), s)
	}
	return nil
}

// supersede ends the claim's holder with vanilla's words: now if it has a
// session, else when it gets one.
func (c *claim) supersede() { c.endWith(kickReplaced) }

func (c *claim) endWith(text string) {
	c.mu.Lock()
	c.replaced, c.text = true, text
	end := c.end
	c.mu.Unlock()
	if end != nil {
		end(text)
	}
}

// SessionClaimed settles a session another proxy of the fleet let in (identity
// key, at at, with proof strength, on proxy other) against this proxy's session
// of the same identity, by the local rule (mayReplace): the weaker session
// ends; between equals, the later login is the newer (ties: the greater proxy
// id) and under duplicate_login "replace" the older session ends, under
// "refuse" the newer. self is this proxy's fleet id.
func (p *Proxy) SessionClaimed(key string, at time.Time, strength int, other, self string) {
	p.roster.mu.Lock()
	c := p.roster.claims[key]
	p.roster.mu.Unlock()
	if c == nil {
		return
	}
	held := int(c.strength.Load())
	policy := p.state.Load().cfg.DuplicateLogin
	// The same rule as a second login here (mayReplace), from both sides: the
	// newer login replaces the older where it may; the older stands where the
	// newer may not replace it.
	switch theirsNewer := at.After(c.at) || (at.Equal(c.at) && other > self); {
	case theirsNewer && mayReplace(strength, held, policy):
		p.log.Info("a login on another proxy of the fleet replaces a player's session here", "identity", key, "proxy", other,
			"proof", strengthName(strength), "here", strengthName(held))
		c.endWith(kickReplaced)
	case !theirsNewer && !mayReplace(held, strength, policy):
		p.log.Info("the player is already online through another proxy of the fleet: this newer session ends", "identity", key, "proxy", other,
			"proof", strengthName(held), "there", strengthName(strength))
		c.endWith(kickAlreadyOnline)
	}
}

// bind gives the claim the way to end its holder's session. When the holder
// was to end meanwhile, it is ended now with the words it was to be told.
func (c *claim) bind(end func(text string)) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.end = end
	replaced, text := c.replaced, c.text
	c.mu.Unlock()
	if replaced {
		end(text)
	}
}

// releaseClaim gives the identity back when the connection that claimed it ends.
func (p *players) releaseClaim(cn *conn) {
	p.roster.mu.Lock()
	c := cn.claim
	if c == nil {
		p.roster.mu.Unlock()
		return
	}
	cn.claim = nil
	if p.roster.claims[c.key] == c {
		delete(p.roster.claims, c.key)
	}
	p.roster.mu.Unlock()
	if f := p.opts.Sessions; f != nil && c.fleet {
		f.Released(c.key)
	}
	c.mu.Lock()
	c.gone = true
	if c.done != nil {
		close(c.done)
	}
	c.mu.Unlock()
}

// player is the online player called name (exact case first): ErrUnknownPlayer
// when nobody is, ErrAmbiguousPlayer when several differ only by case.
func (p *players) player(name string) (*onlinePlayer, error) {
	if pl := p.roster.find(name); pl != nil {
		return pl, nil
	}
	if ms := p.roster.matches(name); len(ms) > 1 {
		names := make([]string, len(ms))
		for i, m := range ms {
			names[i] = m.name
		}
		slices.Sort(names)
		return nil, fmt.Errorf("%w: "+errAmbiguousMessage, ErrAmbiguousPlayer, name, strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownPlayer, name)
}
