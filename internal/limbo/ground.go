package limbo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// The ground of a verification world: one chunk, (0, 0), whose layer at
// GroundY is stone. A player put above it in adventure mode falls under the
// client's own gravity and stops on it, which is what bot verification
// watches (a client that does not simulate physics never lands).

// GroundY is the height of the platform's blocks; a player standing on it
// has feet at GroundY+1.
const GroundY = 64

// GroundFall is how many blocks above the platform a player is put unless
// the world says otherwise (World.FallHeight, at most MaxFallHeight).
const GroundFall = 8

// MaxFallHeight bounds World.FallHeight: the dimension must hold it.
const MaxFallHeight = 12

// groundCentre is where the player is put in x and z: the middle of the chunk.
const groundCentre = 8.5

// ErrNoGround: the limbo cannot build ground for this version yet.
var ErrNoGround = errors.New("limbo: no ground (chunk format) for this version")

// GroundCovers reports whether Enter can build ground for p: 1.8 to 26.1
// (every chunk format written below; 1.7 has none).
func GroundCovers(p mc.Protocol) bool {
	return p.AtLeast(mc.V1_8) && p.Before(mc.V26_2)
}

// stoneState is minecraft:stone's block state: 1 in the global palette of
// every version since the flattening (1.13); id 1, meta 0 before it.
const stoneState = 1

// groundChunk encodes the chunk data packet payload of the platform for p,
// in a dimension whose blocks span [minY, minY+height); skylight says the
// dimension has sky light (the overworld), which 1.9–1.13 sections carry.
func groundChunk(p mc.Protocol, minY, height int, skylight bool) ([]byte, error) {
	switch {
	case !GroundCovers(p):
		return nil, fmt.Errorf("%w: %v", ErrNoGround, p)
	case p.Before(mc.V1_9):
		return legacyChunk(), nil
	case p.Before(mc.V1_18):
		return maskedChunk(p, skylight), nil
	}
	if height <= 0 || height%16 != 0 || minY%16 != 0 || GroundY < minY || GroundY+MaxFallHeight+2 >= minY+height {
		return nil, fmt.Errorf("limbo: the dimension (min_y %d, height %d) cannot hold the ground at %d", minY, height, GroundY)
	}
	out := make([]byte, 0, 2048)
	out = binary.BigEndian.AppendUint32(out, 0) // x
	out = binary.BigEndian.AppendUint32(out, 0) // z
	out = appendHeightmap(out, p, minY, height)
	data := groundSections(p, minY, height)
	out = mc.AppendVarInt(out, int32(len(data)))
	out = append(out, data...)
	out = mc.AppendVarInt(out, 0) // block entities
	if p.Before(mc.V1_20) {
		out = append(out, 1) // trust edges
	}
	// Light: every mask empty (the client lights what it must; the End has
	// its own ambient light).
	for range 4 {
		out = mc.AppendVarInt(out, 0)
	}
	out = mc.AppendVarInt(out, 0) // sky light arrays
	out = mc.AppendVarInt(out, 0) // block light arrays
	return out, nil
}

// appendHeightmap writes MOTION_BLOCKING: every column's top is the platform.
func appendHeightmap(out []byte, p mc.Protocol, minY, height int) []byte {
	bitsPer := bits.Len(uint(height)) // values 0..height
	perLong := 64 / bitsPer
	longs := make([]uint64, (256+perLong-1)/perLong)
	top := uint64(GroundY + 1 - minY)
	for i := range 256 {
		longs[i/perLong] |= top << (uint(i%perLong) * uint(bitsPer))
	}
	if p.AtLeast(mc.V1_21_5) {
		out = mc.AppendVarInt(out, 1) // one heightmap
		out = mc.AppendVarInt(out, 4) // motion_blocking
		out = mc.AppendVarInt(out, int32(len(longs)))
		for _, l := range longs {
			out = binary.BigEndian.AppendUint64(out, l)
		}
		return out
	}
	out = append(out, 0x0A) // compound
	if p.Before(mc.V1_20_2) {
		out = append(out, 0, 0) // the root's empty name
	}
	const name = "MOTION_BLOCKING"
	out = append(out, 0x0C) // long array
	out = binary.BigEndian.AppendUint16(out, uint16(len(name)))
	out = append(out, name...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(longs)))
	for _, l := range longs {
		out = binary.BigEndian.AppendUint64(out, l)
	}
	return append(out, 0) // end of compound
}

