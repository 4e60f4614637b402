package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
)

// A fleet change on its way to this proxy: from a published message, from the
// state hash at a sync, or from Redis keeping a newer change than the one this
// proxy pushed. Whatever the path, the newest Version of each key wins, and
// applying it means: the journal records it, then the drain or ban store and the
// pools are made to say the same.

// onMessage applies a change another proxy published.
func (f *Fleet) onMessage(payload string) {
	e, ok := f.openEntry("a message on the changes channel", payload)
	if !ok {
		return
	}
	switch e.Kind {
	case KindSession, KindCommand, KindReset:
		if e.V.Proxy == f.id || !f.mayAct(e) {
			return
		}
	}
	if e.Kind == KindSession {
		f.onSession(e)
		return
	}
	if e.Kind == KindCommand {
		f.onCommand(e)
		return
	}
	if e.Kind == KindReset {
		if e.V.Proxy == f.id {
			return
		}
		if err := f.opts.Local.Reset(e.Server, e.Address); err != nil {
			f.log.Warn("fleet reset not applied", "change", e.describe(), "from", e.V.Proxy, "err", err)
			return
		}
		f.log.Info("fleet change applied", "change", e.describe(), "from", e.V.Proxy)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur, ok := f.j.get(e.Field()); ok && !e.V.Newer(cur.V) {
		return // our own echo, or older than what we have
	}
	f.adopt(e)
	f.saveJournal()
	f.settle(e.Field(), e)
}

// adopt makes a change the fleet holds this proxy's: the clock moves past it,
// the journal records it as acknowledged, the stores follow. The caller holds
// mu and saves the journal.
func (f *Fleet) adopt(e Entry) {
	f.clk.see(e.V)
	f.j.put(e, false)
	f.applyLocal(e)
	if e.V.Proxy != f.id {
		f.log.Info("fleet change applied", "change", e.describe(), "from", e.V.Proxy)
	}
}

// badEntryEvery is how often one bad entry is logged again while it stays.
const badEntryEvery = time.Minute

// badEntry logs an entry of the fleet's Redis that is ignored, naming its key,
// at most once a minute per key: an operator sees it, a sync loop does not
// flood the log.
func (f *Fleet) badEntry(key string, err error) {
	now := f.now()
	f.badMu.Lock()
	if f.badAt == nil {
		f.badAt = map[string]time.Time{}
	}
	last, seen := f.badAt[key]
	if seen && now.Sub(last) < badEntryEvery {
		f.badMu.Unlock()
		return
	}
	if len(f.badAt) > 1000 {
		clear(f.badAt) // bounded: many bad keys log again sooner, never grow memory
	}
	f.badAt[key] = now
	f.badMu.Unlock()
	f.log.Warn("ignored an entry of the fleet's Redis that this proxy cannot use", "key", key, "err", err)
}

func (f *Fleet) saveJournal() {
	if err := f.j.save(); err != nil {
		f.log.Warn("fleet journal not saved; it is written again at the next change", "err", err)
	}
}

// applyLocal makes this proxy's stores say what e says; nothing is written when
// they already do. The caller holds mu.
func (f *Fleet) applyLocal(e Entry) {
	l := f.opts.Local
	switch e.Kind {
	case KindDrain:
		if l.Drained(e.Server, e.Address) == e.Drained {
			return
		}
		if err := l.SetDrained(e.Server, e.Address, e.Drained); err != nil {
			f.log.Warn("fleet change not applied on this proxy", "change", e.describe(), "err", err)
		}
	case KindMaintenance:
		if l.InMaintenance(e.Server) == e.On {
			return
		}
		if err := l.SetMaintenance(e.Server, e.On); err != nil {
			f.log.Warn("fleet change not applied on this proxy", "change", e.describe(), "err", err)
		}
	case KindBan:
		cur, has := findBan(l.Bans(), e.BanType, e.BanValue)
		switch {
		case e.Ban == nil:
			if has {
				if err := l.RemoveBan(e.BanType, e.BanValue); err != nil && !errors.Is(err, bans.ErrNotFound) {
					f.log.Warn("fleet change not applied on this proxy", "change", e.describe(), "err", err)
				}
			}
		case e.Ban.ExpiresAt != nil && !f.now().Before(*e.Ban.ExpiresAt):
			// Over already: the store forgets it by itself.
		case !has || !sameBan(cur, *e.Ban):
			if err := l.AddBan(*e.Ban); err != nil {
				f.log.Warn("fleet change not applied on this proxy", "change", e.describe(), "err", err)
			}
		}
	}
}

func findBan(list []bans.Ban, t bans.Type, v string) (bans.Ban, bool) {
	for _, b := range list {
		if b.Type == t && b.Value == v {
			return b, true
		}
	}
	return bans.Ban{}, false
}

// reconcileAll runs once before the first connection. Drains and bans this proxy
// had before it joined a fleet (or made with the fleet off) enter the journal
// with the oldest possible version, so the fleet learns them where it has no
// opinion of its own and overrides them where it has; then the stores are made
// to agree with the journal (a crash between the two writes of a change leaves
// the journal right).
func (f *Fleet) reconcileAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.opts.Local
	seeded := 0
	seed := func(e Entry) {
		if _, ok := f.j.get(e.Field()); ok {
			return
		}
		e.V = Version{TS: 0, Proxy: f.id}
		f.j.put(e, true)
		seeded++
	}
	for server, addrs := range l.Drains() {
		for _, a := range addrs {
			seed(Entry{Kind: KindDrain, Server: server, Address: a, Drained: true})
		}
	}
	for _, b := range l.Bans() {
		b := b
		seed(Entry{Kind: KindBan, BanType: b.Type, BanValue: b.Value, Ban: &b})
	}
	for _, server := range l.Maintenances() {
		seed(Entry{Kind: KindMaintenance, Server: server, On: true})
	}
	for _, je := range f.j.entries {
		f.applyLocal(je.Entry)
	}
	if seeded > 0 {
		f.log.Info("drains, bans and maintenance made before joining the fleet are offered to it (the fleet's own changes win)", "entries", seeded)
		f.saveJournal()
	}
}

