package limbo

import (
	"bufio"
	"compress/zlib"
	"io"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// testClient is the client end of a limbo connection over real TCP: it
// reads frames in the background so the limbo's writes never block on it.
type testClient struct {
	t        *testing.T
	written  *countingWriter // bytes the limbo wrote
	received atomic.Int64    // bytes of the frames the reader took off the wire
	conn     *mc.Conn
	net      net.Conn
	reg      *mc.Registry
	state    mc.State
	frames   chan mc.Frame
}

var testZlib = func() *mc.Zlib {
	z, err := mc.NewZlib(zlib.BestSpeed)
	if err != nil {
		panic(err)
	}
	return z
}()

// pair connects a Player (server end) and a testClient over 127.0.0.1, both
// in state, with compression on at threshold (-1: off).
func pair(t *testing.T, p mc.Protocol, state mc.State, threshold int) (*Player, *testClient) {
	t.Helper()
	reg, ok := mc.RegistryFor(p)
	if !ok {
		t.Fatalf("no registry for %v", p)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { cc.Close(); sc.Close() })
	cw := &countingWriter{w: sc}
	player := &Player{Conn: mc.NewConn(bufio.NewReader(sc), cw, testZlib), Net: sc, Registry: reg, State: state}
	tc := &testClient{t: t, written: cw, conn: mc.NewConn(bufio.NewReader(cc), cc, testZlib), net: cc, reg: reg, state: state, frames: make(chan mc.Frame, 4096)}
	if threshold >= 0 {
		if err := player.Conn.SetCompression(threshold); err != nil {
			t.Fatal(err)
		}
		if err := tc.conn.SetCompression(threshold); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		defer close(tc.frames)
		for {
			f, err := tc.conn.ReadFrame()
			if err != nil {
				return
			}
			tc.frames <- f
			tc.received.Add(int64(len(f.Raw)))
		}
	}()
	return player, tc
}

// next returns the next frame the limbo sent, failing after 5 s.
func (c *testClient) next() mc.Frame {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatal("connection closed while a packet was expected")
		}
		return f
	case <-time.After(5 * time.Second):
		c.t.Fatal("no packet within 5 s")
	}
	return mc.Frame{}
}

// expect reads the next frame and checks it is packet ty of the client's state.
func (c *testClient) expect(ty mc.PacketType) mc.Frame {
	c.t.Helper()
	f := c.next()
	if got, ok := c.reg.Type(c.state, mc.Clientbound, f.ID); !ok || got != ty {
		c.t.Fatalf("%v %s: got packet 0x%02X (%v), want %s", c.reg.Protocol(), c.state, f.ID, got, ty)
	}
	return f
}

// nextOf skips frames until one of packet ty arrives.
func (c *testClient) nextOf(ty mc.PacketType) mc.Frame {
	c.t.Helper()
	for range 1000 {
		f := c.next()
		if got, ok := c.reg.Type(c.state, mc.Clientbound, f.ID); ok && got == ty {
			return f
		}
	}
	c.t.Fatalf("no %s among 1000 packets", ty)
	return mc.Frame{}
}

// quiet checks the limbo wrote nothing the test has not read: it first waits
// until every frame written so far has arrived.
func (c *testClient) quiet() {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.received.Load() < c.written.n.Load() {
		if time.Now().After(deadline) {
			c.t.Fatalf("%d bytes written, %d arrived", c.written.n.Load(), c.received.Load())
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case f, ok := <-c.frames:
		if ok {
			got, _ := c.reg.Type(c.state, mc.Clientbound, f.ID)
			c.t.Fatalf("unexpected packet 0x%02X (%v)", f.ID, got)
		}
	default:
	}
}

func (c *testClient) send(ty mc.PacketType, payload []byte) {
	c.t.Helper()
	id, ok := c.reg.ID(c.state, mc.Serverbound, ty)
	if !ok {
		c.t.Fatalf("%v has no serverbound %s in %s", c.reg.Protocol(), ty, c.state)
	}
	if err := c.conn.WritePacket(id, payload); err != nil {
		c.t.Fatal(err)
	}
}

// sendRaw writes a packet by id (one the limbo does not know, like movement).
func (c *testClient) sendRaw(id int32, payload []byte) {
	c.t.Helper()
	if err := c.conn.WritePacket(id, payload); err != nil {
		c.t.Fatal(err)
	}
}

// join plays the client's side of Enter: configuration (answering known
// packs with answer), then the world packets; it returns the join game and
// the registry data packets received.
func (c *testClient) join(answer []mc.KnownPack) (mc.JoinGame, []mc.RegistryData, mc.PlayerPosition) {
	c.t.Helper()
	p := c.reg.Protocol()
	var regs []mc.RegistryData
	if c.state == mc.ConfigState {
		if p.AtLeast(mc.V1_20_5) {
			c.expect(mc.PacketKnownPacks)
			c.send(mc.PacketKnownPacks, mc.KnownPacks{Packs: answer}.AppendPayload(nil))
		}
		for {
			f := c.next()
			ty, _ := c.reg.Type(mc.ConfigState, mc.Clientbound, f.ID)
			if ty == mc.PacketFinishConfiguration {
				break
			}
			if ty != mc.PacketRegistryData {
				c.t.Fatalf("%v: %v in configuration", p, ty)
			}
			d, err := mc.DecodeRegistryData(f.Payload, p)
			if err != nil {
				c.t.Fatalf("%v: registry data: %v", p, err)
			}
			regs = append(regs, d)
		}
		c.send(mc.PacketFinishConfiguration, nil)
		c.state = mc.PlayState
	}
	jg, err := mc.DecodeJoinGame(c.expect(mc.PacketJoinGame).Payload, p)
	if err != nil {
		c.t.Fatalf("%v: join game: %v", p, err)
	}
	pos, err := mc.DecodePlayerPosition(c.expect(mc.PacketPlayerPosition).Payload, p)
	if err != nil {
		c.t.Fatalf("%v: position: %v", p, err)
	}
	if _, err := mc.DecodeSpawnPosition(c.expect(mc.PacketSpawnPosition).Payload, p); err != nil {
		c.t.Fatalf("%v: spawn position: %v", p, err)
	}
	if p.AtLeast(mc.V1_20_3) {
		ev, err := mc.DecodeGameEvent(c.expect(mc.PacketGameEvent).Payload)
		if err != nil || ev.Event != mc.GameEventStartWaitingForChunks {
			c.t.Fatalf("%v: game event %+v %v", p, ev, err)
		}
	}
	return jg, regs, pos
}

// countingWriter counts the bytes the limbo wrote (no encryption in these
// tests, so they are the frames' bytes).
type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// fakeClock runs AfterFunc callbacks only when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Stopper {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// Advance moves the clock and runs, in order and synchronously, every
// callback that falls due (including ones they schedule within the window).
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		var due *fakeTimer
		for i, t := range c.timers {
			if !t.stopped && !t.at.After(end) {
				due = t
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				break
			}
		}
		if due == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		if due.at.After(c.now) {
			c.now = due.at
		}
		c.mu.Unlock()
		due.f()
	}
}

// pendingTimers counts callbacks not yet run or stopped.
func (c *fakeClock) pendingTimers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}
