package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/bungeechannel"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// playBackend is a 1.20.2+ offline-mode server that keeps players: it finishes
// their configuration, then in play sends "hello from <name>" as a plugin message
// every 50 ms and echoes the plugin messages it gets. Its players can be made to
// go silent (a stall), be kicked, or have their connection closed.
type playBackend struct {
	name   string
	addr   string
	silent atomic.Bool // stop writing (a hung server)
	mu     sync.Mutex
	conns  []net.Conn
	joined atomic.Int64
	info   atomic.Int64 // client information packets received (the replay on a switch)
	bungee chan []byte  // BungeeCord channel messages received (the proxy's replies)
	play   []*mc.Conn   // players in play, for sending them packets
	order  []string     // players in the order they got into play
	// arrived gets the name of each player who gets into play, when there is
	// room (a benchmark's "the switch is complete").
	arrived chan string
	// maxPlay refuses logins while that many players are in play (0: no limit).
	maxPlay int
	ln      net.Listener
}

// stop takes the server down: no more listening, every connection dropped.
func (b *playBackend) stop() {
	b.ln.Close()
	b.closeAll()
}

// toPlayers sends a plugin message to every player in play, as a plugin on the
// server would (a BungeeCord channel request, for instance).
func (b *playBackend) toPlayers(channel string, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	reg, _ := mc.RegistryFor(modernProtocol)
	id, _ := reg.ID(mc.PlayState, mc.Clientbound, mc.PacketPluginMessage)
	payload, _ := mc.PluginMessage{Channel: channel, Data: data}.AppendPayload(nil, modernProtocol)
	for _, c := range b.play {
		_ = c.WritePacket(id, payload)
	}
}

func startPlayBackend(t testing.TB, name string) *playBackend {
	t.Helper()
	return startPlayBackendAt(t, "127.0.0.1:0", name, 0)
}

// startPlayBackendAt is startPlayBackend on addr, refusing logins with "The
// server is full!" while maxPlay players are in play (0: no limit).
func startPlayBackendAt(t testing.TB, addr, name string, maxPlay int) *playBackend {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	b := &playBackend{name: name, addr: ln.Addr().String(), bungee: make(chan []byte, 16), arrived: make(chan string, 16), maxPlay: maxPlay, ln: ln}
	z, _ := mc.NewZlib(-1)
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns = append(b.conns, c)
			b.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				b.serve(c, z)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); b.closeAll(); wg.Wait() })
	return b
}

func (b *playBackend) closeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
}

func (b *playBackend) kickAll(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		d, _ := mc.DisconnectText(text).AppendPayload(nil, modernProtocol, mc.PlayState)
		reg, _ := mc.RegistryFor(modernProtocol)
		id, _ := reg.ID(mc.PlayState, mc.Clientbound, mc.PacketDisconnect)
		_, _ = c.Write(mc.AppendFrame(nil, id, d))
		c.Close()
	}
}

