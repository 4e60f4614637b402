package bench

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// Packet ids of the bench's own exchange once the player is in play. A
// relay passes them untouched; they are play packets that neither Infrarust
// nor Gate decodes at protocol 767 (query block NBT and lock difficulty up, animation down), so a
// proxy that reads every packet's id relays them as a client's would be.
const (
	idCommand int32 = 0x01 // client -> backend: one byte, cmdSink/cmdSource/cmdEcho/cmdIdle
	idCount   int32 = 0x03 // backend -> client: "ready" after the join and a command's go-ahead (empty), a sink's countPayload
	idEnd     int32 = 0x19 // client -> backend: the last frame of a sink; the count follows
)

// joinGame is the backend's Join Game at protocol 767: the first play packet,
// after configuration, which a full proxy decodes (Gate, and Infrarust for
// its server switches), so it must be a real one.
var joinGame = func() []byte {
	jg := mc.JoinGame{EntityID: 1, WorldNames: []string{"minecraft:overworld"}, MaxPlayers: 20, ViewDistance: 2, SimulationDistance: 2,
		EnableRespawnScreen: true, Spawn: mc.SpawnInfo{WorldName: "minecraft:overworld", PreviousGameMode: -1}}
	b, err := jg.AppendPayload(nil, clientProtocol)
	if err != nil {
		panic(fmt.Sprintf("bench: join game: %v", err)) // constant fields, valid at 767
	}
	return b
}()

// mcBackend is an offline-mode Minecraft server as an intercepting proxy sees
// one: it answers the handshake and Login Start with (optionally) Set
// Compression and Login Success, takes the Login Acknowledged, greets the
// client with one frame, then sinks, streams, echoes or idles on the client's
// command, all in framed form at its own compression threshold.
type mcBackend struct {
	ln        net.Listener
	threshold int     // -1: never sends Set Compression
	verify    bool    // decode every frame and compare it with playMix (tests)
	rate      float64 // MiB/s of packets a source streams at; 0: as fast as it can
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     map[net.Conn]struct{}
	logins    int64
}

func startMCBackend(threshold int, verify bool, rate float64) (*mcBackend, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &mcBackend{ln: ln, threshold: threshold, verify: verify, rate: rate, conns: map[net.Conn]struct{}{}}
	b.wg.Add(1)
	go b.accept()
	return b, nil
}

func (b *mcBackend) Addr() string { return b.ln.Addr().String() }

// Close stops accepting, closes every open connection and waits for them.
func (b *mcBackend) Close() {
	b.ln.Close()
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *mcBackend) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		b.mu.Lock()
		b.conns[c] = struct{}{}
		b.mu.Unlock()
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.serve(c)
			c.Close()
			b.mu.Lock()
			delete(b.conns, c)
			b.mu.Unlock()
		}()
	}
}

// loginTimeout bounds the login exchange; a relay session has no deadline.
const loginTimeout = 10 * time.Second

