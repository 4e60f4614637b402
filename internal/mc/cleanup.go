package mc

import (
	"encoding/json"
	"fmt"
)

// What a server switch must undo on the client: the old server's boss bars,
// tab list entries, tab list header and footer, scoreboard objectives and
// teams, and titles (Title{Action: TitleReset}). The session learns what the
// old server created from the decoders here (by id or name) and removes
// exactly that with the encoders.

// Bounds on what the tab list decoders accept.
const (
	maxPlayerInfoEntries = 1 << 14
	maxObjectiveName     = 32767
	maxKeyBytes          = 512
	maxKeySignature      = 4096
)

// Boss bar actions (1.9+).
const (
	BossBarAdd    int32 = 0
	BossBarRemove int32 = 1
)

// BossBarHeader is what identifies a boss bar packet: the bar and the action;
// a switch remembers the bars added and removes them.
type BossBarHeader struct {
	ID     [16]byte
	Action int32
}

// DecodeBossBarHeader reads a boss bar packet's bar id and action (the rest
// depends on the action and is not needed to track bars).
func DecodeBossBarHeader(payload []byte) (BossBarHeader, error) {
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	h := BossBarHeader{ID: r.uuid(), Action: r.varInt()}
	if r.err != nil {
		return BossBarHeader{}, fmt.Errorf("mc: boss bar: %w", r.err)
	}
	if h.Action < 0 || h.Action > 5 {
		return BossBarHeader{}, fmt.Errorf("mc: boss bar action %d: %w", h.Action, ErrMalformed)
	}
	if h.Action == BossBarRemove && c.rest() != 0 {
		return BossBarHeader{}, fmt.Errorf("mc: boss bar removal with %d trailing bytes: %w", c.rest(), ErrMalformed)
	}
	return h, nil
}

// RemoveBossBar is the packet removing bar id (1.9+).
func RemoveBossBar(p Protocol, id [16]byte) (Packet, error) {
	if err := checkLayout(p, "boss bar"); err != nil {
		return Packet{}, err
	}
	if p.Before(V1_9) {
		return Packet{}, fmt.Errorf("%w: boss bars start at 1.9", ErrNoLayout)
	}
	return Packet{PacketBossBar, AppendVarInt(append([]byte(nil), id[:]...), BossBarRemove)}, nil
}

// Scoreboard objective and team modes.
const (
	ScoreboardCreate int8 = 0
	ScoreboardRemove int8 = 1
	ScoreboardUpdate int8 = 2
)

// ScoreboardHeader identifies an objective or team packet: its name and mode
// (0 create, 1 remove, 2 update; teams also 3 and 4 for members).
type ScoreboardHeader struct {
	Name string
	Mode int8
}

// DecodeObjectiveHeader reads a scoreboard objective packet's name and mode.
func DecodeObjectiveHeader(payload []byte, p Protocol) (ScoreboardHeader, error) {
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	h := ScoreboardHeader{Name: r.str(maxObjectiveName)}
	if p.Before(V1_8) {
		r.str(maxObjectiveName) // 1.7 sends the display name before the mode
	}
	h.Mode = int8(r.u8())
	if r.err != nil {
		return ScoreboardHeader{}, fmt.Errorf("mc: scoreboard objective: %w", r.err)
	}
	return h, nil
}

// RemoveObjective is the packet removing the objective name, which also
// clears every display slot showing it.
func RemoveObjective(p Protocol, name string) (Packet, error) {
	if err := checkLayout(p, "scoreboard objective"); err != nil {
		return Packet{}, err
	}
	dst := AppendString(nil, name)
	if p.Before(V1_8) {
		dst = AppendString(dst, "")
	}
	return Packet{PacketScoreboardObjective, append(dst, byte(ScoreboardRemove))}, nil
}