func (b *playBackend) serve(c net.Conn, z *mc.Zlib) {
	br := bufio.NewReader(c)
	hs, _, err := mc.ReadHandshake(br)
	if err != nil {
		return
	}
	p := mc.Protocol(hs.ProtocolVersion)
	reg, _ := mc.RegistryFor(p)
	ls, _, err := mc.ReadLoginStart(br, int32(p))
	if err != nil {
		return
	}
	conn := mc.NewConn(br, c, z)
	id := func(s mc.State, d mc.Direction, t mc.PacketType) int32 { v, _ := reg.ID(s, d, t); return v }
	b.mu.Lock()
	full := b.maxPlay > 0 && len(b.play) >= b.maxPlay
	b.mu.Unlock()
	if full {
		d, _ := mc.DisconnectText("The server is full!").AppendPayload(nil, p, mc.LoginState)
		_ = conn.WritePacket(id(mc.LoginState, mc.Clientbound, mc.PacketDisconnect), d)
		return
	}
	_ = conn.WritePacket(id(mc.LoginState, mc.Clientbound, mc.PacketLoginSuccess), mc.LoginSuccess{UUID: [16]byte{1}, Name: ls.Name}.AppendPayload(nil, p))
	if f, err := conn.ReadFrame(); err != nil || f.ID != id(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged) {
		return
	}
	_ = conn.WritePacket(id(mc.ConfigState, mc.Clientbound, mc.PacketFinishConfiguration), nil)
	for { // configuration: wait for the client's finish (client information may come first)
		f, err := conn.ReadFrame()
		if err != nil {
			return
		}
		if f.ID == id(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation) {
			b.info.Add(1)
		}
		if f.ID == id(mc.ConfigState, mc.Serverbound, mc.PacketFinishConfiguration) {
			break
		}
	}
	b.joined.Add(1)
	select {
	case b.arrived <- ls.Name:
	default:
	}
	b.mu.Lock()
	b.play = append(b.play, conn)
	b.order = append(b.order, ls.Name)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.play = slices.DeleteFunc(b.play, func(x *mc.Conn) bool { return x == conn })
		b.mu.Unlock()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			f, err := conn.ReadFrame()
			if err != nil {
				return
			}
			if f.ID == id(mc.PlayState, mc.Serverbound, mc.PacketPluginMessage) {
				if m, err := mc.DecodePluginMessage(f.Payload, p); err == nil && m.Channel == "bungeecord:main" {
					b.bungee <- m.Data
					continue
				}
				_ = conn.WritePacket(id(mc.PlayState, mc.Clientbound, mc.PacketPluginMessage), f.Payload)
			}
		}
	}()
	hello, _ := mc.PluginMessage{Channel: "test:hello", Data: []byte("hello from " + b.name)}.AppendPayload(nil, p)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if b.silent.Load() {
				continue
			}
			if conn.WritePacket(id(mc.PlayState, mc.Clientbound, mc.PacketPluginMessage), hello) != nil {
				return
			}
		}
	}
}

// playClient is a 1.21 client that stays: it acknowledges configuration phases,
// sends its client information, and reports each plugin message's text.
type playClient struct {
	conn     *mc.Conn
	net      net.Conn
	reg      *mc.Registry
	messages chan string
	kicked   chan string
	joins    chan struct{} // a join game: the client is in a world (a server's or the limbo's)
}

func joinAndPlay(t testing.TB, addr, host, name string) *playClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	reg, _ := mc.RegistryFor(modernProtocol)
	z, _ := mc.NewZlib(-1)
	pc := &playClient{conn: mc.NewConn(bufio.NewReader(c), c, z), net: c, reg: reg, messages: make(chan string, 1000), kicked: make(chan string, 1), joins: make(chan struct{}, 16)}
	id := func(s mc.State, d mc.Direction, tp mc.PacketType) int32 { v, _ := reg.ID(s, d, tp); return v }
	_ = pc.conn.WritePacket(0, mc.Handshake{ProtocolVersion: int32(modernProtocol), ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}.AppendPayload(nil))
	_ = pc.conn.WritePacket(0, mc.LoginStart{Name: name, HasUUID: true}.AppendPayload(nil, modernProtocol))
	go func() {
		state := mc.LoginState
		for {
			f, err := pc.conn.ReadFrame()
			if err != nil {
				close(pc.messages)
				return
			}
			typ, _ := reg.Type(state, mc.Clientbound, f.ID)
			switch {
			case typ == mc.PacketSetCompression:
				sc, _ := mc.DecodeSetCompression(f.Payload)
				_ = pc.conn.SetCompression(int(sc.Threshold))
			case typ == mc.PacketLoginSuccess:
				_ = pc.conn.WritePacket(id(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged), nil)
				state = mc.ConfigState
				_ = pc.conn.WritePacket(id(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation), []byte("settings"))
			case typ == mc.PacketFinishConfiguration && state == mc.ConfigState:
				_ = pc.conn.WritePacket(id(mc.ConfigState, mc.Serverbound, mc.PacketFinishConfiguration), nil)
				state = mc.PlayState
			case typ == mc.PacketStartConfiguration && state == mc.PlayState:
				_ = pc.conn.WritePacket(id(mc.PlayState, mc.Serverbound, mc.PacketConfigurationAck), nil)
				state = mc.ConfigState
			case typ == mc.PacketKeepAlive:
				// The limbo (and servers) time out a client that does not answer.
				_ = pc.conn.WritePacket(id(state, mc.Serverbound, mc.PacketKeepAlive), f.Payload)
			case typ == mc.PacketKnownPacks && state == mc.ConfigState:
				_ = pc.conn.WritePacket(id(mc.ConfigState, mc.Serverbound, mc.PacketKnownPacks), []byte{0})
			case typ == mc.PacketJoinGame:
				pc.joins <- struct{}{}
			case typ == mc.PacketPluginMessage:
				m, err := mc.DecodePluginMessage(f.Payload, modernProtocol)
				if err == nil {
					pc.messages <- string(m.Data)
				}
			case typ == mc.PacketDisconnect:
				d, _ := mc.DecodeDisconnect(f.Payload, modernProtocol, state)
				pc.kicked <- d.Text()
			}
		}
	}()
	return pc
}

