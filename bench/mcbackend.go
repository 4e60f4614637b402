package bench

import (
	"bufio"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// Packet ids of the bench's own post-login exchange. The relay passes frames
// without looking at them, so any id works; these name what the frame is.
const (
	idGreeting int32 = 0x01 // backend -> client, right after the login
	idCommand  int32 = 0x02 // client -> backend: one byte, cmdSink/cmdSource/cmdEcho/cmdIdle
	idCount    int32 = 0x03 // backend -> client: the sink's countPayload
	idEnd      int32 = 0x04 // client -> backend: the last frame of a sink; the count follows

)

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
	if p.AtLeast(mc.V1_20_2) {
		ack, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged)
		if f, err := conn.ReadFrame(); err != nil || f.ID != ack {
			return
		}
	}
	b.mu.Lock()
	b.logins++
	b.mu.Unlock()
	if conn.WritePacket(idGreeting, []byte("bench")) != nil {
		return
	}
	f, err := conn.ReadFrame()
	if err != nil || f.ID != idCommand || len(f.Payload) != 1 {
		return // a login cycle closes here
	}
	_ = c.SetDeadline(time.Time{})
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
			if err != nil || conn.WriteRaw(f) != nil {
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
		frames++
		bytes += int64(n)
	}
}