// DecodeTeamHeader reads a teams packet's team name and mode.
func DecodeTeamHeader(payload []byte) (ScoreboardHeader, error) {
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	h := ScoreboardHeader{Name: r.str(maxObjectiveName), Mode: int8(r.u8())}
	if r.err != nil {
		return ScoreboardHeader{}, fmt.Errorf("mc: teams: %w", r.err)
	}
	return h, nil
}

// RemoveTeam is the packet removing the team name.
func RemoveTeam(p Protocol, name string) (Packet, error) {
	if err := checkLayout(p, "teams"); err != nil {
		return Packet{}, err
	}
	return Packet{PacketTeams, append(AppendString(nil, name), byte(ScoreboardRemove))}, nil
}

// TabListHeaderFooter sets the text above and below the tab list (1.8+).
type TabListHeaderFooter struct {
	Header, Footer json.RawMessage
}

// DecodeTabListHeaderFooter parses the packet of protocol p.
func DecodeTabListHeaderFooter(payload []byte, p Protocol) (TabListHeaderFooter, error) {
	if err := checkLayout(p, "tab list header"); err != nil {
		return TabListHeaderFooter{}, err
	}
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	h := TabListHeaderFooter{Header: r.component(p), Footer: r.component(p)}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return TabListHeaderFooter{}, fmt.Errorf("mc: tab list header: %w", err)
	}
	return h, nil
}

// Packet encodes the header and footer; empty ones clear them.
func (h TabListHeaderFooter) Packet(p Protocol) (Packet, error) {
	if err := checkLayout(p, "tab list header"); err != nil {
		return Packet{}, err
	}
	if p.Before(V1_8) {
		return Packet{}, fmt.Errorf("%w: the tab list header starts at 1.8", ErrNoLayout)
	}
	empty := TextComponent("")
	hd, ft := h.Header, h.Footer
	if len(hd) == 0 {
		hd = empty
	}
	if len(ft) == 0 {
		ft = empty
	}
	dst, err := appendComponent(nil, hd, p)
	if err == nil {
		dst, err = appendComponent(dst, ft, p)
	}
	return Packet{PacketTabListHeaderFooter, dst}, err
}

// PlayerInfoChange is what a player info packet did to the tab list: the
// entries it added and removed. Other updates (latency, game mode, display
// name) change nothing a switch must undo. In 1.7 entries are names.
type PlayerInfoChange struct {
	Added, Removed           [][16]byte
	AddedNames, RemovedNames []string
}

// Player info (update) actions from 1.19.3, as bits of the action set. List
// order (1.21.2) and hat (1.21.4) follow vanilla's enum order, as Velocity
// reads them.
const (
	infoAddPlayer = 1 << iota
	infoInitializeChat
	infoGameMode
	infoListed
	infoLatency
	infoDisplayName
	infoListOrder
	infoHat
)

// Player info actions before 1.19.3.
const (
	legacyInfoAdd         = 0
	legacyInfoGameMode    = 1
	legacyInfoLatency     = 2
	legacyInfoDisplayName = 3
	legacyInfoRemove      = 4
)

