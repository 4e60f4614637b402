package mc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Join game and respawn, the two packets that put a client in a world. A
// server switch reads the new backend's join game and rewrites it into what
// resets the client's world (see JoinGame.SwitchSequence); the limbo writes
// its own. Layouts follow minecraft-data's protocol.json for every release
// from 1.7 to 26.1; newer protocols are refused with ErrNoLayout because no
// source describes them yet.

// ErrNoLayout marks a packet asked of a protocol whose layout of it is not
// known (too new for the sources, or a packet the version does not have).
var ErrNoLayout = errors.New("mc: packet layout not known for this protocol")

// NewestLayout is the newest protocol whose join game, respawn and the other
// switch packets this package can encode.
const NewestLayout = V26_1

// maxIdentifierLen bounds resource locations (dimension and world keys) in
// characters, as vanilla does.
const maxIdentifierLen = 32767

// maxWorldNames bounds join game's world list (vanilla has three; modded
// servers many more).
const maxWorldNames = 4096

// Packet is one encoded packet for a version: the type the Registry gives an
// id for, and the payload. Encoders that choose between packets by version
// (titles, tab list removal) return it.
type Packet struct {
	Type    PacketType
	Payload []byte
}

// checkLayout refuses protocols no layout source covers.
func checkLayout(p Protocol, what string) error {
	if p.Before(OldestProtocol) || p > NewestLayout {
		return fmt.Errorf("%w: %s of %v (known from %v to %v)", ErrNoLayout, what, p, OldestProtocol, NewestLayout)
	}
	return nil
}

// Dimension ids before 1.16, when a dimension was a number.
const (
	DimensionNether    int32 = -1
	DimensionOverworld int32 = 0
	DimensionEnd       int32 = 1
)

// Game modes as join game and respawn carry them.
const (
	GameModeSurvival  byte = 0
	GameModeCreative  byte = 1
	GameModeAdventure byte = 2
	GameModeSpectator byte = 3 // 1.8+
)

// DeathLocation is where the player last died (1.19+).
type DeathLocation struct {
	Dimension string
	X, Y, Z   int32
}

// SpawnInfo is what join game and respawn share: which world the player is in
// and how it is played. Each field exists in the versions its comment names;
// the others are ignored when encoding and zero when decoded.
type SpawnInfo struct {
	// Dimension is the dimension number before 1.16.
	Dimension int32
	// DimensionType is the dimension type's key in 1.16–1.16.1 and
	// 1.19–1.20.4 ("minecraft:overworld").
	DimensionType string
	// DimensionTypeNBT is the dimension type itself in 1.16.2–1.18.2.
	DimensionTypeNBT NBT
	// DimensionTypeID is the dimension type's index in its registry (1.20.5+).
	DimensionTypeID int32
	// WorldName is the world's key (1.16+, "minecraft:the_end").
	WorldName string
	// HashedSeed is the first 8 bytes of the seed's SHA-256 (1.15+).
	HashedSeed int64
	// GameMode is 0–3; before 1.16.2 join game carries the hardcore flag beside it.
	GameMode byte
	// PreviousGameMode is -1 for none (1.16+).
	PreviousGameMode int8
	// Difficulty is 0–3 (before 1.14).
	Difficulty byte
	// LevelType is "default", "flat", ... (before 1.16).
	LevelType string
	// Debug and Flat describe the world (1.16+).
	Debug, Flat bool
	// Death is the last death location, nil for none (1.19+).
	Death *DeathLocation
	// PortalCooldown is in ticks (1.20+).
	PortalCooldown int32
	// SeaLevel is the world's sea level (1.21.2+).
	SeaLevel int32
}

