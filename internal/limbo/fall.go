package limbo

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// FallCheck watches a client put in a world with ground (World.Ground) and
// tells whether it behaves as a vanilla client does: it has sent its
// settings and brand (as vanilla does on joining), it confirms the
// teleport that placed it (1.9+), then reports positions that fall under
// vanilla's gravity (each tick the fall speed loses 0.08 block/tick and keeps
// 98 % of itself), airborne all the way, until it stands on the platform
// (feet at GroundY+1, on ground), and it answers keep-alives. A client that
// does not simulate physics (a bot that never moves, one that reports
// made-up positions) fails; a real one passes within a second or two.
type FallCheck struct {
	proto    mc.Protocol
	fall     []float64 // the expected height after each tick: fall[0] is where the player was put
	teleport int32     // the id the client must confirm (1.9+)
	now      func() time.Time

	mu        sync.Mutex
	confirmed bool // the teleport was confirmed (1.9+; 1.8 has none)
	answered  bool // a keep-alive was answered
	settings  bool // the client sent its settings (client information)
	brand     bool // and its brand
	y         float64
	tick      int // index in the expected fall of the last position
	landed    bool
	moves     int
	hovers    int       // the same height in the air, reported again
	started   time.Time // when the first height below the spawn came
	startTick int       // its tick
	err       error
	done      chan struct{}
	moved     chan struct{} // closed at the first movement packet
	progress  chan struct{} // signalled at every movement packet
}

// Reasons a FallCheck fails, for metrics and logs.
var (
	ErrNoTeleportConfirm = errors.New("moved before confirming the teleport")
	ErrNotFalling        = errors.New("positions that do not follow gravity")
	ErrLandedWrong       = errors.New("did not land on the platform")
	ErrTooManyMoves      = errors.New("too many movement packets")
	ErrNoSettings        = errors.New("no client settings")
	ErrNoBrand           = errors.New("no client brand")
	ErrTooFast           = errors.New("fell faster than real time (a replay)")
	ErrWrongTeleport     = errors.New("confirmed a teleport it was not sent")
)

// fallTolerance is how far a reported height may be from vanilla's: the
// client computes in doubles, the same steps.
const fallTolerance = 1e-3

// maxMoves bounds the packets a check reads before giving up on a client.
const maxMoves = 400

// maxHovers bounds how often a client may report a height in the air again:
// vanilla repeats its spawn position once or twice while its first tick of
// gravity comes.
const maxHovers = 5

// TickTime is a client tick: vanilla and mineflayer move 20 times a second.
const TickTime = 50 * time.Millisecond

// minPace is how much of the real time its ticks take a fall must take at
// least: a client's packets arrive with the jitter of a real network, never
// all at once (a replay computed in advance does).
const minPace = 0.5

// fallFrom is the expected height after each tick of a fall from y: [0] is
// y, [i] the height after i ticks of free fall, the last at the platform or
// below it.
func fallFrom(y float64) []float64 {
	ys := []float64{y}
	v := 0.0
	for y > GroundY+1 {
		v = (v - 0.08) * 0.98
		y += v
		ys = append(ys, y)
	}
	return ys
}

// FallOptions say where a check's player was put.
type FallOptions struct {
	// Height is how far above the platform (World.FallHeight); 0 means GroundFall.
	Height float64
	// TeleportID is the teleport the client must confirm (World.TeleportID);
	// 0 means 1.
	TeleportID int32
	// Now is the clock of the pace check; nil means time.Now.
	Now func() time.Time
}

// NewFallCheck starts a check of a client of protocol p.
func NewFallCheck(p mc.Protocol, o FallOptions) *FallCheck {
	h := o.Height
	if h <= 0 {
		h = GroundFall
	}
	spawn := GroundY + 1 + min(h, MaxFallHeight)
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &FallCheck{proto: p, fall: fallFrom(spawn), teleport: cmp.Or(o.TeleportID, 1), now: now,
		confirmed: p.Before(mc.V1_9), y: spawn, done: make(chan struct{}), moved: make(chan struct{}), progress: make(chan struct{}, 1)}
}

// Progress is signalled at every movement packet: a client that stops
// sending them has stopped playing.
func (c *FallCheck) Progress() <-chan struct{} { return c.progress }

// Types are the packets the check reads (Watch.Types).
func (c *FallCheck) Types() []mc.PacketType {
	return []mc.PacketType{mc.PacketTeleportConfirm, mc.PacketMovePosition, mc.PacketMovePositionLook,
		mc.PacketMoveLook, mc.PacketMoveStatus, mc.PacketKeepAlive, mc.PacketClientInformation, mc.PacketPluginMessage}
}

// Moved is closed when the client sent its first movement packet: a real
// client does within a moment of getting the world, an idle bot never.
func (c *FallCheck) Moved() <-chan struct{} { return c.moved }

func (c *FallCheck) movedLocked() {
	select {
	case <-c.moved:
	default:
		close(c.moved)
	}
}