// groundSections writes every section of the column (1.18+ sends them all):
// air, except the platform's section.
func groundSections(p mc.Protocol, minY, height int) []byte {
	lengthPrefixed := p.Before(mc.V1_21_5) // 1.21.5 dropped the data arrays' lengths
	fluids := p.AtLeast(mc.V26_1)          // 26.1 counts a section's fluid blocks too
	var out []byte
	platform := (GroundY - minY) / 16
	for s := range height / 16 {
		if s != platform {
			out = binary.BigEndian.AppendUint16(out, 0) // no block
			if fluids {
				out = binary.BigEndian.AppendUint16(out, 0)
			}
			out = appendSingle(out, 0, lengthPrefixed) // air
			out = appendSingle(out, 0, lengthPrefixed) // biome 0
			continue
		}
		out = binary.BigEndian.AppendUint16(out, 256) // the layer
		if fluids {
			out = binary.BigEndian.AppendUint16(out, 0)
		}
		// Block states: an indirect palette of 4 bits per block, [air, stone],
		// 16 blocks per long, index y*256 + z*16 + x.
		out = append(out, 4)
		out = mc.AppendVarInt(out, 2)
		out = mc.AppendVarInt(out, 0)
		out = mc.AppendVarInt(out, stoneState)
		longs := make([]uint64, 4096/16)
		y := (GroundY - minY) % 16
		for i := y * 256; i < (y+1)*256; i++ {
			longs[i/16] |= 1 << (uint(i%16) * 4)
		}
		if lengthPrefixed {
			out = mc.AppendVarInt(out, int32(len(longs)))
		}
		for _, l := range longs {
			out = binary.BigEndian.AppendUint64(out, l)
		}
		out = appendSingle(out, 0, lengthPrefixed) // biome 0
	}
	return out
}

// appendSingle is a single-valued paletted container.
func appendSingle(out []byte, value int32, lengthPrefixed bool) []byte {
	out = append(out, 0)
	out = mc.AppendVarInt(out, value)
	if lengthPrefixed {
		out = mc.AppendVarInt(out, 0)
	}
	return out
}

// legacyChunk is 1.8's chunk data: one section (the fifth, y 64–79) of
// little-endian block ids (id<<4 | meta), its block light (the End has no
// sky light), then the column's biomes.
func legacyChunk() []byte {
	const section = GroundY / 16
	data := make([]byte, 0, 8192+2048+256)
	y := GroundY % 16
	for i := range 4096 {
		var block uint16
		if i/256 == y {
			block = stoneState << 4
		}
		data = binary.LittleEndian.AppendUint16(data, block)
	}
	for range 2048 {
		data = append(data, 0xFF) // full block light: the platform is visible
	}
	data = append(data, make([]byte, 256)...) // biome 0 (ocean)
	out := make([]byte, 0, 16+len(data))
	out = binary.BigEndian.AppendUint32(out, 0)
	out = binary.BigEndian.AppendUint32(out, 0)
	out = append(out, 1) // ground-up continuous
	out = binary.BigEndian.AppendUint16(out, 1<<section)
	out = mc.AppendVarInt(out, int32(len(data)))
	return append(out, data...)
}