// sync pulls the whole state hash, adopts what is newer there, marks what is
// newer (or missing) here for pushing, forgets long-dead bans everywhere, then
// pushes. It is what makes a partition, a lost message or a Redis restart heal.
func (f *Fleet) sync(ctx context.Context) error {
	cctx, cancel := f.callCtx(ctx)
	all, err := f.rdb.HGetAll(cctx, f.k.state()).Result()
	cancel()
	if err != nil {
		return err
	}
	now := f.now()
	old := func(e Entry) bool { return e.dead(now) && now.Sub(time.UnixMilli(e.V.TS)) > deadAfter }
	type dead struct{ field, raw string }
	var forget []dead
	f.mu.Lock()
	seen := make(map[string]bool, len(all))
	for field, raw := range all {
		e, ok := f.openEntry(f.k.state()+" "+field, raw)
		if !ok {
			continue
		}
		var err error
		switch {
		case e.Field() != field:
			err = fmt.Errorf("it names %s, not its field", e.Field())
		case e.Kind == KindReset || e.Kind == KindSession || e.Kind == KindCommand:
			err = fmt.Errorf("a %s is never stored", e.Kind)
		}
		if err != nil {
			f.badEntry(f.k.state()+" "+field, err)
			continue
		}
		seen[field] = true
		if old(e) {
			forget = append(forget, dead{field, raw})
		}
		cur, ok := f.j.get(field)
		switch {
		case !ok || e.V.Newer(cur.V):
			f.adopt(e)
			f.settle(field, e)
		case cur.V.Newer(e.V):
			cur.Pending = true
		case cur.Pending: // the same version: Redis has it
			cur.Pending = false
			f.settle(field, e)
		}
	}
	for field, je := range f.j.entries {
		switch {
		case seen[field]:
		case old(je.Entry):
			delete(f.j.entries, field) // forgotten by the fleet too
		default:
			je.Pending = true // Redis lost it (restarted without persistence) or never had it
		}
	}
	f.saveJournal()
	f.mu.Unlock()
	for _, d := range forget {
		cctx, cancel := f.callCtx(ctx)
		n, err := forgetScript.Run(cctx, f.rdb, []string{f.k.state()}, d.field, d.raw).Int()
		cancel()
		if err != nil {
			return err
		}
		if n > 0 {
			f.mu.Lock()
			if je, ok := f.j.get(d.field); ok && f.sealEntry(je.Entry) == d.raw {
				delete(f.j.entries, d.field)
				f.saveJournal()
			}
			f.mu.Unlock()
		}
	}
	return f.push(ctx)
}