// Done is closed when the check has passed or failed.
func (c *FallCheck) Done() <-chan struct{} { return c.done }

// Result is nil once passed, the reason once failed; ErrPending before.
func (c *FallCheck) Result() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return c.err
	default:
		return ErrPending
	}
}

// ErrPending: the check has not decided yet.
var ErrPending = errors.New("verification not finished")

func (c *FallCheck) finishLocked(err error) {
	select {
	case <-c.done:
		return
	default:
	}
	c.err = err
	close(c.done)
}

// Packet feeds one packet the client sent (Watch.Packet).
func (c *FallCheck) Packet(t mc.PacketType, payload []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return
	default:
	}
	switch t {
	case mc.PacketKeepAlive:
		c.answered = true
	case mc.PacketClientInformation:
		c.settings = true
	case mc.PacketPluginMessage:
		c.brand = true
	case mc.PacketTeleportConfirm:
		if id, err := mc.ReadVarInt(bytes.NewReader(payload)); err != nil || id != c.teleport {
			c.finishLocked(ErrWrongTeleport)
			return
		}
		c.confirmed = true
	case mc.PacketMovePosition, mc.PacketMovePositionLook, mc.PacketMoveLook, mc.PacketMoveStatus:
		c.movedLocked()
		select {
		case c.progress <- struct{}{}:
		default:
		}
		c.moves++
		if c.moves > maxMoves {
			c.finishLocked(ErrTooManyMoves)
			return
		}
		if !c.confirmed {
			c.finishLocked(ErrNoTeleportConfirm)
			return
		}
		if t == mc.PacketMoveLook || t == mc.PacketMoveStatus {
			break // they carry no position
		}
		y, onGround, err := c.decode(t, payload)
		if err != nil {
			c.finishLocked(fmt.Errorf("%w: %v", ErrProtocol, err))
			return
		}
		c.position(y, onGround)
	}
	if c.landed && c.answered {
		// Vanilla sends its settings and brand as it joins, long before it lands.
		switch {
		case !c.settings:
			c.finishLocked(ErrNoSettings)
		case !c.brand:
			c.finishLocked(ErrNoBrand)
		default:
			c.finishLocked(nil)
		}
	}
}

// position checks one reported height against the expected fall: it must be
// the height after a later tick (a client may skip a tick's packet, not
// invent one), or the platform once the fall reaches it; and the fall must
// take, in real time, at least minPace of its ticks' time.
func (c *FallCheck) position(y float64, onGround bool) {
	fall := c.fall
	if c.landed {
		if math.Abs(y-(GroundY+1)) > fallTolerance || !onGround {
			c.finishLocked(ErrLandedWrong) // left the platform: no vanilla client does in a second
		}
		return
	}
	if math.Abs(y-c.y) < fallTolerance && !onGround {
		// The same height again (the first tick after spawning); a client that
		// keeps reporting it hovers, which gravity does not allow.
		if c.hovers++; c.hovers > maxHovers {
			c.finishLocked(ErrNotFalling)
		}
		return
	}
	for i := c.tick + 1; i < len(fall) && i <= c.tick+5; i++ {
		last := i == len(fall)-1
		switch {
		case last && math.Abs(y-(GroundY+1)) < fallTolerance:
			// The last tick's step is cut short by the platform.
			if !onGround {
				c.finishLocked(ErrLandedWrong)
				return
			}
			if c.tooFast(i) {
				c.finishLocked(ErrTooFast)
				return
			}
			c.landed, c.y, c.tick = true, y, i
			return
		case !last && math.Abs(y-fall[i]) < fallTolerance:
			if onGround {
				c.finishLocked(ErrLandedWrong) // on ground in the air
				return
			}
			if c.started.IsZero() {
				c.started, c.startTick = c.now(), i
			}
			c.y, c.tick = y, i
			return
		}
	}
	c.finishLocked(ErrNotFalling)
}

// tooFast reports that the fall from its first height below the spawn to
// tick took less real time than minPace of its ticks.
func (c *FallCheck) tooFast(tick int) bool {
	if c.started.IsZero() {
		return true // landed without falling through the air: no client does
	}
	want := time.Duration(float64(tick-c.startTick) * float64(TickTime) * minPace)
	return c.now().Sub(c.started) < want
}

// decode reads the height and on-ground flag of a position packet: x, feet
// y, z as doubles (rotation after them in position-look), then on-ground (a
// flags byte from 1.21.2 whose bit 0 it is).
func (c *FallCheck) decode(t mc.PacketType, b []byte) (y float64, onGround bool, err error) {
	n := 24
	if t == mc.PacketMovePositionLook {
		n += 8
	}
	if len(b) < n+1 {
		return 0, false, fmt.Errorf("%s of %d bytes", t, len(b))
	}
	y = math.Float64frombits(binary.BigEndian.Uint64(b[8:16]))
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return 0, false, fmt.Errorf("%s with y %v", t, y)
	}
	return y, b[n]&1 != 0, nil
}