// JoinGame is the first play packet of a server: the player's entity and the
// world it spawns in.
type JoinGame struct {
	EntityID int32
	// Hardcore is a flag of the game mode byte before 1.16.2.
	Hardcore bool
	// WorldNames lists every world of the server (1.16+).
	WorldNames []string
	// RegistryCodec holds the dimension types, biomes and, later, every
	// synchronised registry (1.16–1.20.1; configuration carries them from 1.20.2).
	RegistryCodec NBT
	// MaxPlayers is ignored by clients.
	MaxPlayers int32
	// ViewDistance (1.14+) and SimulationDistance (1.18+) are in chunks.
	ViewDistance       int32
	SimulationDistance int32
	// ReducedDebugInfo (1.8+), EnableRespawnScreen (1.15+),
	// DoLimitedCrafting (1.20.2+), EnforcesSecureChat (1.20.5+).
	ReducedDebugInfo    bool
	EnableRespawnScreen bool
	DoLimitedCrafting   bool
	EnforcesSecureChat  bool
	// Spawn is where the player is.
	Spawn SpawnInfo
}

// Respawn moves the player to a world without a new login: a dimension
// change, a death, or a switch's world reset.
type Respawn struct {
	Spawn SpawnInfo
	// DataKept says what the client keeps (bit 0 attributes, bit 1 entity
	// data); before 1.19.3 only bit 0 existed, as "copy metadata" (1.16+).
	DataKept byte
}

// DecodeJoinGame parses a join game of protocol p.
func DecodeJoinGame(payload []byte, p Protocol) (JoinGame, error) {
	if err := checkLayout(p, "join game"); err != nil {
		return JoinGame{}, err
	}
	c := cursor{b: payload}
	var j JoinGame
	err := j.read(&c, p)
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return JoinGame{}, fmt.Errorf("mc: join game: %w", err)
	}
	return j, nil
}

func (j *JoinGame) read(c *cursor, p Protocol) error {
	r := fieldReader{c: c}
	s := &j.Spawn
	j.EntityID = r.i32()
	switch {
	case p.Before(V1_16_2):
		gm := r.u8()
		j.Hardcore, s.GameMode = gm&0x08 != 0, gm&0x07
	case p.Before(V1_20_2):
		j.Hardcore = r.boolean()
		s.GameMode = r.u8()
	default:
		j.Hardcore = r.boolean()
	}
	if p.Before(V1_16) {
		if p.Before(V1_9_1) {
			s.Dimension = int32(int8(r.u8()))
		} else {
			s.Dimension = r.i32()
		}
		if p.Before(V1_14) {
			s.Difficulty = r.u8()
		}
		if p.AtLeast(V1_15) {
			s.HashedSeed = r.i64()
		}
		j.MaxPlayers = int32(r.u8())
		s.LevelType = r.str(16)
		if p.AtLeast(V1_14) {
			j.ViewDistance = r.varInt()
		}
		if p.AtLeast(V1_8) {
			j.ReducedDebugInfo = r.boolean()
		}
		if p.AtLeast(V1_15) {
			j.EnableRespawnScreen = r.boolean()
		}
		return r.err
	}
	if p.Before(V1_20_2) {
		s.PreviousGameMode = int8(r.u8())
		j.WorldNames = r.worldNames()
		j.RegistryCodec = r.compound(true)
		switch {
		case p.Before(V1_16_2), p.AtLeast(V1_19):
			s.DimensionType = r.str(maxIdentifierLen)
		default:
			s.DimensionTypeNBT = r.compound(true)
		}
		s.WorldName = r.str(maxIdentifierLen)
		s.HashedSeed = r.i64()
		if p.Before(V1_16_2) {
			j.MaxPlayers = int32(r.u8())
		} else {
			j.MaxPlayers = r.varInt()
		}
		j.ViewDistance = r.varInt()
		if p.AtLeast(V1_18) {
			j.SimulationDistance = r.varInt()
		}
		j.ReducedDebugInfo = r.boolean()
		j.EnableRespawnScreen = r.boolean()
		s.Debug = r.boolean()
		s.Flat = r.boolean()
		if p.AtLeast(V1_19) {
			s.Death = r.death()
		}
		if p.AtLeast(V1_20) {
			s.PortalCooldown = r.varInt()
		}
		return r.err
	}
	j.WorldNames = r.worldNames()
	j.MaxPlayers = r.varInt()
	j.ViewDistance = r.varInt()
	j.SimulationDistance = r.varInt()
	j.ReducedDebugInfo = r.boolean()
	j.EnableRespawnScreen = r.boolean()
	j.DoLimitedCrafting = r.boolean()
	r.spawnInfo2(s, p)
	if p.AtLeast(V1_20_5) {
		j.EnforcesSecureChat = r.boolean()
	}
	return r.err
}

