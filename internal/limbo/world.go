package limbo

import (
	"errors"
	"fmt"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// Dimension is the sky the limbo shows: the world itself is always empty.
type Dimension uint8

// The vanilla dimensions. TheEnd is the default: a dark sky that keeps titles
// readable.
const (
	TheEnd Dimension = iota
	Overworld
	Nether
)

func (d Dimension) key() string {
	switch d {
	case Overworld:
		return "minecraft:overworld"
	case Nether:
		return "minecraft:the_nether"
	}
	return "minecraft:the_end"
}

func (d Dimension) legacyID() int32 {
	switch d {
	case Overworld:
		return mc.DimensionOverworld
	case Nether:
		return mc.DimensionNether
	}
	return mc.DimensionEnd
}

// String names the dimension for logs and configuration errors.
func (d Dimension) String() string { return d.key() }

// ParseDimension maps "the_end", "overworld", "nether" (with or without the
// minecraft: prefix) to a Dimension.
func ParseDimension(s string) (Dimension, bool) {
	switch s {
	case "the_end", "end", "minecraft:the_end":
		return TheEnd, true
	case "overworld", "minecraft:overworld":
		return Overworld, true
	case "nether", "the_nether", "minecraft:the_nether":
		return Nether, true
	}
	return 0, false
}

type worldKey struct {
	p      mc.Protocol
	d      Dimension
	ground bool
}

// world is everything prepared, once per protocol and dimension, to put a
// client in the limbo: payloads shared by every player.
type world struct {
	// direct is the only path before 1.20.5 (registries, if any, inside
	// join game or one registry data packet).
	direct *regPath
	// From 1.20.5 the client's known packs decide: lean applies when it knows
	// every pack offered (entries travel without data), full otherwise. Either
	// may be nil, not both.
	packs      []mc.KnownPack
	offer      []byte
	lean, full *regPath
}

// regPath is one way into the world: the registry data packets (1.20.2+) and
// the join game that matches them.
type regPath struct {
	registries [][]byte
	join       mc.JoinGame
	joinBytes  []byte
	// y stands the player above the build height, which ends the client's
	// loading screen without any chunk; with ground, above the platform.
	y      float64
	source string
	// chunk is the ground's chunk data payload; nil without ground.
	chunk []byte
}

// dimType is one dimension type of a registry set.
type dimType struct {
	key     string
	element mc.NBT // zero when the entry carries no data
}

// dimensionsOf lists the dimension types of s in registry order.
func dimensionsOf(p mc.Protocol, s *registrySet) ([]dimType, error) {
	var out []dimType
	switch {
	case p.AtLeast(mc.V1_20_5):
		for _, r := range s.registries {
			if r.Registry != "minecraft:dimension_type" {
				continue
			}
			for _, e := range r.Entries {
				out = append(out, dimType{key: e.Key, element: e.Data})
			}
		}
	case p.Before(mc.V1_16_2):
		list, ok := s.codec.Field("dimension")
		if !ok {
			return nil, errors.New("codec has no dimension list")
		}
		elems, err := list.Elements()
		if err != nil {
			return nil, err
		}
		for _, e := range elems {
			name, _ := e.Field("name")
			key, ok := name.StringValue()
			if !ok {
				return nil, errors.New("dimension without a name")
			}
			out = append(out, dimType{key: key, element: e})
		}
	default:
		reg, ok := s.codec.Field("minecraft:dimension_type")
		if !ok {
			return nil, errors.New("codec has no minecraft:dimension_type")
		}
		list, ok := reg.Field("value")
		if !ok {
			return nil, errors.New("minecraft:dimension_type has no value list")
		}
		elems, err := list.Elements()
		if err != nil {
			return nil, err
		}
		for _, e := range elems {
			name, _ := e.Field("name")
			key, ok := name.StringValue()
			el, hasEl := e.Field("element")
			if !ok || !hasEl || el.Type != mc.NBTCompound {
				return nil, errors.New("dimension type entry without name or element")
			}
			out = append(out, dimType{key: key, element: el})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no dimension types")
	}
	return out, nil
}

// world returns the prepared world for p and d, building it on first use.
func (r *Registries) world(p mc.Protocol, d Dimension, ground bool) (*world, error) {
	if !p.Known() || p > mc.NewestLayout {
		return nil, fmt.Errorf("%w: %v (packet layouts known up to %v)", mc.ErrNoLayout, p, mc.NewestLayout)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := worldKey{p, d, ground}
	if w := r.worlds[k]; w != nil {
		return w, nil
	}
	w, err := r.buildWorld(p, d, ground)
	if err != nil {
		return nil, err
	}
	r.worlds[k] = w
	return w, nil
}

// buildWorld prepares the packets; called with r.mu held.
func (r *Registries) buildWorld(p mc.Protocol, d Dimension, ground bool) (*world, error) {
	if p.Before(mc.V1_16) {
		path, err := buildPath(p, d, nil, false, ground)
		return &world{direct: path}, err
	}
	sets, err := r.sets(p)
	if err != nil {
		return nil, err
	}
	if p.Before(mc.V1_20_5) {
		path, err := buildPath(p, d, sets[0], false, ground)
		return &world{direct: path}, err
	}
	w := &world{}
	for _, s := range sets {
		switch {
		case s.packs != nil && w.lean == nil && w.full == nil:
			// Learnt with entries from the packs the backend and its client agreed on.
			if w.lean, err = buildPath(p, d, s, false, ground); err != nil {
				return nil, err
			}
			w.packs = s.packs
		case s.complete() && w.full == nil:
			if w.full, err = buildPath(p, d, s, false, ground); err != nil {
				return nil, err
			}
			if w.lean == nil && s.packs == nil && s == r.bundled[p] {
				// Vanilla's own data: a client that knows vanilla's core pack of
				// its release needs only the entry names.
				if w.lean, err = buildPath(p, d, s, true, ground); err != nil {
					return nil, err
				}
				for _, name := range p.Names() {
					w.packs = append(w.packs, mc.CorePack(name))
				}
			}
		}
	}
	if w.lean == nil && w.full == nil {
		return nil, fmt.Errorf("%w: %v", ErrNoRegistries, p)
	}
	w.offer = mc.KnownPacks{Packs: w.packs}.AppendPayload(nil)
	return w, nil
}

// buildPath prepares the join game (and registry data) of one registry set;
// lean strips every entry's data; ground puts a platform under the player,
// who plays in adventure mode (and so falls onto it).
func buildPath(p mc.Protocol, d Dimension, s *registrySet, lean, ground bool) (*regPath, error) {
	jg := mc.JoinGame{
		EntityID:           1,
		MaxPlayers:         1,
		ViewDistance:       2,
		SimulationDistance: 2,
		ReducedDebugInfo:   true,
		Spawn: mc.SpawnInfo{
			GameMode: mc.GameModeSpectator, PreviousGameMode: -1,
			Dimension: d.legacyID(), LevelType: "default", SeaLevel: 63,
		},
	}
	if p.Before(mc.V1_8) {
		jg.Spawn.GameMode = mc.GameModeAdventure // 1.7 has no spectator mode
	}
	path := &regPath{y: 300}
	minY, height := 0, 256 // the End's, and every dimension's before 1.17
	if s != nil {
		dims, err := dimensionsOf(p, s)
		if err != nil {
			return nil, fmt.Errorf("limbo: registries of %v (%s): %w", p, s.source, err)
		}
		idx := 0
		for i, dt := range dims {
			if dt.key == d.key() {
				idx = i
				break
			}
		}
		dim := dims[idx]
		jg.WorldNames = []string{dim.key}
		jg.Spawn.WorldName = dim.key
		jg.Spawn.DimensionType = dim.key
		jg.Spawn.DimensionTypeID = int32(idx)
		jg.Spawn.DimensionTypeNBT = dim.element
		path.y = aboveBuildHeight(p, dim.element)
		path.source = s.source
		if lo, ok := dim.element.Field("min_y"); ok {
			if v, ok := lo.IntValue(); ok {
				minY = int(v)
			}
		}
		if h, ok := dim.element.Field("height"); ok {
			if v, ok := h.IntValue(); ok {
				height = int(v)
			}
		}
		switch {
		case p.Before(mc.V1_20_2):
			jg.RegistryCodec = s.codec
		case p.Before(mc.V1_20_5):
			payload, err := mc.RegistryData{Codec: s.codec}.AppendPayload(nil, p)
			if err != nil {
				return nil, err
			}
			path.registries = [][]byte{payload}
		default:
			if path.registries, err = registryPayloads(p, s, lean); err != nil {
				return nil, err
			}
		}
	}
	if ground {
		var err error
		if path.chunk, err = groundChunk(p, minY, height, d == Overworld); err != nil {
			return nil, err
		}
		jg.Spawn.GameMode = mc.GameModeAdventure
		path.y = GroundY + 1 + GroundFall
	}
	path.join = jg
	var err error
	path.joinBytes, err = jg.AppendPayload(nil, p)
	return path, err
}

// registryPayloads encodes one registry data packet per registry; lean drops
// every entry's data (the client has it from a known pack). Entries without
// data stay so either way.
func registryPayloads(p mc.Protocol, s *registrySet, lean bool) ([][]byte, error) {
	out := make([][]byte, 0, len(s.registries))
	for _, r := range s.registries {
		if lean {
			stripped := mc.RegistryData{Registry: r.Registry, Entries: make([]mc.RegistryEntry, len(r.Entries))}
			for i, e := range r.Entries {
				stripped.Entries[i] = mc.RegistryEntry{Key: e.Key}
			}
			r = stripped
		}
		payload, err := r.AppendPayload(nil, p)
		if err != nil {
			return nil, err
		}
		out = append(out, payload)
	}
	return out, nil
}

// aboveBuildHeight is a y above the dimension's build limit: the client
// treats a player standing there as ready without waiting for its chunk
// (1.18.2+), and an unloaded chunk never lets it fall.
func aboveBuildHeight(p mc.Protocol, element mc.NBT) float64 {
	minY, okMin := element.Field("min_y")
	height, okH := element.Field("height")
	lo, ok1 := minY.IntValue()
	h, ok2 := height.IntValue()
	switch {
	case okMin && okH && ok1 && ok2:
		return float64(lo+h) + 16
	case p.Before(mc.V1_17):
		return 300
	}
	// An entry without data: above the largest height a datapack may set.
	return 4096
}

// Describe returns what Enter sends a client of protocol p that knows no data
// pack: the join game and, from 1.20.2, the registry data packets. It is for
// diagnostics and conformance tests.
func Describe(r *Registries, p mc.Protocol, d Dimension) (mc.JoinGame, []mc.RegistryData, error) {
	w, err := r.world(p, d, false)
	if err != nil {
		return mc.JoinGame{}, nil, err
	}
	path := w.direct
	if path == nil {
		path = w.full
	}
	if path == nil {
		return mc.JoinGame{}, nil, fmt.Errorf("%w: %v has only data that relies on packs", ErrNoRegistries, p)
	}
	var regs []mc.RegistryData
	for _, payload := range path.registries {
		rd, err := mc.DecodeRegistryData(payload, p)
		if err != nil {
			return mc.JoinGame{}, nil, err
		}
		regs = append(regs, rd)
	}
	return path.join, regs, nil
}
