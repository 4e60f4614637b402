package limbo

import (
	"bytes"
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// Registry data a 1.16+ client needs before it accepts a world: the dimension
// types and biomes (1.16–1.20.1, inside join game), every synchronised
// registry (1.20.2+, in configuration). The limbo bundles vanilla's, captured
// by minecraft-data (see gen/ and THIRD_PARTY_NOTICES.md), and can learn a
// backend's at runtime. All of it is shared: a limbo player holds none.

//go:embed registrydata/*.bin.gz
var registryFS embed.FS

// bundledFile is one protocol's entry of the generated index.
type bundledFile struct {
	file    string // in registrydata/
	capture string // minecraft-data directory it was made from
}

// ErrNoRegistries means the limbo has no registry data a client of that
// version accepts: neither bundled nor learnt from a backend.
var ErrNoRegistries = errors.New("limbo: no registry data for this version")

// registrySet is the registry data of one protocol.
type registrySet struct {
	// codec is the whole codec (1.16–1.20.4).
	codec mc.NBT
	// registries are the synchronised registries (1.20.5+); an entry without
	// data relies on packs.
	registries []mc.RegistryData
	// packs are what entries without data rely on (the client must know all
	// of them); nil when every entry carries its data.
	packs []mc.KnownPack
	// source names where the set came from, for errors and logs.
	source string
}

// complete reports whether every 1.20.5+ entry carries its data, so the set
// works for a client that knows no pack.
func (s *registrySet) complete() bool {
	for _, r := range s.registries {
		for _, e := range r.Entries {
			if e.Data.IsZero() {
				return false
			}
		}
	}
	return true
}

// Registries is where the limbo takes registry data from: the bundled
// captures, and what backends sent (Learn*). One value serves every player;
// DefaultRegistries is the process-wide one.
type Registries struct {
	// PreferLearnt makes data learnt from a backend win over the bundled
	// capture (a network whose backends add datapack biomes or dimension
	// types); by default learnt data only fills versions with no bundle.
	PreferLearnt bool

	mu      sync.Mutex
	bundled map[mc.Protocol]*registrySet // loaded on first use
	learnt  map[mc.Protocol]*registrySet
	worlds  map[worldKey]*world // prepared packets, rebuilt when data changes
}

// DefaultRegistries serves the bundled data (and whatever the process learns).
var DefaultRegistries = NewRegistries()

// NewRegistries returns a store over the bundled data.
func NewRegistries() *Registries {
	return &Registries{
		bundled: map[mc.Protocol]*registrySet{},
		learnt:  map[mc.Protocol]*registrySet{},
		worlds:  map[worldKey]*world{},
	}
}

// Bundled reports whether the binary carries registry data for p (always
// true before 1.16, which needs none).
func Bundled(p mc.Protocol) bool {
	if p.Before(mc.V1_16) {
		return p.Known()
	}
	_, ok := bundledFiles[p]
	return ok
}

// BundledProtocols lists the protocols from 1.16 whose registry data the
// binary carries, in ascending order (older ones need none), for docs and
// version tables.
func BundledProtocols() []mc.Protocol {
	out := make([]mc.Protocol, 0, len(bundledFiles))
	for _, p := range mc.KnownProtocols() {
		if _, ok := bundledFiles[p]; ok {
			out = append(out, p)
		}
	}
	return out
}

// Covers reports whether Enter can serve a client of protocol p: a layout
// for its packets and registry data, bundled or learnt.
func (r *Registries) Covers(p mc.Protocol) bool {
	if !p.Known() || p > mc.NewestLayout {
		return false
	}
	if Bundled(p) {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.learnt[p]
	return ok
}

// LearnJoinGame keeps the registry codec of a backend's join game (1.16 to
// 1.20.1) for limbo clients of the same protocol.
func (r *Registries) LearnJoinGame(p mc.Protocol, jg mc.JoinGame) error {
	if p.Before(mc.V1_16) || p.AtLeast(mc.V1_20_2) {
		return fmt.Errorf("limbo: join game carries registries from 1.16 to 1.20.1, not in %v", p)
	}
	if jg.RegistryCodec.Type != mc.NBTCompound {
		return errors.New("limbo: join game without a registry codec")
	}
	r.learn(p, &registrySet{codec: cloneNBT(jg.RegistryCodec), source: "learnt from a backend's join game"})
	return nil
}

// LearnConfiguration keeps a backend's registry data (1.20.2+): every
// registry data packet it sent in configuration and, from 1.20.5, the known
// packs the client and the backend agreed on (the client's answer), which
// entries without data rely on.
func (r *Registries) LearnConfiguration(p mc.Protocol, agreed []mc.KnownPack, data []mc.RegistryData) error {
	if p.Before(mc.V1_20_2) {
		return fmt.Errorf("limbo: configuration carries registries from 1.20.2, not in %v", p)
	}
	s := &registrySet{source: "learnt from a backend's configuration"}
	if p.Before(mc.V1_20_5) {
		if len(data) != 1 || data[0].Codec.Type != mc.NBTCompound {
			return fmt.Errorf("limbo: %v sends one registry codec, got %d packets", p, len(data))
		}
		s.codec = cloneNBT(data[0].Codec)
	} else {
		if len(data) == 0 {
			return errors.New("limbo: no registry data to learn")
		}
		for _, d := range data {
			c := mc.RegistryData{Registry: d.Registry, Entries: make([]mc.RegistryEntry, len(d.Entries))}
			for i, e := range d.Entries {
				c.Entries[i] = mc.RegistryEntry{Key: e.Key, Data: cloneNBT(e.Data)}
			}
			s.registries = append(s.registries, c)
		}
		if !s.complete() {
			s.packs = slices.Clone(agreed)
		}
	}
	if _, err := dimensionsOf(p, s); err != nil {
		return fmt.Errorf("limbo: learnt registries unusable: %w", err)
	}
	r.learn(p, s)
	return nil
}

func (r *Registries) learn(p mc.Protocol, s *registrySet) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.learnt[p] = s
	for k := range r.worlds {
		if k.p == p {
			delete(r.worlds, k)
		}
	}
}

func cloneNBT(n mc.NBT) mc.NBT {
	return mc.NBT{Type: n.Type, Payload: bytes.Clone(n.Payload)}
}

// sets returns the registry sets usable for p in order of preference.
// Called with r.mu held.
func (r *Registries) sets(p mc.Protocol) ([]*registrySet, error) {
	var out []*registrySet
	learnt := r.learnt[p]
	if learnt != nil && r.PreferLearnt {
		out = append(out, learnt)
	}
	if _, ok := bundledFiles[p]; ok {
		b, err := r.loadBundled(p)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if learnt != nil && !r.PreferLearnt {
		out = append(out, learnt)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %v (bundled: %s; learn it from a backend of that version)", ErrNoRegistries, p, bundledVersions())
	}
	return out, nil
}

func (r *Registries) loadBundled(p mc.Protocol) (*registrySet, error) {
	if s := r.bundled[p]; s != nil {
		return s, nil
	}
	bf := bundledFiles[p]
	s, err := readBlob(bf.file)
	if err != nil {
		return nil, fmt.Errorf("limbo: bundled registries of %v (%s): %w", p, bf.file, err)
	}
	s.source = "minecraft-data " + minecraftDataVersion + " " + bf.capture
	r.bundled[p] = s
	return s, nil
}

func bundledVersions() string {
	var first, last mc.Protocol
	for p := range bundledFiles {
		if first == 0 || p < first {
			first = p
		}
		if p > last {
			last = p
		}
	}
	return fmt.Sprintf("1.7.2-1.15.2 need none, %d versions from %v to %v", len(bundledFiles), first, last)
}

// Blob format written by gen: "IRLD", a kind byte, then for kind 1 one
// compound payload (VarInt length first), for kind 2 the registries: count,
// then per registry its id, entry count, and per entry its key and a
// VarInt-length-prefixed nameless tag (length 0: no data).
const (
	blobMagic      = "IRLD"
	kindCodec      = 1
	kindRegistries = 2
	maxBlobSize    = 16 << 20
)

func readBlob(name string) (*registrySet, error) {
	f, err := registryFS.Open("registrydata/" + name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxBlobSize))
	if err != nil {
		return nil, err
	}
	return parseBlob(raw)
}

func parseBlob(raw []byte) (*registrySet, error) {
	if len(raw) < len(blobMagic)+1 || string(raw[:len(blobMagic)]) != blobMagic {
		return nil, errors.New("not a registry blob")
	}
	b := raw[len(blobMagic)+1:]
	next := func() (int, error) {
		v, n, err := varInt(b)
		b = b[n:]
		return v, err
	}
	str := func() (string, error) {
		n, err := next()
		if err != nil || n > len(b) {
			return "", fmt.Errorf("truncated string: %w", err)
		}
		s := string(b[:n])
		b = b[n:]
		return s, nil
	}
	s := &registrySet{}
	switch raw[len(blobMagic)] {
	case kindCodec:
		n, err := next()
		if err != nil || n != len(b) {
			return nil, errors.New("codec length does not match the blob")
		}
		s.codec = mc.NBT{Type: mc.NBTCompound, Payload: b}
		return s, nil
	case kindRegistries:
		count, err := next()
		if err != nil {
			return nil, err
		}
		for range count {
			id, err := str()
			if err != nil {
				return nil, err
			}
			n, err := next()
			if err != nil {
				return nil, err
			}
			d := mc.RegistryData{Registry: id, Entries: make([]mc.RegistryEntry, 0, n)}
			for range n {
				key, err := str()
				if err != nil {
					return nil, err
				}
				l, err := next()
				if err != nil || l > len(b) {
					return nil, errors.New("truncated entry")
				}
				e := mc.RegistryEntry{Key: key}
				if l > 0 {
					tag, used, err := mc.ParseNBT(b[:l], false)
					if err != nil || used != l {
						return nil, fmt.Errorf("entry %s %s: %v", id, key, err)
					}
					e.Data = tag
				}
				b = b[l:]
				d.Entries = append(d.Entries, e)
			}
			s.registries = append(s.registries, d)
		}
		if len(b) != 0 {
			return nil, errors.New("trailing bytes")
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown blob kind %d", raw[len(blobMagic)])
}

func varInt(b []byte) (int, int, error) {
	var v uint32
	for i := 0; i < 5 && i < len(b); i++ {
		v |= uint32(b[i]&0x7F) << (7 * i)
		if b[i]&0x80 == 0 {
			return int(int32(v)), i + 1, nil
		}
	}
	return 0, 0, errors.New("bad varint")
}