// AppendPayload appends the join game in p's layout.
func (j JoinGame) AppendPayload(dst []byte, p Protocol) ([]byte, error) {
	if err := checkLayout(p, "join game"); err != nil {
		return nil, err
	}
	s := &j.Spawn
	dst = binary.BigEndian.AppendUint32(dst, uint32(j.EntityID))
	switch {
	case p.Before(V1_16_2):
		gm := s.GameMode & 0x07
		if j.Hardcore {
			gm |= 0x08
		}
		dst = append(dst, gm)
	case p.Before(V1_20_2):
		dst = append(appendBool(dst, j.Hardcore), s.GameMode)
	default:
		dst = appendBool(dst, j.Hardcore)
	}
	if p.Before(V1_16) {
		if p.Before(V1_9_1) {
			dst = append(dst, byte(int8(s.Dimension)))
		} else {
			dst = binary.BigEndian.AppendUint32(dst, uint32(s.Dimension))
		}
		if p.Before(V1_14) {
			dst = append(dst, s.Difficulty)
		}
		if p.AtLeast(V1_15) {
			dst = binary.BigEndian.AppendUint64(dst, uint64(s.HashedSeed))
		}
		dst = append(dst, byte(min(max(j.MaxPlayers, 0), 255)))
		dst = AppendString(dst, s.LevelType)
		if p.AtLeast(V1_14) {
			dst = AppendVarInt(dst, j.ViewDistance)
		}
		if p.AtLeast(V1_8) {
			dst = appendBool(dst, j.ReducedDebugInfo)
		}
		if p.AtLeast(V1_15) {
			dst = appendBool(dst, j.EnableRespawnScreen)
		}
		return dst, nil
	}
	if p.Before(V1_20_2) {
		if j.RegistryCodec.Type != tagCompound {
			return nil, fmt.Errorf("mc: join game of %v needs a registry codec compound", p)
		}
		dst = append(dst, byte(s.PreviousGameMode))
		dst = appendWorldNames(dst, j.WorldNames)
		dst = j.RegistryCodec.AppendTo(dst, true)
		switch {
		case p.Before(V1_16_2), p.AtLeast(V1_19):
			dst = AppendString(dst, s.DimensionType)
		default:
			if s.DimensionTypeNBT.Type != tagCompound {
				return nil, fmt.Errorf("mc: join game of %v needs the dimension type compound", p)
			}
			dst = s.DimensionTypeNBT.AppendTo(dst, true)
		}
		dst = AppendString(dst, s.WorldName)
		dst = binary.BigEndian.AppendUint64(dst, uint64(s.HashedSeed))
		if p.Before(V1_16_2) {
			dst = append(dst, byte(min(max(j.MaxPlayers, 0), 255)))
		} else {
			dst = AppendVarInt(dst, j.MaxPlayers)
		}
		dst = AppendVarInt(dst, j.ViewDistance)
		if p.AtLeast(V1_18) {
			dst = AppendVarInt(dst, j.SimulationDistance)
		}
		dst = appendBool(dst, j.ReducedDebugInfo)
		dst = appendBool(dst, j.EnableRespawnScreen)
		dst = appendBool(dst, s.Debug)
		dst = appendBool(dst, s.Flat)
		if p.AtLeast(V1_19) {
			dst = appendDeath(dst, s.Death, p)
		}
		if p.AtLeast(V1_20) {
			dst = AppendVarInt(dst, s.PortalCooldown)
		}
		return dst, nil
	}
	dst = appendWorldNames(dst, j.WorldNames)
	dst = AppendVarInt(dst, j.MaxPlayers)
	dst = AppendVarInt(dst, j.ViewDistance)
	dst = AppendVarInt(dst, j.SimulationDistance)
	dst = appendBool(dst, j.ReducedDebugInfo)
	dst = appendBool(dst, j.EnableRespawnScreen)
	dst = appendBool(dst, j.DoLimitedCrafting)
	dst = appendSpawnInfo2(dst, s, p)
	if p.AtLeast(V1_20_5) {
		dst = appendBool(dst, j.EnforcesSecureChat)
	}
	return dst, nil
}

