package proxy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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

// claimIdentity takes cn's identity for its login. Under "refuse" a login whose
// player is online (or logging in) is refused; under "replace" the older
// session is ended and the login waits (at most replacedWait) until it is gone.
// The claim is released when the connection ends (finish).
func (p *Proxy) claimIdentity(cn *conn) error {
	key := identityKey(cn)
	c := &claim{key: key, at: p.now()}
	ps := &p.roster
	ps.mu.Lock()
	old := ps.claims[key]
	// A login that has not proven the name yet (it owes a /login) never ends
	// the session of the one who has: it is refused instead, whatever the policy.
	if old != nil && (cn.st.cfg.DuplicateLogin == config.DuplicateRefuse || cn.proof == nameOwed) {
		ps.mu.Unlock()
		return refuse("duplicate", "already online: "+key, kickAlreadyOnline)
	}
	if ps.claims == nil {
		ps.claims = map[string]*claim{}
	}
	ps.claims[key] = c
	ps.mu.Unlock()
	cn.claim = c
	if f := p.opts.Sessions; f != nil && cn.proof != nameOwed {
		f.Claimed(key, c.at) // the other proxies of the fleet settle theirs (never waits)
	}
	if old != nil {
		p.log.Info("a second login replaces a player's session", "player", cn.player, "client", cn.client, "identity", key)
		old.supersede()
		select {
		case <-old.ended():
		case <-time.After(replacedWait):
		}
	}
	return nil
}

// proven marks cn's name as proven (its /login or /register passed): from
// now on its claim counts across the fleet as any other login's does.
func (p *Proxy) proven(cn *conn) {
	if cn.proof != nameOwed {
		return
	}
	cn.proof = nameLoggedIn
	if f := p.opts.Sessions; f != nil && cn.claim != nil {
		f.Claimed(cn.claim.key, p.now())
	}
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
// key, at at, on proxy other) against this proxy's session of the same
// identity: the later login is the newer (ties: the greater proxy id); under
// duplicate_login "replace" the older session ends, under "refuse" the newer.
// self is this proxy's fleet id.
func (p *Proxy) SessionClaimed(key string, at time.Time, other, self string) {
	p.roster.mu.Lock()
	c := p.roster.claims[key]
	p.roster.mu.Unlock()
	if c == nil {
		return
	}
	theirsNewer := at.After(c.at) || (at.Equal(c.at) && other > self)
	switch refuse := p.state.Load().cfg.DuplicateLogin == config.DuplicateRefuse; {
	case !refuse && theirsNewer:
		p.log.Info("a login on another proxy of the fleet replaces a player's session here", "identity", key, "proxy", other)
		c.endWith(kickReplaced)
	case refuse && !theirsNewer:
		p.log.Info("the player is already online through another proxy of the fleet: this newer session ends", "identity", key, "proxy", other)
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
func (p *Proxy) releaseClaim(cn *conn) {
	c := cn.claim
	if c == nil {
		return
	}
	cn.claim = nil
	p.roster.mu.Lock()
	if p.roster.claims[c.key] == c {
		delete(p.roster.claims, c.key)
	}
	p.roster.mu.Unlock()
	c.mu.Lock()
	c.gone = true
	if c.done != nil {
		close(c.done)
	}
	c.mu.Unlock()
}

// player is the online player called name (exact case first): ErrUnknownPlayer
// when nobody is, ErrAmbiguousPlayer when several differ only by case.
func (p *Proxy) player(name string) (*onlinePlayer, error) {
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
