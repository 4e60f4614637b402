package limbo

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/infrarust-go/infrarust/internal/mc"
)

func posPayload(p mc.Protocol, y float64, onGround bool) []byte {
	b := binary.BigEndian.AppendUint64(nil, math.Float64bits(groundCentre))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(y))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(groundCentre))
	g := byte(0)
	if onGround {
		g = 1
	}
	return append(b, g)
}

// vanillaFall feeds what a vanilla client sends: the teleport confirmation,
// the spawn height once, a height per tick while airborne, then the landing.
func vanillaFall(c *FallCheck, p mc.Protocol, skip map[int]bool) {
	c.Packet(mc.PacketClientInformation, nil)
	c.Packet(mc.PacketPluginMessage, nil)
	c.Packet(mc.PacketTeleportConfirm, []byte{1})
	c.Packet(mc.PacketMovePosition, posPayload(p, spawnY, false))
	for i := 1; i < len(fall)-1; i++ {
		if !skip[i] {
			c.Packet(mc.PacketMovePosition, posPayload(p, fall[i], false))
		}
	}
	c.Packet(mc.PacketMovePosition, posPayload(p, GroundY+1, true))
	c.Packet(mc.PacketMoveStatus, []byte{1})
}

func TestFallCheckPassesVanilla(t *testing.T) {
	for _, p := range []mc.Protocol{mc.V1_8, mc.V1_18_2, mc.V1_21_4} {
		c := NewFallCheck(p)
		vanillaFall(c, p, map[int]bool{3: true})
		if err := c.Result(); !errors.Is(err, ErrPending) {
			t.Fatalf("%v: decided before a keep-alive was answered: %v", p, err)
		}
		c.Packet(mc.PacketKeepAlive, nil)
		if err := c.Result(); err != nil {
			t.Fatalf("%v: a vanilla fall failed: %v", p, err)
		}
	}
	// The fall's heights: no step before the last one ends within the
	// tolerance of the platform, or a fall could "land" early.
	for i, y := range fall[:len(fall)-1] {
		if y-(GroundY+1) < 10*fallTolerance {
			t.Fatalf("fall[%d] = %v is too close to the platform", i, y)
		}
	}
}

func TestFallCheckRefusesBots(t *testing.T) {
	p := mc.V1_21_4
	for name, c := range map[string]struct {
		feed func(c *FallCheck)
		want error
	}{
		"teleports to the ground": {func(c *FallCheck) {
			c.Packet(mc.PacketTeleportConfirm, []byte{1})
			c.Packet(mc.PacketMovePosition, posPayload(p, GroundY+1, true))
		}, ErrNotFalling},
		"stands in the air": {func(c *FallCheck) {
			c.Packet(mc.PacketTeleportConfirm, []byte{1})
			c.Packet(mc.PacketMovePosition, posPayload(p, spawnY, true))
		}, ErrNotFalling},
		"falls too slowly": {func(c *FallCheck) {
			c.Packet(mc.PacketTeleportConfirm, []byte{1})
			for y := float64(spawnY) - 0.05; y > GroundY+1; y -= 0.05 {
				c.Packet(mc.PacketMovePosition, posPayload(p, y, false))
			}
		}, ErrNotFalling},
		"moves before the teleport": {func(c *FallCheck) {
			c.Packet(mc.PacketMovePosition, posPayload(p, spawnY, false))
		}, ErrNoTeleportConfirm},
		"on ground in the air": {func(c *FallCheck) {
			c.Packet(mc.PacketTeleportConfirm, []byte{1})
			c.Packet(mc.PacketMovePosition, posPayload(p, fall[1], true))
		}, ErrLandedWrong},
		"garbage": {func(c *FallCheck) {
			c.Packet(mc.PacketTeleportConfirm, []byte{1})
			c.Packet(mc.PacketMovePosition, []byte{1, 2, 3})
		}, ErrProtocol},
		"flood": {func(c *FallCheck) {
			c.Packet(mc.PacketTeleportConfirm, []byte{1})
			for range maxMoves + 1 {
				c.Packet(mc.PacketMoveStatus, []byte{0})
			}
		}, ErrTooManyMoves},
	} {
		fc := NewFallCheck(p)
		c.feed(fc)
		if err := fc.Result(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	// A fall without the settings or the brand vanilla sends on joining.
	for name, skip := range map[string]mc.PacketType{"settings": mc.PacketClientInformation, "brand": mc.PacketPluginMessage} {
		fc := NewFallCheck(p)
		for _, t := range []mc.PacketType{mc.PacketClientInformation, mc.PacketPluginMessage} {
			if t != skip {
				fc.Packet(t, nil)
			}
		}
		fc.Packet(mc.PacketTeleportConfirm, []byte{1})
		for i := 1; i < len(fall)-1; i++ {
			fc.Packet(mc.PacketMovePosition, posPayload(p, fall[i], false))
		}
		fc.Packet(mc.PacketMovePosition, posPayload(p, GroundY+1, true))
		fc.Packet(mc.PacketKeepAlive, nil)
		if err := fc.Result(); err == nil || errors.Is(err, ErrPending) {
			t.Errorf("a fall without the %s passed: %v", name, err)
		}
	}
	// A client that never moves does not fail by itself: the caller's
	// timeout ends it.
	if err := NewFallCheck(p).Result(); !errors.Is(err, ErrPending) {
		t.Errorf("an idle client: %v", err)
	}
}