// DecodeRespawn parses a respawn of protocol p.
func DecodeRespawn(payload []byte, p Protocol) (Respawn, error) {
	if err := checkLayout(p, "respawn"); err != nil {
		return Respawn{}, err
	}
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	var rs Respawn
	s := &rs.Spawn
	switch {
	case p.Before(V1_16):
		s.Dimension = r.i32()
		if p.Before(V1_14) {
			s.Difficulty = r.u8()
		}
		if p.AtLeast(V1_15) {
			s.HashedSeed = r.i64()
		}
		s.GameMode = r.u8()
		s.LevelType = r.str(16)
	case p.Before(V1_20_2):
		if p.AtLeast(V1_16_2) && p.Before(V1_19) {
			s.DimensionTypeNBT = r.compound(true)
		} else {
			s.DimensionType = r.str(maxIdentifierLen)
		}
		s.WorldName = r.str(maxIdentifierLen)
		s.HashedSeed = r.i64()
		s.GameMode = r.u8()
		s.PreviousGameMode = int8(r.u8())
		s.Debug = r.boolean()
		s.Flat = r.boolean()
		rs.DataKept = r.u8()
		if p.AtLeast(V1_19) {
			s.Death = r.death()
		}
		if p.AtLeast(V1_20) {
			s.PortalCooldown = r.varInt()
		}
	default:
		r.spawnInfo2(s, p)
		rs.DataKept = r.u8()
	}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return Respawn{}, fmt.Errorf("mc: respawn: %w", err)
	}
	return rs, nil
}

// AppendPayload appends the respawn in p's layout.
func (rs Respawn) AppendPayload(dst []byte, p Protocol) ([]byte, error) {
	if err := checkLayout(p, "respawn"); err != nil {
		return nil, err
	}
	s := &rs.Spawn
	switch {
	case p.Before(V1_16):
		dst = binary.BigEndian.AppendUint32(dst, uint32(s.Dimension))
		if p.Before(V1_14) {
			dst = append(dst, s.Difficulty)
		}
		if p.AtLeast(V1_15) {
			dst = binary.BigEndian.AppendUint64(dst, uint64(s.HashedSeed))
		}
		dst = append(dst, s.GameMode)
		return AppendString(dst, s.LevelType), nil
	case p.Before(V1_20_2):
		if p.AtLeast(V1_16_2) && p.Before(V1_19) {
			if s.DimensionTypeNBT.Type != tagCompound {
				return nil, fmt.Errorf("mc: respawn of %v needs the dimension type compound", p)
			}
			dst = s.DimensionTypeNBT.AppendTo(dst, true)
		} else {
			dst = AppendString(dst, s.DimensionType)
		}
		dst = AppendString(dst, s.WorldName)
		dst = binary.BigEndian.AppendUint64(dst, uint64(s.HashedSeed))
		dst = append(dst, s.GameMode, byte(s.PreviousGameMode))
		dst = appendBool(dst, s.Debug)
		dst = appendBool(dst, s.Flat)
		dst = append(dst, rs.DataKept)
		if p.AtLeast(V1_19) {
			dst = appendDeath(dst, s.Death, p)
		}
		if p.AtLeast(V1_20) {
			dst = AppendVarInt(dst, s.PortalCooldown)
		}
		return dst, nil
	}
	return append(appendSpawnInfo2(dst, s, p), rs.DataKept), nil
}