func (b *mcBackend) serve(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	_ = c.SetDeadline(time.Now().Add(loginTimeout))
	br := bufio.NewReaderSize(c, 4096) // small: thousands of idle sessions hold one
	hs, _, err := mc.ReadHandshake(br)
	if err != nil || hs.NextState != mc.StateLogin {
		return
	}
	p := mc.Protocol(hs.ProtocolVersion)
	reg, ok := mc.RegistryFor(p)
	if !ok {
		return
	}
	ls, _, err := mc.ReadLoginStart(br, hs.ProtocolVersion)
	if err != nil {
		return
	}
	conn := mc.NewConn(br, c, clientZlib)
	write := func(t mc.PacketType, payload []byte) error {
		id, _ := reg.ID(mc.LoginState, mc.Clientbound, t)
		return conn.WritePacket(id, payload)
	}
	if b.threshold >= 0 {
		if write(mc.PacketSetCompression, mc.SetCompression{Threshold: int32(b.threshold)}.AppendPayload(nil)) != nil {
			return
		}
		_ = conn.SetCompression(b.threshold)
	}
	id := auth.OfflineUUID(ls.Name)
	if ls.HasUUID {
		id = ls.UUID
	}
	if write(mc.PacketLoginSuccess, mc.LoginSuccess{UUID: id, Name: ls.Name}.AppendPayload(nil, p)) != nil {
		return
	}
	if p != clientProtocol {
		return // the join below is 767's
	}
	ack, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged)
	if f, err := conn.ReadFrame(); err != nil || f.ID != ack {
		return
	}
	// Configuration: none to send, so straight to Finish Configuration and
	// the client's acknowledgement (a full proxy may pass on what the client
	// sent before it: the brand, its settings).
	finish, _ := reg.ID(mc.ConfigState, mc.Clientbound, mc.PacketFinishConfiguration)
	finished, _ := reg.ID(mc.ConfigState, mc.Serverbound, mc.PacketFinishConfiguration)
	if conn.WritePacket(finish, nil) != nil {
		return
	}
	if _, err := readUntil(conn, finished, nil); err != nil {
		return
	}
	b.mu.Lock()
	b.logins++
	b.mu.Unlock()
	// Join Game, then the bench's "ready": a full proxy relays play packets
	// once it has taken the player to the server, and drops what the client
	// sends before (Gate), so the client waits for it, reading past what the
	// proxy adds to the join (titles cleared, a brand).
	join, _ := reg.ID(mc.PlayState, mc.Clientbound, mc.PacketJoinGame)
	if conn.WritePacket(join, joinGame) != nil || conn.WritePacket(idCount, nil) != nil {
		return
	}
	// The player is in: no deadline from here (a login cycle closes, a
	// session waits for its command however long a loaded proxy takes).
	_ = c.SetDeadline(time.Time{})
	// The client's command, past what a full proxy sends for the player on
	// the join (its brand, its settings).
	f, err := readUntil(conn, idCommand, nil)
	if err != nil || len(f.Payload) != 1 || conn.WritePacket(idCount, nil) != nil { // the go-ahead
		return
	}
	switch f.Payload[0] {
	case cmdSink:
		if frames, n, bad, ok := b.sink(conn, br); ok {
			_ = conn.WritePacket(idCount, countPayload(frames, n, bad))
		}
	case cmdSource:
		bt := batchFor(b.threshold)
		burst := bt.burst()
		p := pacer{start: time.Now(), rate: b.rate, per: bt.packetBytes}
		for {
			k := p.next()
			if _, err := c.Write(burst[:k*len(bt.wire)]); err != nil {
				return
			}
			p.wrote(k)
		}
	case cmdEcho:
		for {
			f, err := conn.ReadRaw()
			if err != nil {
				return
			}
			if id, err := conn.PeekID(f); err == nil && id == idCommand {
				continue // a command sent again (see mcClient.command)
			}
			if conn.WriteRaw(f) != nil {
				return
			}
		}
	case cmdIdle:
		for {
			if _, err := br.ReadByte(); err != nil {
				return
			}
		}
	}
}

// readUntil reads frames until one with id and returns it, past at most 32
// others (what a full proxy adds to a join: a brand, settings, titles
// cleared); stop, when set, fails the read on a frame (a kick).
func readUntil(conn *mc.Conn, id int32, stop func(mc.Frame) error) (mc.Frame, error) {
	for range 33 {
		f, err := conn.ReadFrame()
		if err != nil || f.ID == id {
			return f, err
		}
		if stop != nil {
			if err := stop(f); err != nil {
				return f, err
			}
		}
	}
	return mc.Frame{}, fmt.Errorf("no packet 0x%02x in 32 frames", id)
}

// sink reads frames until the client's end marker and counts them: cheaply by
// their headers, or (verify) decoded and compared with playMix. ok is false
// when the connection ended before the marker. The client ends with a frame,
// not a half-close, because a proxy gives the other direction only a few
// seconds after one side closes, and a slow sink (-race, verify) needs more.
func (b *mcBackend) sink(conn *mc.Conn, br *bufio.Reader) (frames, bytes, bad int64, ok bool) {
	if b.verify {
		for {
			f, err := conn.ReadFrame()
			if err != nil {
				return frames, bytes, bad, false
			}
			if f.ID == idEnd {
				return frames, bytes, bad, true
			}
			if f.ID == idCommand {
				continue // a command sent again (see mcClient.command)
			}
			if !checkPacket(int(frames), f.ID, f.Payload) {
				bad++
			}
			frames++
			bytes += int64(mc.VarIntSize(f.ID) + len(f.Payload))
		}
	}
	big := bufio.NewReaderSize(br, 64<<10) // reads through br, which holds no more than 4 KiB
	for {
		n, id, err := skipFrame(big, b.threshold)
		if err != nil {
			return frames, bytes, bad, false
		}
		if id == idEnd {
			return frames, bytes, bad, true
		}
		if id == idCommand {
			continue // a command sent again (see mcClient.command)
		}
		frames++
		bytes += int64(n)
	}
}
