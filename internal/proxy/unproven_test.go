package proxy

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

type claimed struct {
	keys      []string
	strengths []int
}

func (c *claimed) Claimed(key string, _ time.Time, strength int) {
	c.keys = append(c.keys, key)
	c.strengths = append(c.strengths, strength)
}

func (c *claimed) Claim(context.Context, string, time.Time, int) (string, error) { return "", nil }
func (c *claimed) Released(string)                                               {}

// A second login of an online player replaces his session only when it
// proved at least as much: a bare offline name never ends a session proven
// by a password or by Mojang, whatever duplicate_login says; a stronger
// login ends a weaker one even under "refuse"; between equals the policy
// decides. Every claim is told to the fleet with its strength.
func TestSecondLoginWeighedByProof(t *testing.T) {
	const id = "10920508-d5d8-3eed-93d2-92f193afe7d7"
	password := proof{account: "steve"}
	for _, c := range []struct {
		name         string
		policy       config.DuplicateLogin
		held, newer  proof
		wantReplaced bool
		wantRefused  bool
	}{
		{"bare name vs password, replace", config.DuplicateReplace, password, proof{}, false, true},
		{"bare name vs password, refuse", config.DuplicateRefuse, password, proof{}, false, true},
		{"bare name vs mojang", config.DuplicateReplace, proof{mojang: true}, proof{}, false, true},
		{"password vs mojang", config.DuplicateReplace, proof{mojang: true}, password, false, true},
		{"password vs bare name, refuse", config.DuplicateRefuse, proof{}, password, true, false},
		{"equals, replace", config.DuplicateReplace, password, password, true, false},
		{"equals, refuse", config.DuplicateRefuse, password, password, false, true},
		{"bare names, replace", config.DuplicateReplace, proof{}, proof{}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fleet := &claimed{}
			p := assemble(&core{log: slog.New(slog.DiscardHandler), now: time.Now, opts: Options{Sessions: fleet}})
			cfg := config.Default()
			cfg.DuplicateLogin = c.policy
			st := &state{cfg: cfg}
			held := &conn{st: st, player: "Steve", uuid: id, proof: c.held}
			if err := p.players.claimIdentity(held); err != nil {
				t.Fatal(err)
			}
			held.claim.bind(func(string) { p.players.releaseClaim(held) })
			newer := &conn{st: st, player: "Steve", uuid: id, proof: c.newer}
			err := p.players.claimIdentity(newer)
			if (err != nil) != c.wantRefused {
				t.Fatalf("second login refused = %v (%v), want %v", err != nil, err, c.wantRefused)
			}
			if held.claim == nil != c.wantReplaced {
				t.Fatalf("held session replaced = %v, want %v", held.claim == nil, c.wantReplaced)
			}
			wantClaims := 1
			if !c.wantRefused {
				wantClaims = 2
			}
			if len(fleet.keys) != wantClaims || fleet.strengths[0] != c.held.strength() {
				t.Fatalf("fleet told %v with strengths %v", fleet.keys, fleet.strengths)
			}
		})
	}
}

// A login that owes a /login claims nothing until it has logged in; then it
// claims with the password's strength, replacing a bare-name session of the
// same player and telling the fleet.
func TestOwedLoginClaimsOnceProven(t *testing.T) {
	const id = "10920508-d5d8-3eed-93d2-92f193afe7d7"
	fleet := &claimed{}
	p := assemble(&core{log: slog.New(slog.DiscardHandler), now: time.Now, opts: Options{Sessions: fleet}})
	st := &state{cfg: config.Default()}
	squatter := &conn{st: st, player: "Steve", uuid: id}
	if err := p.players.claimIdentity(squatter); err != nil {
		t.Fatal(err)
	}
	ended := make(chan string, 1)
	squatter.claim.bind(func(text string) { ended <- text; p.players.releaseClaim(squatter) })
	owner := &conn{st: st, player: "Steve", uuid: id, owes: true}
	owner.pl = &onlinePlayer{name: "Steve", origin: owner, proof: owner.proof}
	if owner.claim != nil {
		t.Fatal("a login that owes a /login claimed")
	}
	if err := p.checks.prove(owner, func(pr *proof) { pr.account = "steve" }); err != nil {
		t.Fatal(err)
	}
	select {
	case text := <-ended:
		if text != kickReplaced {
			t.Fatalf("the squatter was told %q", text)
		}
	default:
		t.Fatal("the proven owner did not replace the bare-name session")
	}
	if owner.claim == nil || owner.claim.strength.Load() != provenPassword {
		t.Fatalf("owner's claim %+v", owner.claim)
	}
	if len(fleet.strengths) != 2 || fleet.strengths[1] != provenPassword {
		t.Fatalf("fleet told strengths %v", fleet.strengths)
	}
}