// SwitchSequence is what moves a client that is already in a world (of any
// server) into the world of j, as vanilla clients need it, without a new
// login. The client takes the second join game (no entity id rewriting is
// needed afterwards) and:
//   - before 1.16 cannot respawn into the dimension it is in without keeping
//     that world's chunks and entities, so join game names another dimension
//     and a respawn then moves it to j's (the "dimension flip");
//   - from 1.16 to 1.20.1 join game always builds a new world; the respawn
//     into the same world that follows settles the client as vanilla's own
//     dimension change does.
//
// From 1.20.2 a switch goes through configuration instead (start
// configuration, the new server's registries, finish), after which j is
// forwarded as is: SwitchSequence returns it alone.
func (j JoinGame) SwitchSequence(p Protocol) ([]Packet, error) {
	if p.AtLeast(V1_20_2) {
		jp, err := j.AppendPayload(nil, p)
		if err != nil {
			return nil, err
		}
		return []Packet{{PacketJoinGame, jp}}, nil
	}
	first := j
	if p.Before(V1_16) {
		first.Spawn.Dimension = OtherDimension(j.Spawn.Dimension)
	}
	jp, err := first.AppendPayload(nil, p)
	if err != nil {
		return nil, err
	}
	rp, err := j.Respawn().AppendPayload(nil, p)
	if err != nil {
		return nil, err
	}
	return []Packet{{PacketJoinGame, jp}, {PacketRespawn, rp}}, nil
}

// Respawn is the respawn into j's world keeping nothing.
func (j JoinGame) Respawn() Respawn { return Respawn{Spawn: j.Spawn} }

// OtherDimension picks a pre-1.16 dimension different from d, for the flip.
func OtherDimension(d int32) int32 {
	if d == DimensionOverworld {
		return DimensionNether
	}
	return DimensionOverworld
}

// fieldReader reads fields in sequence and keeps the first error, so layouts
// read as a list of fields.
type fieldReader struct {
	c   *cursor
	err error
}

// field reads one field unless an earlier one failed, keeping the first error.
func field[T any](r *fieldReader, read func() (T, error)) T {
	var v T
	if r.err == nil {
		v, r.err = read()
	}
	return v
}

func (r *fieldReader) u8() byte       { return field(r, r.c.u8) }
func (r *fieldReader) boolean() bool  { return r.u8() != 0 }
func (r *fieldReader) u16() uint16    { return field(r, r.c.u16) }
func (r *fieldReader) i32() int32     { return field(r, r.c.i32) }
func (r *fieldReader) i64() int64     { return field(r, r.c.i64) }
func (r *fieldReader) f32() float32   { return math.Float32frombits(uint32(r.i32())) }
func (r *fieldReader) f64() float64   { return math.Float64frombits(uint64(r.i64())) }
func (r *fieldReader) varInt() int32  { return field(r, r.c.varInt) }
func (r *fieldReader) uuid() [16]byte { return field(r, r.c.uuid) }

func (r *fieldReader) str(maxChars int) string {
	return field(r, func() (string, error) { return r.c.string(maxChars) })
}

// tag reads a root tag of any type but TAG_End.
func (r *fieldReader) tag(named bool) NBT {
	if r.err != nil {
		return NBT{}
	}
	var n NBT
	n, r.err = readNBT(r.c, named)
	if r.err == nil && n.IsZero() {
		r.err = fmt.Errorf("%w: TAG_End where a tag belongs", errNBT)
	}
	n.Payload = append([]byte(nil), n.Payload...)
	return n
}

// compound reads a root compound tag (codecs, dimension types and registry
// elements are never anything else).
func (r *fieldReader) compound(named bool) NBT {
	if r.err != nil {
		return NBT{}
	}
	var n NBT
	n, r.err = readNBT(r.c, named)
	if r.err == nil && n.Type != tagCompound {
		r.err = fmt.Errorf("%w: tag type %d where a compound belongs", errNBT, n.Type)
	}
	// Decoded packets never alias the frame buffer.
	n.Payload = append([]byte(nil), n.Payload...)
	return n
}

