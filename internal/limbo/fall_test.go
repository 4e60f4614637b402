package limbo

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"

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

// clock is a hand-moved clock for the pace check.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// check is a FallCheck of p from height h (0: GroundFall) with teleport id
// 7, on a hand-moved clock; spawn is where the player is put.
func check(p mc.Protocol, h float64) (fc *FallCheck, clk *clock, spawn float64) {
	clk = &clock{t: time.Unix(1_800_000_000, 0)}
	fc = NewFallCheck(p, FallOptions{Height: h, TeleportID: 7, Now: clk.now})
	return fc, clk, fc.fall[0]
}

// vanillaFall feeds what a vanilla client sends, a tick's time apart: the
// teleport confirmation, the spawn height once, a height per tick while
// airborne, then the landing.
func vanillaFall(c *FallCheck, clk *clock, p mc.Protocol, skip map[int]bool) {
	c.Packet(mc.PacketClientInformation, nil)
	c.Packet(mc.PacketPluginMessage, nil)
	c.Packet(mc.PacketTeleportConfirm, []byte{7})
	c.Packet(mc.PacketMovePosition, posPayload(p, c.fall[0], false))
	for i := 1; i < len(c.fall)-1; i++ {
		clk.t = clk.t.Add(TickTime)
		if !skip[i] {
			c.Packet(mc.PacketMovePosition, posPayload(p, c.fall[i], false))
		}
	}
	clk.t = clk.t.Add(TickTime)
	c.Packet(mc.PacketMovePosition, posPayload(p, GroundY+1, true))
	c.Packet(mc.PacketMoveStatus, []byte{1})
}

func TestFallCheckPassesVanilla(t *testing.T) {
	for _, p := range []mc.Protocol{mc.V1_8, mc.V1_18_2, mc.V1_21_4} {
		for _, h := range []float64{0, 6.25, 9.731, MaxFallHeight} {
			c, clk, _ := check(p, h)
			vanillaFall(c, clk, p, map[int]bool{3: true})
			if err := c.Result(); !errors.Is(err, ErrPending) {
				t.Fatalf("%v from %v: decided before a keep-alive was answered: %v", p, h, err)
			}
			c.Packet(mc.PacketKeepAlive, nil)
			if err := c.Result(); err != nil {
				t.Fatalf("%v from %v: a vanilla fall failed: %v", p, h, err)
			}
			// The fall's heights: no step before the last one ends within the
			// tolerance of the platform, or a fall could "land" early.
			for i, y := range c.fall[:len(c.fall)-1] {
				if y-(GroundY+1) < 10*fallTolerance {
					t.Fatalf("from %v: fall[%d] = %v is too close to the platform", h, i, y)
				}
			}
		}
	}
}

// A replay: the heights of a vanilla fall, computed in advance from the
// public formula, sent at once. Every height is right; the pace is not.
func TestFallCheckRefusesAReplay(t *testing.T) {
	p := mc.V1_21_4
	c, clk, _ := check(p, 0)
	c.Packet(mc.PacketClientInformation, nil)
	c.Packet(mc.PacketPluginMessage, nil)
	c.Packet(mc.PacketTeleportConfirm, []byte{7})
	for i := 1; i < len(c.fall)-1; i++ {
		clk.t = clk.t.Add(time.Millisecond) // a burst, as fast as the network carries it
		c.Packet(mc.PacketMovePosition, posPayload(p, c.fall[i], false))
	}
	c.Packet(mc.PacketMovePosition, posPayload(p, GroundY+1, true))
	if err := c.Result(); !errors.Is(err, ErrTooFast) {
		t.Fatalf("a burst replay: %v, want %v", err, ErrTooFast)
	}
	// Half the pace is still a real client's (a network's jitter).
	c, clk, _ = check(p, 0)
	c.Packet(mc.PacketTeleportConfirm, []byte{7})
	for i := 1; i < len(c.fall)-1; i++ {
		clk.t = clk.t.Add(TickTime * 6 / 10)
		c.Packet(mc.PacketMovePosition, posPayload(p, c.fall[i], false))
	}
	clk.t = clk.t.Add(TickTime)
	c.Packet(mc.PacketMovePosition, posPayload(p, GroundY+1, true))
	if err := c.Result(); !errors.Is(err, ErrPending) {
		t.Fatalf("a fall at 60%% of real time: %v, want it to wait for the keep-alive", err)
	}
}

