package proxy

import (
	"log/slog"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

type claimed struct{ keys []string }

func (c *claimed) Claimed(key string, _ time.Time) { c.keys = append(c.keys, key) }

// On an "auth" server a login that has not proven the name (it owes a
// /login) never replaces the session of the player who has, whatever
// duplicate_login says, and is not announced to the fleet until it logs in.
func TestUnprovenLoginNeverReplaces(t *testing.T) {
	fleet := &claimed{}
	p := &Proxy{log: slog.New(slog.DiscardHandler), now: time.Now, opts: Options{Sessions: fleet}}
	st := &state{cfg: config.Default()} // duplicate_login = "replace"
	const id = "10920508-d5d8-3eed-93d2-92f193afe7d7"
	owner := &conn{st: st, player: "Steve", uuid: id}
	if err := p.claimIdentity(owner); err != nil {
		t.Fatal(err)
	}
	impostor := &conn{st: st, player: "Steve", uuid: id, proof: nameOwed}
	if err := p.claimIdentity(impostor); err == nil {
		t.Fatal("an unproven login took the name from the player online")
	}
	if owner.claim.replaced {
		t.Fatal("an unproven login ended the owner's session")
	}
	if len(fleet.keys) != 1 {
		t.Fatalf("the fleet was told %d claims, want the owner's only", len(fleet.keys))
	}
	// Unproven with the name free: it claims locally, and tells the fleet once proven.
	other := &conn{st: st, player: "Alex", uuid: "40f5db53-a47a-33ee-b1f6-db0e20deded4", proof: nameOwed}
	if err := p.claimIdentity(other); err != nil {
		t.Fatal(err)
	}
	if len(fleet.keys) != 1 {
		t.Fatal("an unproven claim was announced to the fleet")
	}
	p.proven(other)
	if len(fleet.keys) != 2 || other.proof == nameOwed {
		t.Fatalf("a proven claim was not announced: %v", fleet.keys)
	}
}