// count reads a VarInt element count, bounded by max and by the bytes left
// (every element takes at least minSize bytes).
func (r *fieldReader) count(max, minSize int) int {
	n := r.varInt()
	if r.err != nil {
		return 0
	}
	if n < 0 || int(n) > max || int(n)*minSize > r.c.rest() {
		r.err = fmt.Errorf("mc: %d elements (limit %d) in %d bytes: %w", n, max, r.c.rest(), ErrMalformed)
		return 0
	}
	return int(n)
}

func (r *fieldReader) worldNames() []string {
	n := r.count(maxWorldNames, 1)
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, r.str(maxIdentifierLen))
	}
	return out
}

func (r *fieldReader) position(p Protocol) (x, y, z int32) {
	return unpackPosition(uint64(r.i64()), p)
}

func (r *fieldReader) death() *DeathLocation {
	if !r.boolean() {
		return nil
	}
	d := &DeathLocation{Dimension: r.str(maxIdentifierLen)}
	d.X, d.Y, d.Z = r.position(V1_19)
	return d
}

// spawnInfo2 reads the 1.20.2+ spawn fields (1.20.5 turned the dimension type
// into a registry index and 1.21.2 added the sea level).
func (r *fieldReader) spawnInfo2(s *SpawnInfo, p Protocol) {
	if p.AtLeast(V1_20_5) {
		s.DimensionTypeID = r.varInt()
	} else {
		s.DimensionType = r.str(maxIdentifierLen)
	}
	s.WorldName = r.str(maxIdentifierLen)
	s.HashedSeed = r.i64()
	s.GameMode = r.u8()
	s.PreviousGameMode = int8(r.u8())
	s.Debug = r.boolean()
	s.Flat = r.boolean()
	s.Death = r.death()
	s.PortalCooldown = r.varInt()
	if p.AtLeast(V1_21_2) {
		s.SeaLevel = r.varInt()
	}
}

func appendSpawnInfo2(dst []byte, s *SpawnInfo, p Protocol) []byte {
	if p.AtLeast(V1_20_5) {
		dst = AppendVarInt(dst, s.DimensionTypeID)
	} else {
		dst = AppendString(dst, s.DimensionType)
	}
	dst = AppendString(dst, s.WorldName)
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.HashedSeed))
	dst = append(dst, s.GameMode, byte(s.PreviousGameMode))
	dst = appendBool(dst, s.Debug)
	dst = appendBool(dst, s.Flat)
	dst = appendDeath(dst, s.Death, p)
	dst = AppendVarInt(dst, s.PortalCooldown)
	if p.AtLeast(V1_21_2) {
		dst = AppendVarInt(dst, s.SeaLevel)
	}
	return dst
}

func appendWorldNames(dst []byte, names []string) []byte {
	dst = AppendVarInt(dst, int32(len(names)))
	for _, n := range names {
		dst = AppendString(dst, n)
	}
	return dst
}

func appendDeath(dst []byte, d *DeathLocation, p Protocol) []byte {
	if d == nil {
		return append(dst, 0)
	}
	dst = AppendString(append(dst, 1), d.Dimension)
	return binary.BigEndian.AppendUint64(dst, packPosition(d.X, d.Y, d.Z, p))
}

// packPosition packs a block position into a long: x 26 bits, y 12, z 26
// before 1.14; x 26, z 26, y 12 from 1.14.
func packPosition(x, y, z int32, p Protocol) uint64 {
	if p.Before(V1_14) {
		return uint64(x&0x3FFFFFF)<<38 | uint64(y&0xFFF)<<26 | uint64(z&0x3FFFFFF)
	}
	return uint64(x&0x3FFFFFF)<<38 | uint64(z&0x3FFFFFF)<<12 | uint64(y&0xFFF)
}

func unpackPosition(v uint64, p Protocol) (x, y, z int32) {
	s := int64(v)
	x = int32(s >> 38)
	if p.Before(V1_14) {
		y = int32(s << 26 >> 52)
		z = int32(s << 38 >> 38)
		return
	}
	y = int32(s << 52 >> 52)
	z = int32(s << 26 >> 38)
	return
}
