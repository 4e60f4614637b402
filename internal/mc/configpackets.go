package mc

import "fmt"

// Configuration-state packets the limbo writes and a switch may read: the
// known packs exchange (1.20.5+) and registry data (1.20.2+).

// Vanilla's limits for the configuration packets.
const (
	maxKnownPacks      = 64
	maxRegistryEntries = 1 << 16
	maxKnownPackString = 32767
)

// KnownPack names a data pack both sides may already have; "minecraft:core"
// at the client's own version is vanilla's built-in data.
type KnownPack struct {
	Namespace, ID, Version string
}

// CorePack is vanilla's built-in data pack of one release.
func CorePack(version string) KnownPack {
	return KnownPack{Namespace: "minecraft", ID: "core", Version: version}
}

// IsCore reports whether k is vanilla's built-in pack (any version).
func (k KnownPack) IsCore() bool { return k.Namespace == "minecraft" && k.ID == "core" }

// KnownPacks is the select known packs packet, both directions (1.20.5+): the
// server offers packs, the client answers with those it has. Registry entries
// of a pack both sides know travel without their data.
type KnownPacks struct {
	Packs []KnownPack
}

// DecodeKnownPacks parses a known packs packet.
func DecodeKnownPacks(payload []byte) (KnownPacks, error) {
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	n := r.count(maxKnownPacks, 3)
	var k KnownPacks
	for range n {
		k.Packs = append(k.Packs, KnownPack{
			Namespace: r.str(maxKnownPackString), ID: r.str(maxKnownPackString), Version: r.str(maxKnownPackString),
		})
	}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return KnownPacks{}, fmt.Errorf("mc: known packs: %w", err)
	}
	return k, nil
}

// AppendPayload appends the packet.
func (k KnownPacks) AppendPayload(dst []byte) []byte {
	dst = AppendVarInt(dst, int32(len(k.Packs)))
	for _, p := range k.Packs {
		dst = AppendString(AppendString(AppendString(dst, p.Namespace), p.ID), p.Version)
	}
	return dst
}

// RegistryEntry is one element of a registry (1.20.5+). Data is the element
// itself; a zero Data means the client takes it from a known pack.
type RegistryEntry struct {
	Key  string
	Data NBT
}

// RegistryData is one registry data packet. In 1.20.2–1.20.4 it carries the
// whole registry codec (Codec); from 1.20.5 one registry (Registry, Entries).
type RegistryData struct {
	Codec    NBT
	Registry string
	Entries  []RegistryEntry
}

// DecodeRegistryData parses a registry data packet of protocol p.
func DecodeRegistryData(payload []byte, p Protocol) (RegistryData, error) {
	if p.Before(V1_20_2) {
		return RegistryData{}, fmt.Errorf("%w: registry data before 1.20.2", ErrNoLayout)
	}
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	var d RegistryData
	if p.Before(V1_20_5) {
		d.Codec = r.compound(false)
	} else {
		d.Registry = r.str(maxIdentifierLen)
		n := r.count(maxRegistryEntries, 2)
		if n > 0 {
			d.Entries = make([]RegistryEntry, 0, n)
		}
		for range n {
			e := RegistryEntry{Key: r.str(maxIdentifierLen)}
			if r.boolean() {
				e.Data = r.tag(false)
			}
			d.Entries = append(d.Entries, e)
		}
	}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return RegistryData{}, fmt.Errorf("mc: registry data: %w", err)
	}
	return d, nil
}

// AppendPayload appends the packet in p's layout.
func (d RegistryData) AppendPayload(dst []byte, p Protocol) ([]byte, error) {
	if p.Before(V1_20_2) {
		return nil, fmt.Errorf("%w: registry data before 1.20.2", ErrNoLayout)
	}
	if p.Before(V1_20_5) {
		if d.Codec.Type != tagCompound {
			return nil, fmt.Errorf("mc: registry data of %v needs the codec compound", p)
		}
		return d.Codec.AppendTo(dst, false), nil
	}
	dst = AppendString(dst, d.Registry)
	dst = AppendVarInt(dst, int32(len(d.Entries)))
	for _, e := range d.Entries {
		dst = AppendString(dst, e.Key)
		if e.Data.IsZero() {
			dst = append(dst, 0)
			continue
		}
		dst = e.Data.AppendTo(append(dst, 1), false)
	}
	return dst, nil
}