// maskedChunk is the chunk data of 1.9–1.17: only the platform's section is
// sent (a bit mask says which), in a paletted container of 4 bits per block
// (16 per long: the same bits whether entries may span longs, before 1.16,
// or not).
func maskedChunk(p mc.Protocol, skylight bool) []byte {
	const section = GroundY / 16
	globalStone := uint64(stoneState)
	if p.Before(mc.V1_13) {
		globalStone = stoneState << 4 // id<<4 | meta before the flattening
	}
	// The section.
	var data []byte
	if p.AtLeast(mc.V1_14) {
		data = binary.BigEndian.AppendUint16(data, 256) // non-air blocks
	}
	data = append(data, 4)
	data = mc.AppendVarInt(data, 2)
	data = mc.AppendVarInt(data, 0)
	data = mc.AppendVarInt(data, int32(globalStone))
	longs := make([]uint64, 4096/16)
	y := GroundY % 16
	for i := y * 256; i < (y+1)*256; i++ {
		longs[i/16] |= 1 << (uint(i%16) * 4)
	}
	data = mc.AppendVarInt(data, int32(len(longs)))
	for _, l := range longs {
		data = binary.BigEndian.AppendUint64(data, l)
	}
	if p.Before(mc.V1_14) {
		data = append(data, bytes.Repeat([]byte{0xFF}, 2048)...) // block light (from 1.14 its own packet)
		if skylight {
			data = append(data, bytes.Repeat([]byte{0xFF}, 2048)...)
		}
	}
	// Biomes inside the data: 256 bytes before 1.13, 256 ints in 1.13–1.14.
	switch {
	case p.Before(mc.V1_13):
		data = append(data, make([]byte, 256)...)
	case p.Before(mc.V1_15):
		data = append(data, make([]byte, 256*4)...)
	}

	out := binary.BigEndian.AppendUint32(nil, 0)
	out = binary.BigEndian.AppendUint32(out, 0)
	if p.Before(mc.V1_17) {
		out = append(out, 1) // full chunk
	}
	if p.AtLeast(mc.V1_16) && p.Before(mc.V1_16_2) {
		out = append(out, 1) // ignore old data
	}
	if p.AtLeast(mc.V1_17) {
		out = mc.AppendVarInt(out, 1) // the mask as a bit set: one long
		out = binary.BigEndian.AppendUint64(out, 1<<section)
	} else {
		out = mc.AppendVarInt(out, 1<<section)
	}
	if p.AtLeast(mc.V1_14) {
		out = appendOldHeightmap(out, p)
	}
	// Biomes before the data from 1.15: 1024 ints, then varint ids from 1.16.2.
	switch {
	case p.AtLeast(mc.V1_16_2):
		out = mc.AppendVarInt(out, 1024)
		out = append(out, make([]byte, 1024)...) // 1024 varint zeros
	case p.AtLeast(mc.V1_15):
		out = append(out, make([]byte, 1024*4)...)
	}
	out = mc.AppendVarInt(out, int32(len(data)))
	out = append(out, data...)
	if p.AtLeast(mc.V1_9_3) {
		out = mc.AppendVarInt(out, 0) // block entities
	}
	return out
}

// appendOldHeightmap is MOTION_BLOCKING for 1.14–1.17 (a named root
// compound; 0..256 in 9 bits, spanning longs before 1.16).
func appendOldHeightmap(out []byte, p mc.Protocol) []byte {
	const bitsPer = 9
	top := uint64(GroundY + 1)
	var longs []uint64
	if p.AtLeast(mc.V1_16) {
		longs = make([]uint64, (256+6)/7)
		for i := range 256 {
			longs[i/7] |= top << (uint(i%7) * bitsPer)
		}
	} else {
		longs = make([]uint64, 256*bitsPer/64)
		for i := range 256 {
			bit := i * bitsPer
			longs[bit/64] |= top << uint(bit%64)
			if spill := bit%64 + bitsPer - 64; spill > 0 {
				longs[bit/64+1] |= top >> uint(bitsPer-spill)
			}
		}
	}
	const name = "MOTION_BLOCKING"
	out = append(out, 0x0A, 0, 0, 0x0C)
	out = binary.BigEndian.AppendUint16(out, uint16(len(name)))
	out = append(out, name...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(longs)))
	for _, l := range longs {
		out = binary.BigEndian.AppendUint64(out, l)
	}
	return append(out, 0)
}