// DecodePlayerInfo parses a player info packet (PacketPlayerInfo) of
// protocol p into the entries it added and removed.
func DecodePlayerInfo(payload []byte, p Protocol) (PlayerInfoChange, error) {
	if err := checkLayout(p, "player info"); err != nil {
		return PlayerInfoChange{}, err
	}
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	var ch PlayerInfoChange
	switch {
	case p.Before(V1_8):
		name := r.str(MaxPlayerNameLen)
		online := r.boolean()
		r.u16() // ping
		if online {
			ch.AddedNames = []string{name}
		} else {
			ch.RemovedNames = []string{name}
		}
	case p.Before(V1_19_3):
		action := r.varInt()
		if r.err == nil && (action < legacyInfoAdd || action > legacyInfoRemove) {
			r.err = fmt.Errorf("player info action %d: %w", action, ErrMalformed)
		}
		n := r.count(maxPlayerInfoEntries, 16)
		for range n {
			id := r.uuid()
			switch action {
			case legacyInfoAdd:
				r.str(MaxPlayerNameLen)
				r.properties()
				r.varInt() // game mode
				r.varInt() // latency
				if r.boolean() {
					r.component(p)
				}
				if p.AtLeast(V1_19) && r.boolean() {
					r.i64()
					r.bytes(maxKeyBytes)
					r.bytes(maxKeySignature)
				}
				ch.Added = append(ch.Added, id)
			case legacyInfoGameMode, legacyInfoLatency:
				r.varInt()
			case legacyInfoDisplayName:
				if r.boolean() {
					r.component(p)
				}
			case legacyInfoRemove:
				ch.Removed = append(ch.Removed, id)
			}
		}
	default:
		actions := r.u8()
		n := r.count(maxPlayerInfoEntries, 16)
		for range n {
			id := r.uuid()
			if actions&infoAddPlayer != 0 {
				r.str(MaxPlayerNameLen)
				r.properties()
				ch.Added = append(ch.Added, id)
			}
			if actions&infoInitializeChat != 0 && r.boolean() {
				r.uuid()
				r.i64()
				r.bytes(maxKeyBytes)
				r.bytes(maxKeySignature)
			}
			if actions&infoGameMode != 0 {
				r.varInt()
			}
			if actions&infoListed != 0 {
				r.boolean()
			}
			if actions&infoLatency != 0 {
				r.varInt()
			}
			if actions&infoDisplayName != 0 && r.boolean() {
				r.component(p)
			}
			if actions&infoListOrder != 0 && p.AtLeast(V1_21_2) {
				r.varInt()
			}
			if actions&infoHat != 0 && p.AtLeast(V1_21_4) {
				r.boolean()
			}
		}
	}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return PlayerInfoChange{}, fmt.Errorf("mc: player info: %w", err)
	}
	return ch, nil
}

// DecodePlayerInfoRemove parses the player info remove packet (1.19.3+).
func DecodePlayerInfoRemove(payload []byte) ([][16]byte, error) {
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	n := r.count(maxPlayerInfoEntries, 16)
	out := make([][16]byte, 0, n)
	for range n {
		out = append(out, r.uuid())
	}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return nil, fmt.Errorf("mc: player info remove: %w", err)
	}
	return out, nil
}

// RemovePlayers is what removes tab list entries: one player info remove
// (1.19.3+), one player info with the remove action (1.8–1.19.2), or one
// player info per name (1.7, whose entries are names).
func RemovePlayers(p Protocol, ids [][16]byte, names []string) ([]Packet, error) {
	if err := checkLayout(p, "player info"); err != nil {
		return nil, err
	}
	if p.Before(V1_8) {
		out := make([]Packet, 0, len(names))
		for _, n := range names {
			out = append(out, Packet{PacketPlayerInfo, append(appendBool(AppendString(nil, n), false), 0, 0)})
		}
		return out, nil
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var dst []byte
	ty := PacketPlayerInfoRemove
	if p.Before(V1_19_3) {
		dst, ty = AppendVarInt(nil, legacyInfoRemove), PacketPlayerInfo
	}
	dst = AppendVarInt(dst, int32(len(ids)))
	for _, id := range ids {
		dst = append(dst, id[:]...)
	}
	return []Packet{{ty, dst}}, nil
}

// properties skips a game profile's property list.
func (r *fieldReader) properties() {
	n := r.count(maxProperties, 3)
	for range n {
		r.str(maxPropertyName)
		r.str(maxPropertyValue)
		if r.boolean() {
			r.str(maxPropertySig)
		}
	}
}

// bytes skips a VarInt-prefixed byte array of at most max bytes.
func (r *fieldReader) bytes(max int) {
	if r.err != nil {
		return
	}
	n := r.varInt()
	if r.err == nil {
		_, r.err = r.c.sizedBytes(int(n), max)
	}
}
