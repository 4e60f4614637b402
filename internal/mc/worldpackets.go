package mc

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The play packets that place a player once join game has set up its world:
// where it stands, where the world's spawn is, and the game events the limbo
// needs (the game mode, "start waiting for chunks").

// PlayerPosition is the server's "synchronize player position": it sets the
// player's position and ends the client's "loading terrain" screen before
// 1.19; the client confirms TeleportID (1.9+).
type PlayerPosition struct {
	X, Y, Z    float64
	Yaw, Pitch float32
	// Flags marks relative fields (bit 0 x ... bit 4 pitch); 0 = absolute.
	Flags uint32
	// TeleportID is echoed by the client's teleport confirm (1.9+).
	TeleportID int32
	// DismountVehicle (1.17–1.19.3).
	DismountVehicle bool
	// VelocityX/Y/Z set the player's velocity (1.21.2+).
	VelocityX, VelocityY, VelocityZ float64
	// OnGround (1.7).
	OnGround bool
}

// DecodePlayerPosition parses the packet of protocol p.
func DecodePlayerPosition(payload []byte, p Protocol) (PlayerPosition, error) {
	if err := checkLayout(p, "player position"); err != nil {
		return PlayerPosition{}, err
	}
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	var pp PlayerPosition
	if p.AtLeast(V1_21_2) {
		pp.TeleportID = r.varInt()
		pp.X, pp.Y, pp.Z = r.f64(), r.f64(), r.f64()
		pp.VelocityX, pp.VelocityY, pp.VelocityZ = r.f64(), r.f64(), r.f64()
		pp.Yaw, pp.Pitch = r.f32(), r.f32()
		pp.Flags = uint32(r.i32())
	} else {
		pp.X, pp.Y, pp.Z = r.f64(), r.f64(), r.f64()
		pp.Yaw, pp.Pitch = r.f32(), r.f32()
		if p.Before(V1_8) {
			pp.OnGround = r.boolean()
		} else {
			pp.Flags = uint32(r.u8())
		}
		if p.AtLeast(V1_9) {
			pp.TeleportID = r.varInt()
		}
		if p.AtLeast(V1_17) && p.Before(V1_19_4) {
			pp.DismountVehicle = r.boolean()
		}
	}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return PlayerPosition{}, fmt.Errorf("mc: player position: %w", err)
	}
	return pp, nil
}

// AppendPayload appends the packet in p's layout.
func (pp PlayerPosition) AppendPayload(dst []byte, p Protocol) ([]byte, error) {
	if err := checkLayout(p, "player position"); err != nil {
		return nil, err
	}
	if p.AtLeast(V1_21_2) {
		dst = AppendVarInt(dst, pp.TeleportID)
		dst = appendF64(appendF64(appendF64(dst, pp.X), pp.Y), pp.Z)
		dst = appendF64(appendF64(appendF64(dst, pp.VelocityX), pp.VelocityY), pp.VelocityZ)
		dst = appendF32(appendF32(dst, pp.Yaw), pp.Pitch)
		return binary.BigEndian.AppendUint32(dst, pp.Flags), nil
	}
	dst = appendF64(appendF64(appendF64(dst, pp.X), pp.Y), pp.Z)
	dst = appendF32(appendF32(dst, pp.Yaw), pp.Pitch)
	if p.Before(V1_8) {
		return appendBool(dst, pp.OnGround), nil
	}
	dst = append(dst, byte(pp.Flags))
	if p.AtLeast(V1_9) {
		dst = AppendVarInt(dst, pp.TeleportID)
	}
	if p.AtLeast(V1_17) && p.Before(V1_19_4) {
		dst = appendBool(dst, pp.DismountVehicle)
	}
	return dst, nil
}

// SpawnPosition is the world's default spawn (compass target). From 1.19 to
// 1.20.2 it also ends the client's "loading terrain" screen.
type SpawnPosition struct {
	X, Y, Z int32
	// Angle is the spawn's yaw (1.17+).
	Angle float32
	// Dimension and Pitch complete the spawn point from 1.21.9.
	Dimension string
	Pitch     float32
}

// DecodeSpawnPosition parses the packet of protocol p.
func DecodeSpawnPosition(payload []byte, p Protocol) (SpawnPosition, error) {
	if err := checkLayout(p, "spawn position"); err != nil {
		return SpawnPosition{}, err
	}
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	var s SpawnPosition
	switch {
	case p.Before(V1_8):
		s.X, s.Y, s.Z = r.i32(), r.i32(), r.i32()
	case p.AtLeast(V1_21_9):
		s.Dimension = r.str(maxIdentifierLen)
		s.X, s.Y, s.Z = r.position(p)
		s.Angle, s.Pitch = r.f32(), r.f32()
	default:
		s.X, s.Y, s.Z = r.position(p)
		if p.AtLeast(V1_17) {
			s.Angle = r.f32()
		}
	}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return SpawnPosition{}, fmt.Errorf("mc: spawn position: %w", err)
	}
	return s, nil
}

// AppendPayload appends the packet in p's layout.
func (s SpawnPosition) AppendPayload(dst []byte, p Protocol) ([]byte, error) {
	if err := checkLayout(p, "spawn position"); err != nil {
		return nil, err
	}
	switch {
	case p.Before(V1_8):
		dst = binary.BigEndian.AppendUint32(dst, uint32(s.X))
		dst = binary.BigEndian.AppendUint32(dst, uint32(s.Y))
		return binary.BigEndian.AppendUint32(dst, uint32(s.Z)), nil
	case p.AtLeast(V1_21_9):
		dst = AppendString(dst, s.Dimension)
		dst = binary.BigEndian.AppendUint64(dst, packPosition(s.X, s.Y, s.Z, p))
		return appendF32(appendF32(dst, s.Angle), s.Pitch), nil
	}
	dst = binary.BigEndian.AppendUint64(dst, packPosition(s.X, s.Y, s.Z, p))
	if p.AtLeast(V1_17) {
		dst = appendF32(dst, s.Angle)
	}
	return dst, nil
}

// Game events the proxy sends.
const (
	// GameEventChangeGameMode sets the game mode to Value.
	GameEventChangeGameMode byte = 3
	// GameEventStartWaitingForChunks tells a 1.20.3+ client the world's
	// chunks are coming; it leaves the loading screen once the chunk it
	// stands in is there or it stands outside the build height.
	GameEventStartWaitingForChunks byte = 13
)

// GameEvent is the game event (change game state) packet.
type GameEvent struct {
	Event byte
	Value float32
}

// DecodeGameEvent parses the packet (one layout in every version).
func DecodeGameEvent(payload []byte) (GameEvent, error) {
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	g := GameEvent{Event: r.u8(), Value: r.f32()}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return GameEvent{}, fmt.Errorf("mc: game event: %w", err)
	}
	return g, nil
}

// AppendPayload appends the packet.
func (g GameEvent) AppendPayload(dst []byte) []byte {
	return appendF32(append(dst, g.Event), g.Value)
}

func appendF32(dst []byte, f float32) []byte {
	return binary.BigEndian.AppendUint32(dst, math.Float32bits(f))
}

func appendF64(dst []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
}