// await waits for a plugin message with the given text.
func (pc *playClient) await(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-pc.messages:
			if !ok {
				t.Fatalf("connection ended while waiting for %q", want)
			}
			if m == want {
				return
			}
		case k := <-pc.kicked:
			t.Fatalf("kicked (%q) while waiting for %q", k, want)
		case <-deadline:
			t.Fatalf("no %q within 10s", want)
		}
	}
}

// drain empties the messages received so far, so await sees only later ones.
func (pc *playClient) drain() {
	for {
		select {
		case <-pc.messages:
		default:
			return
		}
	}
}

func networkServers(a, b *playBackend) (*config.Server, *config.Server) {
	lobby := interceptedServer("lobby", config.ModeOffline, a.addr)
	games := interceptedServer("games", config.ModeOffline, b.addr)
	lobby.Network, games.Network = "main", "main"
	return lobby, games
}

// A player is moved from one server to another without a disconnect: the client
// goes through its configuration phase again, the new backend gets its settings,
// and the player keeps receiving the new server's messages; the counts, the
// players list and a player.switch event follow. "as is": the client's
// compression off like the fake backends', so the relay passes frames straight
// from its buffer (session/pass.go) and must still follow the states.
func TestSendPlayerBetweenServers(t *testing.T) {
	for _, asIs := range []bool{false, true} {
		t.Run(map[bool]string{false: "reframed", true: "as is"}[asIs], func(t *testing.T) {
			testSendPlayerBetweenServers(t, asIs)
		})
	}
}

