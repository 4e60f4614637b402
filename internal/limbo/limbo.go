// Package limbo holds players in a void world hosted by the proxy itself:
// while their server wakes up, while they wait in a queue, or after their
// server went away. It speaks every version from 1.7.2 to mc.NewestLayout
// (26.1) whose registry data it has: 1.7.2–1.15.2 need none, 1.16–1.21.4,
// 1.21.11 and 26.1 are bundled, 1.21.5–1.21.10 are served once a backend of
// that version taught their registries (Registries.LearnConfiguration); 26.2
// and 26.3 have no packet layout source yet (mc.ErrNoLayout).
//
// A session uses it in three steps, on a client whose login is done:
//
//	p := &limbo.Player{Conn: c, Net: netConn, Registry: reg, State: state}
//	limbo.Enter(p, limbo.World{})        // configuration (1.20.2+), join game, position
//	err := limbo.Hold(ctx, p, opts)      // keep-alives and messages until ctx ends
//	// ctx ended: the client is in play in the limbo, at a frame boundary.
//	// Into a backend: 1.20.2+ limbo.StartConfiguration(p), then relay the
//	// backend's configuration; older: limbo.Rejoin(p, backendJoinGame).
//
// The package holds no goroutine of its own: Hold runs in the caller's and
// wakes itself with timers; a held player costs a few hundred bytes beyond
// its connection. Registry data is shared by every player.
package limbo

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// Player is one client as the limbo drives it.
type Player struct {
	// Conn is the client's framed connection (compression and encryption on
	// as the login left them).
	Conn *mc.Conn
	// Net is the socket under Conn: the limbo sets its deadlines while it
	// holds the player and clears them before returning.
	Net net.Conn
	// Writer, when set, is the lock every write to the client takes (the
	// session's one writer, which also bounds the write with its deadline):
	// the hold's keep-alives and titles take it, so a line the proxy tells the
	// player meanwhile never splits a frame. Without one the hold bounds its
	// writes with deadlines of its own (HoldOptions.WriteTimeout).
	Writer sync.Locker
	// Registry is the client's protocol.
	Registry *mc.Registry
	// State is where the client's protocol state machine is: configuration
	// (a 1.20.2+ login just acknowledged) or play. The limbo updates it.
	State mc.State
	// Spawned says the client is in a world already (it got a join game since
	// its login), so entering the limbo must reset that world first. Enter
	// sets it; a session sets it once it relayed a backend's join game.
	Spawned bool

	// ClientInformation is the payload of the last client information
	// (locale, view distance, skin parts) the client sent while the limbo
	// read its packets, in the layout of the state it came in (the same in
	// configuration and play). Vanilla clients send it once after login, so a
	// session replays it to the next backend, which otherwise never learns it.
	ClientInformation []byte
	// Brand is the last brand plugin message payload the client sent
	// (minecraft:brand; MC|Brand before 1.13), to replay the same way.
	Brand []byte
}

