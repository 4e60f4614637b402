package limbo

import (
	"github.com/infrarust-go/infrarust/internal/mc"
)

// maxLeftovers bounds each kind of leftover one backend can make the proxy
// remember; past it, more are not tracked (a hostile backend cannot grow a
// session's memory, and the client drops its own state on disconnect anyway).
const maxLeftovers = 4096

// Leftovers records what a backend created on the client that outlives a
// switch or a fall into the limbo: boss bars, tab list entries, scoreboard
// objectives and teams, the tab list header and footer, a title. A session
// passes it every such clientbound play packet of the current backend
// (Tracks says which) and, when the player leaves that backend, sends what
// Clear returns before the next world.
type Leftovers struct {
	bossBars   map[[16]byte]struct{}
	players    map[[16]byte]struct{}
	names      map[string]struct{} // 1.7 tab list entries
	objectives map[string]struct{}
	teams      map[string]struct{}
	header     bool
	title      bool
}

// Tracks reports whether packets of type t change what Clear undoes, so a
// relay decodes only those.
func Tracks(t mc.PacketType) bool {
	switch t {
	case mc.PacketBossBar, mc.PacketPlayerInfo, mc.PacketPlayerInfoRemove, mc.PacketScoreboardObjective,
		mc.PacketTeams, mc.PacketTabListHeaderFooter, mc.PacketTitle, mc.PacketSetTitleText, mc.PacketSetSubtitleText:
		return true
	}
	return false
}

// Observe records one clientbound play packet of type t (from
// Registry.Type) sent by the backend; packets it does not track are ignored.
// A packet it cannot decode is an error and changes nothing.
func (l *Leftovers) Observe(p mc.Protocol, t mc.PacketType, payload []byte) error {
	switch t {
	case mc.PacketBossBar:
		h, err := mc.DecodeBossBarHeader(payload)
		if err != nil {
			return err
		}
		switch h.Action {
		case mc.BossBarAdd:
			l.bossBars = add(l.bossBars, h.ID)
		case mc.BossBarRemove:
			delete(l.bossBars, h.ID)
		}
	case mc.PacketPlayerInfo:
		ch, err := mc.DecodePlayerInfo(payload, p)
		if err != nil {
			return err
		}
		for _, id := range ch.Added {
			l.players = add(l.players, id)
		}
		for _, id := range ch.Removed {
			delete(l.players, id)
		}
		for _, n := range ch.AddedNames {
			l.names = add(l.names, n)
		}
		for _, n := range ch.RemovedNames {
			delete(l.names, n)
		}
	case mc.PacketPlayerInfoRemove:
		ids, err := mc.DecodePlayerInfoRemove(payload)
		if err != nil {
			return err
		}
		for _, id := range ids {
			delete(l.players, id)
		}
	case mc.PacketScoreboardObjective:
		h, err := mc.DecodeObjectiveHeader(payload, p)
		if err != nil {
			return err
		}
		switch h.Mode {
		case mc.ScoreboardCreate:
			l.objectives = add(l.objectives, h.Name)
		case mc.ScoreboardRemove:
			delete(l.objectives, h.Name)
		}
	case mc.PacketTeams:
		h, err := mc.DecodeTeamHeader(payload)
		if err != nil {
			return err
		}
		switch h.Mode {
		case mc.ScoreboardCreate:
			l.teams = add(l.teams, h.Name)
		case mc.ScoreboardRemove:
			delete(l.teams, h.Name)
		}
	case mc.PacketTabListHeaderFooter:
		l.header = true
	case mc.PacketTitle, mc.PacketSetTitleText, mc.PacketSetSubtitleText:
		l.title = true
	}
	return nil
}

func add[K comparable](m map[K]struct{}, k K) map[K]struct{} {
	if m == nil {
		m = map[K]struct{}{}
	}
	if len(m) < maxLeftovers {
		m[k] = struct{}{}
	}
	return m
}

// Clear returns the packets that remove everything recorded, for protocol p,
// and forgets it. The tab list entry of the player itself is removed too:
// the next server adds it again.
func (l *Leftovers) Clear(p mc.Protocol) ([]mc.Packet, error) {
	var out []mc.Packet
	for id := range l.bossBars {
		pk, err := mc.RemoveBossBar(p, id)
		if err != nil {
			return nil, err
		}
		out = append(out, pk)
	}
	if len(l.players) > 0 || len(l.names) > 0 {
		ids := make([][16]byte, 0, len(l.players))
		for id := range l.players {
			ids = append(ids, id)
		}
		names := make([]string, 0, len(l.names))
		for n := range l.names {
			names = append(names, n)
		}
		pks, err := mc.RemovePlayers(p, ids, names)
		if err != nil {
			return nil, err
		}
		out = append(out, pks...)
	}
	for name := range l.objectives {
		pk, err := mc.RemoveObjective(p, name)
		if err != nil {
			return nil, err
		}
		out = append(out, pk)
	}
	for name := range l.teams {
		pk, err := mc.RemoveTeam(p, name)
		if err != nil {
			return nil, err
		}
		out = append(out, pk)
	}
	if l.header {
		pk, err := mc.TabListHeaderFooter{}.Packet(p)
		if err != nil {
			return nil, err
		}
		out = append(out, pk)
	}
	if l.title {
		pk, err := mc.Title{Action: mc.TitleReset}.Packet(p)
		if err != nil {
			return nil, err
		}
		out = append(out, pk)
	}
	*l = Leftovers{}
	return out, nil
}