func TestFallCheckRefusesBots(t *testing.T) {
	p := mc.V1_21_4
	for name, c := range map[string]struct {
		feed func(c *FallCheck, spawn float64)
		want error
	}{
		"teleports to the ground": {func(c *FallCheck, _ float64) {
			c.Packet(mc.PacketTeleportConfirm, []byte{7})
			c.Packet(mc.PacketMovePosition, posPayload(p, GroundY+1, true))
		}, ErrNotFalling},
		"stands in the air": {func(c *FallCheck, spawn float64) {
			c.Packet(mc.PacketTeleportConfirm, []byte{7})
			c.Packet(mc.PacketMovePosition, posPayload(p, spawn, true))
		}, ErrNotFalling},
		"falls too slowly": {func(c *FallCheck, spawn float64) {
			c.Packet(mc.PacketTeleportConfirm, []byte{7})
			for y := spawn - 0.05; y > GroundY+1; y -= 0.05 {
				c.Packet(mc.PacketMovePosition, posPayload(p, y, false))
			}
		}, ErrNotFalling},
		"falls from the documented height": {func(c *FallCheck, _ float64) {
			c.Packet(mc.PacketTeleportConfirm, []byte{7})
			c.Packet(mc.PacketMovePosition, posPayload(p, fallFrom(GroundY + 1 + GroundFall)[1], false))
		}, ErrNotFalling},
		"moves before the teleport": {func(c *FallCheck, spawn float64) {
			c.Packet(mc.PacketMovePosition, posPayload(p, spawn, false))
		}, ErrNoTeleportConfirm},
		"confirms another teleport": {func(c *FallCheck, _ float64) {
			c.Packet(mc.PacketTeleportConfirm, []byte{1})
		}, ErrWrongTeleport},
		"on ground in the air": {func(c *FallCheck, _ float64) {
			c.Packet(mc.PacketTeleportConfirm, []byte{7})
			c.Packet(mc.PacketMovePosition, posPayload(p, c.fall[1], true))
		}, ErrLandedWrong},
		"garbage": {func(c *FallCheck, _ float64) {
			c.Packet(mc.PacketTeleportConfirm, []byte{7})
			c.Packet(mc.PacketMovePosition, []byte{1, 2, 3})
		}, ErrProtocol},
		"flood": {func(c *FallCheck, _ float64) {
			c.Packet(mc.PacketTeleportConfirm, []byte{7})
			for range maxMoves + 1 {
				c.Packet(mc.PacketMoveStatus, []byte{0})
			}
		}, ErrTooManyMoves},
	} {
		fc, _, spawn := check(p, 9.37)
		c.feed(fc, spawn)
		if err := fc.Result(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	// A fall without the settings or the brand vanilla sends on joining.
	for name, skip := range map[string]mc.PacketType{"settings": mc.PacketClientInformation, "brand": mc.PacketPluginMessage} {
		fc, clk, _ := check(p, 0)
		for _, t := range []mc.PacketType{mc.PacketClientInformation, mc.PacketPluginMessage} {
			if t != skip {
				fc.Packet(t, nil)
			}
		}
		fc.Packet(mc.PacketTeleportConfirm, []byte{7})
		for i := 1; i < len(fc.fall)-1; i++ {
			clk.t = clk.t.Add(TickTime)
			fc.Packet(mc.PacketMovePosition, posPayload(p, fc.fall[i], false))
		}
		fc.Packet(mc.PacketMovePosition, posPayload(p, GroundY+1, true))
		fc.Packet(mc.PacketKeepAlive, nil)
		if err := fc.Result(); err == nil || errors.Is(err, ErrPending) {
			t.Errorf("a fall without the %s passed: %v", name, err)
		}
	}
	// A client that never moves does not fail by itself: the caller's
	// deadlines end it.
	if fc, _, _ := check(p, 0); !errors.Is(fc.Result(), ErrPending) {
		t.Errorf("an idle client: %v", fc.Result())
	}
}

// A client that keeps reporting the height it was put at hovers: refused.
func TestFallCheckRefusesHovering(t *testing.T) {
	p := mc.V1_21_4
	c, clk, spawn := check(p, 0)
	c.Packet(mc.PacketTeleportConfirm, []byte{7})
	for range maxHovers + 1 {
		clk.t = clk.t.Add(TickTime)
		c.Packet(mc.PacketMovePosition, posPayload(p, spawn, false))
	}
	if err := c.Result(); !errors.Is(err, ErrNotFalling) {
		t.Fatalf("a hovering client: %v, want %v", err, ErrNotFalling)
	}
}