func testSendPlayerBetweenServers(t *testing.T, asIs bool) {
	a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
	lobby, games := networkServers(a, b)
	other := interceptedServer("elsewhere", config.ModeOffline, b.addr)
	other.Network = "other"
	bus := events.NewBus()
	sub := bus.Subscribe(16, events.PlayerSwitch)
	defer sub.Close()
	tp := startProxyOpts(t, func(c *config.Config) {
		if asIs {
			c.CompressionThreshold = -1
		}
	}, Options{Bus: bus}, lobby, games, other)

	pc := joinAndPlay(t, tp.addr, "lobby.test", "Alex")
	pc.await(t, "hello from A")
	if info := tp.Players(""); len(info) != 1 || info[0].Server != "lobby" || !info[0].Switchable {
		t.Fatalf("players list before the move: %+v", info)
	}
	if _, err := tp.SendPlayer(context.Background(), "ALEX", "elsewhere", false); !errors.Is(err, ErrOtherNetwork) {
		t.Fatalf("a move to another network: %v, want ErrOtherNetwork", err)
	}
	info, err := tp.SendPlayer(context.Background(), "alex", "games", false)
	if err != nil {
		t.Fatalf("move: %v", err)
	}
	if info.Server != "games" || info.Address != b.addr {
		t.Fatalf("after the move the player is on %s/%s", info.Server, info.Address)
	}
	pc.drain()
	pc.await(t, "hello from B")
	if b.info.Load() != 1 {
		t.Fatalf("the new backend got %d client information packets, want the replayed one", b.info.Load())
	}
	v, _ := tp.Server("lobby", time.Now())
	g, _ := tp.Server("games", time.Now())
	if v.Players != 0 || g.Players != 1 {
		t.Fatalf("player counts after the move: lobby %d, games %d", v.Players, g.Players)
	}
	ev, err := sub.Next(ctxTimeout(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if sw := ev.Data.(events.Switch); sw.FromServer != "lobby" || sw.ToServer != "games" || sw.Reason != "admin" {
		t.Fatalf("switch event %+v", sw)
	}
	// And back again.
	if _, err := tp.SendPlayer(context.Background(), "Alex", "lobby", false); err != nil {
		t.Fatalf("move back: %v", err)
	}
	pc.drain()
	pc.await(t, "hello from A")
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A player whose backend goes away (closed, kicked, or silent past stall_timeout)
// lands on the server's fallback instead of being disconnected; a kick matching
// fallback_skip_kicks ends the session with its text. The fake backends do not
// compress: with the client's compression off too ("as is"), frames leave as
// they came and the relay passes them straight from its buffer on the event
// loop (session/pass.go), where a kick must be stopped all the same.
func TestFallbackOnLoss(t *testing.T) {
	cases := []struct {
		name string
		lose func(*playBackend)
	}{
		{"closed", func(b *playBackend) { b.closeAll() }},
		{"kicked", func(b *playBackend) { b.kickAll("Server restarting") }},
		{"stalled", func(b *playBackend) { b.silent.Store(true) }},
		{"kicked as is", func(b *playBackend) { b.kickAll("Server restarting") }},
		{"stalled as is", func(b *playBackend) { b.silent.Store(true) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
			lobby, games := networkServers(a, b)
			games.FallbackServers = []string{"lobby"}
			tp := startProxy(t, func(c *config.Config) {
				c.StallTimeout = config.Duration(300 * time.Millisecond)
				if strings.HasSuffix(tc.name, "as is") {
					c.CompressionThreshold = -1
				}
			}, lobby, games)
			pc := joinAndPlay(t, tp.addr, "games.test", "Steve")
			pc.await(t, "hello from B")
			tc.lose(b)
			pc.drain()
			pc.await(t, "hello from A")
			if info := tp.Players(""); len(info) != 1 || info[0].Server != "lobby" {
				t.Fatalf("after the fallback: %+v", info)
			}
			if strings.HasPrefix(tc.name, "stalled") {
				g, _ := tp.Server("games", time.Now())
				if g.Backends[0].LastFailure.IsZero() {
					t.Fatal("a stalled address must count a failure")
				}
			}
		})
	}
	t.Run("skip kick", func(t *testing.T) {
		a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
		lobby, games := networkServers(a, b)
		games.FallbackServers = []string{"lobby"}
		games.FallbackSkipKicks = []string{"banned"}
		tp := startProxy(t, nil, lobby, games)
		pc := joinAndPlay(t, tp.addr, "games.test", "Steve")
		pc.await(t, "hello from B")
		b.kickAll("You are banned from this server")
		select {
		case k := <-pc.kicked:
			if !strings.Contains(k, "banned") {
				t.Fatalf("kick text %q", k)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a ban-like kick must end the session with its text")
		}
		if a.joined.Load() != 0 {
			t.Fatal("a banned player was moved to the fallback")
		}
	})
}

// A drain with move empties the drained address: its players go to the other
// address of the server and nobody is disconnected.
func TestMovePlayersOffAnAddress(t *testing.T) {
	a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
	s := interceptedServer("lobby", config.ModeOffline, a.addr, b.addr)
	tp := startProxy(t, nil, s)
	var clients []*playClient
	for i := range 3 {
		pc := joinAndPlay(t, tp.addr, "lobby.test", fmt.Sprintf("Player%d", i))
		pc.await(t, "hello from A")
		clients = append(clients, pc)
	}
	if err := tp.SetDrain("lobby", a.addr, true, time.Now()); err != nil {
		t.Fatal(err)
	}
	res, err := tp.MovePlayers(context.Background(), "lobby", a.addr)
	if err != nil || res.Moved != 3 || res.Stayed != 0 {
		t.Fatalf("move: %+v, %v", res, err)
	}
	for _, pc := range clients {
		pc.drain()
		pc.await(t, "hello from B")
	}
	for _, pl := range tp.Players("lobby") {
		if pl.Address != b.addr {
			t.Fatalf("%s is still on %s", pl.Name, pl.Address)
		}
	}
}

// A server plugin moves a player and asks questions through the BungeeCord
// channel: the proxy answers on the same channel, moves the player on Connect,
// and the client never sees the channel's messages; a server without
// bungeecord_channel has its messages passed on to the client.
func TestBungeeCordChannel(t *testing.T) {
	a, b := startPlayBackend(t, "A"), startPlayBackend(t, "B")
	lobby, games := networkServers(a, b)
	lobby.BungeeCordChannel = true
	tp := startProxy(t, func(c *config.Config) { c.PluginMessaging.BungeeCord = true }, lobby, games)
	pc := joinAndPlay(t, tp.addr, "lobby.test", "Alex")
	pc.await(t, "hello from A")

	ask, _ := bungeechannel.Request{Op: bungeechannel.OpGetServer}.AppendTo(nil)
	a.toPlayers("bungeecord:main", ask)
	select {
	case data := <-a.bungee:
		r, err := bungeechannel.DecodeReply(data)
		if err != nil || r.Op != bungeechannel.OpGetServer || r.Server != "lobby" {
			t.Fatalf("GetServer reply %+v, %v", r, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no GetServer reply reached the backend")
	}

	connect, _ := bungeechannel.Request{Op: bungeechannel.OpConnect, Server: "games"}.AppendTo(nil)
	a.toPlayers("bungeecord:main", connect)
	pc.drain()
	pc.await(t, "hello from B")
	if info := tp.Players(""); len(info) != 1 || info[0].Server != "games" {
		t.Fatalf("after Connect: %+v", info)
	}

	// games did not set bungeecord_channel: its request reaches the client untouched.
	b.toPlayers("bungeecord:main", ask)
	pc.await(t, string(ask))
	select {
	case data := <-b.bungee:
		t.Fatalf("the proxy answered a server without bungeecord_channel: %q", data)
	case <-time.After(200 * time.Millisecond):
	}
}

// A pre-1.20.2 player is moved with the join game / respawn sequence: the client
// gets the new backend's join game exactly as the backend sent it (registry
// codec included), then a respawn into that world, and stays connected.
func TestSendPlayerByRejoin(t *testing.T) {
	const p = mc.V1_20
	jg, _, err := limbo.Describe(limbo.DefaultRegistries, p, limbo.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	jg.EntityID = 7
	join, err := jg.AppendPayload(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	a, g := startJoinGameBackend(t, p, join), startJoinGameBackend(t, p, join)
	lobby := interceptedServer("lobby", config.ModeOffline, a)
	games := interceptedServer("games", config.ModeOffline, g)
	lobby.Network, games.Network = "main", "main"
	tp := startProxy(t, nil, lobby, games)
	pl := dialRejoinPlayer(t, tp.addr, "lobby.test", "Alex", p)
	if seq := pl.awaitWorld(t); len(seq) != 1 || !bytes.Equal(seq[0].Payload, join) {
		t.Fatalf("the first world: %d packets, want lobby's join game relayed", len(seq))
	}
	for _, to := range []string{"games", "lobby"} {
		if _, err := tp.SendPlayer(context.Background(), "Alex", to, false); err != nil {
			t.Fatalf("move to %s: %v", to, err)
		}
		seq := pl.awaitWorld(t)
		if len(seq) != 2 {
			t.Fatalf("move to %s: %d packets put the player in a world, want a join game and a respawn", to, len(seq))
		}
		if !bytes.Equal(seq[0].Payload, join) {
			t.Fatalf("move to %s: the client's join game differs from the backend's", to)
		}
		rs, err := mc.DecodeRespawn(seq[1].Payload, p)
		if err != nil || rs.Spawn.WorldName != jg.Spawn.WorldName || rs.Spawn.DimensionType != jg.Spawn.DimensionType {
			t.Fatalf("move to %s: respawn %+v, %v; want into %s", to, rs.Spawn, err, jg.Spawn.WorldName)
		}
		if info := tp.Players(""); len(info) != 1 || info[0].Server != to {
			t.Fatalf("after the move to %s: %+v", to, info)
		}
	}
}