// remember keeps the client's settings and brand out of a frame the limbo
// would otherwise drop; id is the frame's packet id in the current state.
func (p *Player) remember(id int32, raw mc.RawFrame) error {
	info, okInfo := p.Registry.ID(p.State, mc.Serverbound, mc.PacketClientInformation)
	plugin, okPlugin := p.Registry.ID(p.State, mc.Serverbound, mc.PacketPluginMessage)
	if !(okInfo && id == info) && !(okPlugin && id == plugin) {
		return nil
	}
	f, err := p.Conn.Decode(raw)
	if err != nil {
		return err
	}
	if okInfo && id == info {
		p.ClientInformation = append(p.ClientInformation[:0], f.Payload...)
		return nil
	}
	m, err := mc.DecodePluginMessage(f.Payload, p.Protocol())
	if err != nil {
		return fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	if m.Channel == "minecraft:brand" || m.Channel == "MC|Brand" {
		p.Brand = append(p.Brand[:0], m.Data...)
	}
	return nil
}

// World chooses the limbo a player enters.
type World struct {
	// Registries is where registry data comes from; nil means DefaultRegistries.
	Registries *Registries
	// Dimension is the sky shown (TheEnd by default).
	Dimension Dimension
	// Ground puts a stone platform under the player, who is in adventure
	// mode a few blocks above it and falls onto it under the client's own
	// physics (bot verification). Only where GroundCovers the version.
	Ground bool
	// FallHeight is how far above the platform the player is put (blocks,
	// at most MaxFallHeight); 0 means GroundFall. A check picks it at random
	// per attempt, so a fall cannot be computed before the world arrives.
	FallHeight float64
	// TeleportID is the id of the teleport that places the player (the
	// client confirms it, 1.9+); 0 means 1.
	TeleportID int32
}

// ErrProtocol marks a client that sent something the limbo's exchange does
// not allow (a wrong packet where an answer belongs).
var ErrProtocol = errors.New("limbo: client broke the protocol")

// Protocol is the player's protocol version.
func (p *Player) Protocol() mc.Protocol { return p.Registry.Protocol() }

// write sends one packet of type t in the player's current state.
func (p *Player) write(t mc.PacketType, payload []byte) error {
	id, ok := p.Registry.ID(p.State, mc.Clientbound, t)
	if !ok {
		return fmt.Errorf("limbo: %v has no %s packet in %s", p.Protocol(), t, p.State)
	}
	return p.Conn.WritePacket(id, payload)
}

// Send writes packets (from the mc encoders: a switch's cleanup, a join game
// sequence) in the player's current state, all in one write.
func Send(p *Player, pks ...mc.Packet) error {
	out, err := p.frames(nil, pks...)
	if err != nil {
		return err
	}
	return p.Conn.WritePackets(out...)
}

// frames resolves the ids of packets in the player's current state.
func (p *Player) frames(dst []mc.OutPacket, pks ...mc.Packet) ([]mc.OutPacket, error) {
	for _, pk := range pks {
		id, ok := p.Registry.ID(p.State, mc.Clientbound, pk.Type)
		if !ok {
			return nil, fmt.Errorf("limbo: %v has no %s packet in %s", p.Protocol(), pk.Type, p.State)
		}
		dst = append(dst, mc.OutPacket{ID: id, Payload: pk.Payload})
	}
	return dst, nil
}

// Enter puts the player in the limbo's void world. A client in configuration
// (a 1.20.2+ login) is configured with the limbo's registries; a 1.20.2+
// client in play is first taken back to configuration (the fallback from a
// server that went away); an older client in a world gets the join game that
// resets it (the dimension flip before 1.16). Then come the position above
// the build height, the spawn point and, from 1.20.3, "start waiting for
// chunks", after which the client shows the world. The caller bounds Enter
// with a deadline on Net (it waits for the client's answers).
func Enter(p *Player, w World) error {
	reg := w.Registries
	if reg == nil {
		reg = DefaultRegistries
	}
	proto := p.Protocol()
	wd, err := reg.world(proto, w.Dimension, w.Ground)
	if err != nil {
		return err
	}
	path := wd.direct
	switch {
	case p.State != mc.ConfigState && p.State != mc.PlayState:
		return fmt.Errorf("limbo: cannot enter from the %s state", p.State)
	case proto.AtLeast(mc.V1_20_2):
		if p.State == mc.PlayState {
			if err := StartConfiguration(p); err != nil {
				return err
			}
		}
		if path, err = configure(p, wd); err != nil {
			return err
		}
		err = p.write(mc.PacketJoinGame, path.joinBytes)
	case p.State == mc.ConfigState:
		return fmt.Errorf("limbo: %v has no configuration state", proto)
	case p.Spawned:
		var seq []mc.Packet
		if seq, err = path.join.SwitchSequence(proto); err == nil {
			err = Send(p, seq...)
		}
	default:
		err = p.write(mc.PacketJoinGame, path.joinBytes)
	}
	if err != nil {
		return err
	}
	p.Spawned = true
	y := path.y
	if path.chunk != nil && w.FallHeight > 0 {
		y = GroundY + 1 + min(w.FallHeight, MaxFallHeight)
	}
	return place(p, path, y, cmp.Or(w.TeleportID, 1))
}

// place sends what follows join game: the position (ends the loading screen
// before 1.19), the spawn point (1.19–1.20.2) and the chunk wait (1.20.3+).
func place(p *Player, path *regPath, y float64, teleport int32) error {
	proto := p.Protocol()
	x := 0.5
	if path.chunk != nil {
		// The ground first, so the client stands over loaded blocks.
		if proto.AtLeast(mc.V1_14) {
			if err := p.write(mc.PacketSetCenterChunk, []byte{0, 0}); err != nil {
				return err
			}
		}
		if err := p.write(mc.PacketChunkData, path.chunk); err != nil {
			return err
		}
		x = groundCentre
	}
	pos, err := mc.PlayerPosition{X: x, Y: y, Z: x, TeleportID: teleport}.AppendPayload(nil, proto)
	if err != nil {
		return err
	}
	if err := p.write(mc.PacketPlayerPosition, pos); err != nil {
		return err
	}
	spawn, err := mc.SpawnPosition{Y: int32(y), Dimension: path.join.Spawn.WorldName}.AppendPayload(nil, proto)
	if err != nil {
		return err
	}
	if err := p.write(mc.PacketSpawnPosition, spawn); err != nil {
		return err
	}
	if proto.AtLeast(mc.V1_20_3) {
		ev := mc.GameEvent{Event: mc.GameEventStartWaitingForChunks}
		return p.write(mc.PacketGameEvent, ev.AppendPayload(nil))
	}
	return nil
}

// configure runs the configuration exchange: known packs (1.20.5+),
// registries, finish; it returns the path whose join game matches what the
// client was sent.
func configure(p *Player, wd *world) (*regPath, error) {
	proto := p.Protocol()
	path := wd.direct
	if proto.AtLeast(mc.V1_20_5) {
		if err := p.write(mc.PacketKnownPacks, wd.offer); err != nil {
			return nil, err
		}
		f, err := awaitPacket(p, mc.PacketKnownPacks)
		if err != nil {
			return nil, err
		}
		answer, err := mc.DecodeKnownPacks(f.Payload)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
		}
		path = wd.full
		if wd.lean != nil && knowsAll(answer.Packs, wd.packs) {
			path = wd.lean
		}
		if path == nil {
			return nil, fmt.Errorf("%w: %v client does not know the packs the learnt registries rely on", ErrNoRegistries, proto)
		}
	}
	for _, payload := range path.registries {
		if err := p.write(mc.PacketRegistryData, payload); err != nil {
			return nil, err
		}
	}
	if err := p.write(mc.PacketFinishConfiguration, nil); err != nil {
		return nil, err
	}
	if _, err := awaitPacket(p, mc.PacketFinishConfiguration); err != nil {
		return nil, err
	}
	p.State = mc.PlayState
	return path, nil
}

