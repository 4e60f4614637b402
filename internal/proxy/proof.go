package proxy

import "github.com/infrarust-go/infrarust/internal/accounts"

// proof is what a player has proven about who he is. It travels with him:
// every way into a server asks it what that server requires (requirements in
// route.go), and a second login of the same player is weighed against it
// (identity.go). docs/security.md lists what each server kind requires.
type proof struct {
	// mojang: Mojang's session server vouched for the profile (a client_only
	// login, or a premium name proven on an "auth" server).
	mojang bool
	// account is the password account (accounts.Key) the player proved in this
	// session: its password typed in the auth limbo, or a login remembered
	// from his address. "" when none.
	account string
	// verified: the player passed the bot check in this session.
	verified bool
}

// Proof strengths, weakest first: what a second login must match to replace
// the session of the same player.
const (
	provenNothing  = 0 // a bare offline name, which anyone can type
	provenPassword = 1 // the password of the name's account
	provenMojang   = 2 // Mojang's word for the profile
)

// strength orders proofs of one identity.
func (pr proof) strength() int {
	switch {
	case pr.mojang:
		return provenMojang
	case pr.account != "":
		return provenPassword
	}
	return provenNothing
}

// owns reports that the player proved the name is his: by Mojang, or by the
// password of the account of that name.
func (pr proof) owns(name string) bool {
	return pr.mojang || (pr.account != "" && pr.account == accounts.Key(name))
}

// strengthName is a strength as the logs say it.
func strengthName(s int) string {
	switch s {
	case provenMojang:
		return "mojang"
	case provenPassword:
		return "password"
	}
	return "none"
}

// proven is what the player has proven so far.
func (pl *onlinePlayer) proven() proof {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.proof
}

// proven is what the player of this login has proven: his record's once the
// login made one, the login's own before.
func (cn *conn) proven() proof {
	if cn.pl != nil {
		return cn.pl.proven()
	}
	return cn.proof
}

// prove adds to what the player of cn has proven (change edits it), and
// raises his identity's claim to the new strength (identity.go). An error
// means the claim could not be made: a stronger session of the same player
// is online.
func (p *checks) prove(cn *conn, change func(*proof)) error {
	pl := cn.pl
	if pl == nil {
		change(&cn.proof)
		return nil
	}
	pl.mu.Lock()
	change(&pl.proof)
	pr := pl.proof
	pl.mu.Unlock()
	return p.players.strengthen(pl, pr.strength())
}
