package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/infrarust-go/infrarust/internal/bans"
)

// A local change on its way to the fleet: the admin API applies it to this proxy
// as before, then records it here; the record gets a Version, is written to the
// journal as pending, and the Run loop pushes it into Redis. The Receipt tells
// the operator whether the fleet has it.

// DeliveryState says how far a change got.
type DeliveryState string

const (
	// Shared: Redis stored and published the change; every connected proxy
	// applies it within a round trip.
	Shared DeliveryState = "shared"
	// Queued: Redis did not acknowledge it (unreachable or slow); it is kept in
	// the journal and published as soon as Redis answers.
	Queued DeliveryState = "queued"
	// Superseded: the fleet already held a newer change of the same key, which
	// now applies here too (the last change wins).
	Superseded DeliveryState = "superseded"
	// LocalOnly: applied on this proxy only, never sent later (a reset made while
	// Redis is unreachable, or a change the journal could not save).
	LocalOnly DeliveryState = "local_only"
)

// Delivery is what became of a change, for the operator who made it.
type Delivery struct {
	State DeliveryState `json:"state"`
	// Message says what it means for the operator, when it is not Shared.
	Message string `json:"message,omitempty"`
}

// Receipt follows one recorded change until Redis acknowledges it.
type Receipt struct {
	v    Version
	done chan Delivery // buffered 1; receives once
	now  *Delivery     // set when the answer is known at once
}

func resolved(d Delivery) *Receipt { return &Receipt{now: &d} }

// Wait returns the change's delivery once known, or Queued when ctx ends first
// (the change stays in the journal and is pushed later).
func (r *Receipt) Wait(ctx context.Context) Delivery {
	if r.now != nil {
		return *r.now
	}
	select {
	case d := <-r.done:
		r.now = &d
		return d
	case <-ctx.Done():
		return Delivery{State: Queued, Message: "Redis did not confirm the change in time; it is kept and published when Redis answers"}
	}
}

// Drain records an operator's drain (or, with drained false, enable) made on
// this proxy, so every proxy of the fleet applies it.
func (f *Fleet) Drain(server, address string, drained bool) *Receipt {
	return f.record(Entry{Kind: KindDrain, Server: server, Address: address, Drained: drained})
}

// Maintenance records an operator's maintenance of a server (or its end, on
// false) made on this proxy, so every proxy of the fleet applies it.
func (f *Fleet) Maintenance(server string, on bool) *Receipt {
	return f.record(Entry{Kind: KindMaintenance, Server: server, On: on})
}

// Ban records a ban added on this proxy (as the ban store saved it).
func (f *Fleet) Ban(b bans.Ban) *Receipt {
	return f.record(Entry{Kind: KindBan, BanType: b.Type, BanValue: b.Value, Ban: &b})
}

// Unban records a ban lifted on this proxy (the ban as it was).
func (f *Fleet) Unban(t bans.Type, value string) *Receipt {
	return f.record(Entry{Kind: KindBan, BanType: t, BanValue: value})
}

// Reset publishes an operator's reset to the proxies connected now. A reset is
// about the failures of this moment, so one made while Redis is unreachable is
// not replayed later.
func (f *Fleet) Reset(ctx context.Context, server, address string) *Receipt {
	if down, why := f.down(); down {
		return resolved(Delivery{State: LocalOnly, Message: "reset on this proxy only: " + why})
	}
	f.mu.Lock()
	e := Entry{Kind: KindReset, Server: server, Address: address, V: f.clk.next(f.now().UnixMilli(), f.id)}
	f.mu.Unlock()
	cctx, cancel := f.callCtx(ctx)
	defer cancel()
	if err := f.rdb.Publish(cctx, f.k.changes(), f.sealEntry(e)).Err(); err != nil {
		return resolved(Delivery{State: LocalOnly, Message: "reset on this proxy only: " + f.explain(err)})
	}
	return resolved(Delivery{State: Shared})
}

// record gives a local change its version, journals it as pending and makes
// this proxy's stores agree with the journal (a fleet change applied between the
// admin API's write and this record is undone here, so store and journal never
// disagree for long). The Run loop pushes it.
func (f *Fleet) record(e Entry) *Receipt {
	f.mu.Lock()
	e.V = f.clk.next(f.now().UnixMilli(), f.id)
	f.j.put(e, true)
	saveErr := f.j.save()
	f.applyLocal(e)
	r := &Receipt{v: e.V, done: make(chan Delivery, 1)}
	field := e.Field()
	f.waiting[field] = append(f.waiting[field], r)
	f.mu.Unlock()
	if saveErr != nil {
		f.log.Error("fleet journal not saved; the change is applied here and kept in memory for the fleet, but is lost if this proxy restarts before Redis has it", "change", e.describe(), "err", saveErr)
	}
	if down, why := f.down(); down {
		return resolved(Delivery{State: Queued, Message: "the fleet does not have it yet (" + why + "); it is kept and published when Redis answers"})
	}
	select {
	case f.kick <- struct{}{}:
	default:
	}
	return r
}

// push compare-and-sets every pending entry into Redis.
func (f *Fleet) push(ctx context.Context) error {
	f.mu.Lock()
	list := f.j.pending()
	f.mu.Unlock()
	for _, e := range list {
		if err := f.pushOne(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// pushOne stores e unless Redis has a newer change of its field, which then
// applies here; either way the fleet has decided and the entry is no longer pending.
func (f *Fleet) pushOne(ctx context.Context, e Entry) error {
	cctx, cancel := f.callCtx(ctx)
	defer cancel()
	cur, err := casScript.Run(cctx, f.rdb, []string{f.k.state()},
		e.Field(), e.V.TS, e.V.Proxy, f.sealEntry(e), f.k.changes()).Text()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	winner := e
	if err == nil { // Redis keeps what it had
		if kept, ok := f.openEntry(f.k.state()+" "+e.Field(), cur); ok && kept.Field() == e.Field() {
			winner = kept
		}
	}
	if winner.V.Newer(e.V) {
		f.adopt(winner)
	} else if je, ok := f.j.get(e.Field()); ok && je.V == e.V {
		je.Pending = false
		if err := f.j.save(); err != nil {
			f.log.Warn("fleet journal not saved", "err", err)
		}
	}
	f.settle(e.Field(), winner)
	return nil
}

// settle answers the receipts of field waiting for versions up to the one the
// fleet now holds; the caller holds mu.
func (f *Fleet) settle(field string, held Entry) {
	rs := f.waiting[field]
	keep := rs[:0]
	for _, r := range rs {
		switch c := r.v.Compare(held.V); {
		case c == 0:
			r.done <- Delivery{State: Shared}
		case c < 0 && held.V.Proxy == f.id:
			// A later change made here replaced it before it was pushed; the fleet
			// has the later one, which is what the operator asked last.
			r.done <- Delivery{State: Shared}
		case c < 0:
			r.done <- Delivery{State: Superseded, Message: fmt.Sprintf("the fleet already had a newer change (%s, made on %s), which applies here too", held.describe(), held.V.Proxy)}
		default:
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		delete(f.waiting, field)
	} else {
		f.waiting[field] = keep
	}
}

// failWaiting answers every waiting receipt with Queued: Redis went down.
func (f *Fleet) failWaiting(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for field, rs := range f.waiting {
		for _, r := range rs {
			r.done <- Delivery{State: Queued, Message: "the fleet does not have it yet (" + why + "); it is kept and published when Redis answers"}
		}
		delete(f.waiting, field)
	}
}