// knowsAll reports whether the client's answer covers what the entries rely
// on. Bundled data offers vanilla's core pack under each release name of the
// protocol and needs any one of them; learnt data needs every pack.
func knowsAll(answer, offered []mc.KnownPack) bool {
	allCore := true
	for _, o := range offered {
		allCore = allCore && o.IsCore()
	}
	if allCore {
		for _, a := range answer {
			for _, o := range offered {
				if a == o {
					return true
				}
			}
		}
		return false
	}
	for _, o := range offered {
		found := false
		for _, a := range answer {
			found = found || a == o
		}
		if !found {
			return false
		}
	}
	return true
}

// StartConfiguration takes a 1.20.2+ client in play back to configuration:
// start configuration, then everything the client still sends in play until
// its acknowledgement. A switch calls it before relaying the next backend's
// configuration; Enter calls it for a client coming from a backend.
func StartConfiguration(p *Player) error {
	if p.Protocol().Before(mc.V1_20_2) {
		return fmt.Errorf("limbo: %v has no configuration state", p.Protocol())
	}
	if p.State != mc.PlayState {
		return fmt.Errorf("limbo: start configuration from the %s state", p.State)
	}
	if err := p.write(mc.PacketStartConfiguration, nil); err != nil {
		return err
	}
	if _, err := awaitPacket(p, mc.PacketConfigurationAck); err != nil {
		return err
	}
	p.State = mc.ConfigState
	return nil
}

// Rejoin moves a client from the limbo (or any world) into a backend's world
// before 1.20.2: it writes the join game sequence of jg (see
// mc.JoinGame.SwitchSequence). From 1.20.2 the backend's join game follows
// its configuration and is relayed as is.
func Rejoin(p *Player, jg mc.JoinGame) error {
	if p.State != mc.PlayState {
		return fmt.Errorf("limbo: rejoin from the %s state", p.State)
	}
	var seq []mc.Packet
	var err error
	if p.Spawned {
		seq, err = jg.SwitchSequence(p.Protocol())
	} else {
		var payload []byte
		payload, err = jg.AppendPayload(nil, p.Protocol())
		seq = []mc.Packet{{Type: mc.PacketJoinGame, Payload: payload}}
	}
	if err != nil {
		return err
	}
	if err := Send(p, seq...); err != nil {
		return err
	}
	p.Spawned = true
	return nil
}

// maxSkippedPackets bounds how many other packets a client may send while the
// limbo waits for an answer (settings, brand, positions, keep-alive answers).
const maxSkippedPackets = 4096

// awaitPacket reads until the client sends packet t in its current state,
// dropping everything else; the caller's deadline bounds the wait.
func awaitPacket(p *Player, t mc.PacketType) (mc.Frame, error) {
	want, ok := p.Registry.ID(p.State, mc.Serverbound, t)
	if !ok {
		return mc.Frame{}, fmt.Errorf("limbo: %v has no serverbound %s in %s", p.Protocol(), t, p.State)
	}
	for range maxSkippedPackets {
		raw, err := p.Conn.ReadRaw()
		if err != nil {
			return mc.Frame{}, fmt.Errorf("limbo: waiting for %s: %w", t, err)
		}
		id, err := p.Conn.PeekID(raw)
		if err != nil {
			return mc.Frame{}, err
		}
		if id == want {
			return p.Conn.Decode(raw)
		}
		if err := p.remember(id, raw); err != nil {
			return mc.Frame{}, err
		}
	}
	return mc.Frame{}, fmt.Errorf("%w: %d packets without %s", ErrProtocol, maxSkippedPackets, t)
}

// Kick disconnects the player with text, in the packet its current state
// reads (login, configuration or play), and half-closes the socket so the
// kick arrives before the close.
func Kick(p *Player, text string) error {
	payload, err := mc.DisconnectText(text).AppendPayload(nil, p.Protocol(), p.State)
	if err != nil {
		return err
	}
	if err := p.write(mc.PacketDisconnect, payload); err != nil {
		return err
	}
	if hc, ok := p.Net.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return nil
}
