package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/session"
)

// The switch benchmarks run the proxy, the fake backends and the clients in one
// process on loopback. Every goroutine of the proxy (and the operator's
// SendPlayer calls) carries the pprof label side=proxy, so a CPU profile can be
// cut down to the proxy:
//
//	go test -run '^$' -bench 'BenchmarkSwitch$' -cpuprofile sw.cpu ./internal/proxy
//	go tool pprof -top -tagfocus side=proxy sw.cpu

// benchWait bounds each wait of a benchmark for a client or a backend; a
// switch that takes this long is a failure, not a data point.
const benchWait = 10 * time.Second

// asProxy runs f with the goroutine labelled side=proxy (goroutines f starts
// inherit the label).
func asProxy(f func()) {
	pprof.Do(context.Background(), pprof.Labels("side", "proxy"), func(context.Context) { f() })
}

// benchNetwork starts a proxy with two intercepted servers of one network,
// lobby on lobbyAddr and games on gamesAddr; rate limiting is off because every
// client is 127.0.0.1.
func benchNetwork(b *testing.B, lobbyAddr, gamesAddr string) *testProxy {
	lobby := interceptedServer("lobby", config.ModeOffline, lobbyAddr)
	games := interceptedServer("games", config.ModeOffline, gamesAddr)
	lobby.Network, games.Network = "main", "main"
	var tp *testProxy
	asProxy(func() {
		tp = startProxy(b, func(c *config.Config) { c.RateLimit.Enabled = false }, lobby, games)
	})
	return tp
}

// percentile is the q-th quantile (0..1) of sorted durations, nearest rank.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// reportCPU reports the process's CPU time per switch since cpu0 (proxy, fake
// backends and client together: they share the process).
func reportCPU(b *testing.B, cpu0 time.Duration, switches int) {
	if cpu1, ok := processCPU(); ok && switches > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(time.Microsecond)/float64(switches), "cpu-µs/op")
	}
}

func reportLatency(b *testing.B, prefix string, lat []time.Duration) {
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentile(lat, 0.50)), prefix+"p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), prefix+"p99-ms")
}

// BenchmarkSwitch moves one player back and forth between two servers on
// local fake backends, through Proxy.SendPlayer as the admin API does. A switch
// is timed from the call until the player is in the new server's world:
//
//   - 1.21 (configuration path): until the new backend has the player in play,
//     i.e. the client acknowledged the move, went through the new backend's
//     configuration and finished it;
//   - 1.20.1 (join game / respawn path): until the client has the new
//     backend's join game and the respawn that follows it (the backend's join
//     game carries the full 1.20.1 registry codec, as a vanilla server's does).
//
// p50-ms/p99-ms are that time; api-p50-ms is when SendPlayer returned. Each
// switch includes the dial and the login to the new backend. allocs/op counts
// the whole process (client and fake backends too).
func BenchmarkSwitch(b *testing.B) {
	b.Run("1.21-configuration", benchSwitchModern)
	b.Run("1.20.1-rejoin", benchSwitchRejoin)
}

func benchSwitchModern(b *testing.B) {
	a, g := startPlayBackend(b, "A"), startPlayBackend(b, "B")
	tp := benchNetwork(b, a.addr, g.addr)
	pc := joinAndPlay(b, tp.addr, "lobby.test", "Alex")
	awaitArrival(b, a, "Alex")
	servers := [2]string{"games", "lobby"}
	backends := [2]*playBackend{g, a}
	lat := make([]time.Duration, 0, 4096)
	api := make([]time.Duration, 0, 4096)
	b.ReportAllocs()
	cpu0, _ := processCPU()
	i := 0
	for b.Loop() {
		pc.drain()
		start := time.Now()
		var err error
		asProxy(func() { _, err = tp.SendPlayer(context.Background(), "Alex", servers[i%2], false) })
		if err != nil {
			b.Fatalf("switch %d to %s: %v", i, servers[i%2], err)
		}
		api = append(api, time.Since(start))
		awaitArrival(b, backends[i%2], "Alex")
		lat = append(lat, time.Since(start))
		i++
	}
	reportCPU(b, cpu0, i)
	reportLatency(b, "", lat)
	reportLatency(b, "api-", api)
}

// awaitArrival waits until name is in play on backend.
func awaitArrival(b *testing.B, backend *playBackend, name string) {
	b.Helper()
	timeout := time.NewTimer(benchWait)
	defer timeout.Stop()
	for {
		select {
		case got := <-backend.arrived:
			if got == name {
				return
			}
		case <-timeout.C:
			b.Fatalf("%s did not get into play on %s within %s", name, backend.name, benchWait)
		}
	}
}

func benchSwitchRejoin(b *testing.B) {
	const p = mc.V1_20
	jg, _, err := limbo.Describe(limbo.DefaultRegistries, p, limbo.Overworld)
	if err != nil {
		b.Fatal(err)
	}
	join, err := jg.AppendPayload(nil, p)
	if err != nil {
		b.Fatal(err)
	}
	a, g := startJoinGameBackend(b, p, join), startJoinGameBackend(b, p, join)
	tp := benchNetwork(b, a, g)
	pl := dialRejoinPlayer(b, tp.addr, "lobby.test", "Alex", p)
	pl.awaitWorld(b)
	servers := [2]string{"games", "lobby"}
	lat := make([]time.Duration, 0, 4096)
	api := make([]time.Duration, 0, 4096)
	b.ReportAllocs()
	cpu0, _ := processCPU()
	i := 0
	for b.Loop() {
		start := time.Now()
		asProxy(func() { _, err = tp.SendPlayer(context.Background(), "Alex", servers[i%2], false) })
		if err != nil {
			b.Fatalf("switch %d to %s: %v", i, servers[i%2], err)
		}
		api = append(api, time.Since(start))
		pl.awaitWorld(b)
		lat = append(lat, time.Since(start))
		i++
	}
	reportCPU(b, cpu0, i)
	b.ReportMetric(float64(len(join)), "joingame-B")
	reportLatency(b, "", lat)
	reportLatency(b, "api-", api)
}

// vanillaThreshold is server.properties' default network-compression-threshold.
const vanillaThreshold = 256

// startJoinGameBackend is a pre-1.20.2 offline-mode server: it turns
// compression on (vanillaThreshold), and after the login sends join (a join
// game payload) and then only reads, until the proxy closes the connection. It
// returns its address.
func startJoinGameBackend(b testing.TB, p mc.Protocol, join []byte) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	reg, _ := mc.RegistryFor(p)
	compressionID, _ := reg.ID(mc.LoginState, mc.Clientbound, mc.PacketSetCompression)
	successID, _ := reg.ID(mc.LoginState, mc.Clientbound, mc.PacketLoginSuccess)
	joinID, _ := reg.ID(mc.PlayState, mc.Clientbound, mc.PacketJoinGame)
	z, _ := mc.NewZlib(-1)
	// The join game is deflated once, here: the benchmark times the proxy, not
	// the fake server's compression.
	var joinFrame bytes.Buffer
	jc := mc.NewConn(nil, &joinFrame, z)
	_ = jc.SetCompression(vanillaThreshold)
	if err := jc.WritePacket(joinID, join); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { mu.Lock(); delete(conns, c); mu.Unlock(); c.Close() }()
				br := bufio.NewReader(c)
				if _, _, err := mc.ReadHandshake(br); err != nil {
					return
				}
				ls, _, err := mc.ReadLoginStart(br, int32(p))
				if err != nil {
					return
				}
				conn := mc.NewConn(br, c, z)
				// Compression on at vanilla's default threshold, as a real server has it.
				if conn.WritePacket(compressionID, mc.SetCompression{Threshold: vanillaThreshold}.AppendPayload(nil)) != nil {
					return
				}
				_ = conn.SetCompression(vanillaThreshold)
				if conn.WritePacket(successID, mc.LoginSuccess{UUID: [16]byte{1}, Name: ls.Name}.AppendPayload(nil, p)) != nil {
					return
				}
				if _, err := c.Write(joinFrame.Bytes()); err != nil {
					return
				}
				for {
					if _, err := conn.ReadFrame(); err != nil {
						return
					}
				}
			}()
		}
	}()
	b.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// rejoinPlayer is a pre-1.20.2 client: in play from its login success, it
// reports each time it is put in a world (its first join game, then the
// respawn that ends every switch) and answers keep-alives.
type rejoinPlayer struct {
	worlds chan []mc.Frame // the join games and respawns that put it in a world
	errs   chan error
}

func dialRejoinPlayer(b testing.TB, addr, host, name string, p mc.Protocol) *rejoinPlayer {
	b.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	reg, _ := mc.RegistryFor(p)
	z, _ := mc.NewZlib(-1)
	conn := mc.NewConn(bufio.NewReader(c), c, z)
	_ = conn.WritePacket(0, mc.Handshake{ProtocolVersion: int32(p), ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}.AppendPayload(nil))
	_ = conn.WritePacket(0, mc.LoginStart{Name: name, HasUUID: true}.AppendPayload(nil, p))
	pl := &rejoinPlayer{worlds: make(chan []mc.Frame, 16), errs: make(chan error, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		state, joined := mc.LoginState, false
		var seq []mc.Frame
		for {
			f, err := conn.ReadFrame()
			if err != nil {
				pl.errs <- err
				return
			}
			t, _ := reg.Type(state, mc.Clientbound, f.ID)
			switch {
			case state == mc.LoginState && t == mc.PacketSetCompression:
				sc, _ := mc.DecodeSetCompression(f.Payload)
				_ = conn.SetCompression(int(sc.Threshold))
			case state == mc.LoginState && t == mc.PacketLoginSuccess:
				state = mc.PlayState
			case t == mc.PacketKeepAlive:
				id, _ := reg.ID(mc.PlayState, mc.Serverbound, mc.PacketKeepAlive)
				_ = conn.WritePacket(id, f.Payload)
			case t == mc.PacketJoinGame && joined:
				seq = append(seq, f) // a switch's: its respawn follows
			case t == mc.PacketJoinGame, t == mc.PacketRespawn:
				joined = true
				pl.worlds <- append(seq, f)
				seq = nil
			case t == mc.PacketDisconnect:
				pl.errs <- errors.New("disconnected")
				return
			}
		}
	}()
	b.Cleanup(func() { c.Close(); <-done })
	return pl
}

// awaitWorld waits until the player is put in a world.
func (pl *rejoinPlayer) awaitWorld(b testing.TB) []mc.Frame {
	b.Helper()
	select {
	case seq := <-pl.worlds:
		return seq
	case err := <-pl.errs:
		b.Fatalf("the player's connection ended: %v", err)
	case <-time.After(benchWait):
		b.Fatalf("the player was not put in a world within %s", benchWait)
	}
	return nil
}

// loginOnce logs one 1.21 player in through the proxy, goes through the
// backend's configuration and returns once the client is in play; then it
// disconnects.
func loginOnce(addr, host, name string) error {
	c, err := net.DialTimeout("tcp", addr, benchWait)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(benchWait))
	reg, _ := mc.RegistryFor(modernProtocol)
	id := func(s mc.State, tp mc.PacketType) int32 { v, _ := reg.ID(s, mc.Serverbound, tp); return v }
	conn := mc.NewConn(bufio.NewReader(c), c, benchClientZlib)
	if err := conn.WritePackets(
		mc.OutPacket{ID: 0, Payload: mc.Handshake{ProtocolVersion: int32(modernProtocol), ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}.AppendPayload(nil)},
		mc.OutPacket{ID: 0, Payload: mc.LoginStart{Name: name, HasUUID: true}.AppendPayload(nil, modernProtocol)},
	); err != nil {
		return err
	}
	state := mc.LoginState
	for {
		f, err := conn.ReadFrame()
		if err != nil {
			return fmt.Errorf("login of %s: %w", name, err)
		}
		t, _ := reg.Type(state, mc.Clientbound, f.ID)
		switch {
		case state == mc.LoginState && t == mc.PacketSetCompression:
			sc, err := mc.DecodeSetCompression(f.Payload)
			if err != nil {
				return err
			}
			if err := conn.SetCompression(int(sc.Threshold)); err != nil {
				return err
			}
		case state == mc.LoginState && t == mc.PacketLoginSuccess:
			state = mc.ConfigState
			if err := conn.WritePackets(
				mc.OutPacket{ID: id(mc.LoginState, mc.PacketLoginAcknowledged)},
				mc.OutPacket{ID: id(mc.ConfigState, mc.PacketClientInformation), Payload: []byte("settings")},
			); err != nil {
				return err
			}
		case state == mc.ConfigState && t == mc.PacketFinishConfiguration:
			return conn.WritePacket(id(mc.ConfigState, mc.PacketFinishConfiguration), nil)
		case t == mc.PacketDisconnect:
			return fmt.Errorf("login of %s: disconnected", name)
		}
	}
}

var benchClientZlib = func() *mc.Zlib {
	z, err := mc.NewZlib(1)
	if err != nil {
		panic(err)
	}
	return z
}()

// BenchmarkLoginsDuringSwitches measures intercepted 1.21 logins per second
// (each from the dial to the client in play on the backend, 4 at a time) in
// alternating blocks: one with nothing else going on (the baseline), one while
// players already on the network are moved back and forth between the two
// servers. One op is one pair of blocks; it reports both rates, their ratio
// (1 = unaffected) and the switches per second the players made.
//
//   - switching=N (stress): N players are moved without pause, each one's next
//     move as soon as the last returned; blocks of 64 logins.
//   - paced=RHz: R switches a second on a fixed schedule, in turn over
//     pacedPlayers players, as an ordinary network's moves would come; blocks
//     of pacedBlock, so that each switching block holds R/2 switches.
func BenchmarkLoginsDuringSwitches(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("switching=%d", n), func(b *testing.B) { benchLoginsDuringSwitches(b, n, 0) })
	}
	for _, rate := range []int{10, 100} {
		b.Run(fmt.Sprintf("paced=%dHz", rate), func(b *testing.B) { benchLoginsDuringSwitches(b, pacedPlayers, rate) })
	}
}

const (
	// pacedPlayers share a paced benchmark's switches: at 100 a second each is
	// moved every 80 ms, long after its last move finished.
	pacedPlayers = 8
	// pacedBlock is a paced benchmark's block length: long enough for 5
	// switches at 10 a second, short enough for CI's -benchtime=1x smoke run.
	pacedBlock = 500 * time.Millisecond
)

// benchLoginsDuringSwitches runs the blocks with switching players on the
// network: moved without pause when rate is 0, else rate times a second.
func benchLoginsDuringSwitches(b *testing.B, switching, rate int) {
	const (
		loginsPerBlock = 64
		loginWorkers   = 4
	)
	a, g := startPlayBackend(b, "A"), startPlayBackend(b, "B")
	tp := benchNetwork(b, a.addr, g.addr)
	var players []*playClient
	for i := range switching {
		players = append(players, joinAndPlay(b, tp.addr, "lobby.test", fmt.Sprintf("Switcher%d", i)))
	}
	for range switching {
		select {
		case <-a.arrived:
		case <-time.After(benchWait):
			b.Fatal("the switching players did not all get into play")
		}
	}
	moves := make([]int, switching) // each player's moves so far: even on lobby, odd on games

	blocks := 0
	// loginBlock runs logins with loginWorkers in parallel, loginsPerBlock of
	// them, or (paced) as many as start within pacedBlock, and returns how many
	// it ran, how long they took and the process CPU they (and whatever ran
	// beside them) used.
	loginBlock := func() (logins int64, took, cpu time.Duration) {
		var next, done atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, loginWorkers)
		cpu0, _ := processCPU()
		start := time.Now()
		more := func() (int64, bool) {
			n := next.Add(1)
			if rate > 0 {
				return n, time.Since(start) < pacedBlock
			}
			return n, n <= loginsPerBlock
		}
		for range loginWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n, ok := more()
					if !ok {
						return
					}
					if err := loginOnce(tp.addr, "lobby.test", fmt.Sprintf("L%d_%d", blocks, n)); err != nil {
						errs <- err
						return
					}
					done.Add(1)
				}
			}()
		}
		wg.Wait()
		took = time.Since(start)
		cpu1, _ := processCPU()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
		blocks++
		return done.Load(), took, cpu1 - cpu0
	}
	var switches atomic.Int64
	// move sends player i to the other server; false if the proxy refused
	// because the player was still finishing the last move's configuration.
	move := func(i int) bool {
		name := fmt.Sprintf("Switcher%d", i)
		players[i].drain()
		var err error
		asProxy(func() {
			_, err = tp.SendPlayer(context.Background(), name, [2]string{"games", "lobby"}[moves[i]%2], false)
		})
		switch {
		case err == nil:
			switches.Add(1)
			moves[i]++
			return true
		case errors.Is(err, session.ErrNotPlaying):
			return false
		default:
			b.Errorf("switch of %s: %v", name, err)
			return false
		}
	}
	// switchers move every held player back and forth until stop is closed.
	switchers := func(stop <-chan struct{}) *sync.WaitGroup {
		var wg sync.WaitGroup
		for i := range players {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !b.Failed() {
					select {
					case <-stop:
						return
					default:
					}
					if !move(i) {
						// Still finishing the last move's configuration.
						time.Sleep(200 * time.Microsecond)
					}
				}
			}()
		}
		return &wg
	}
	// pacer moves the players in turn, rate times a second, until stop is
	// closed. The k-th move is due (k+½)/rate seconds after the start, so a
	// block of pacedBlock holds exactly rate×pacedBlock of them; a pacer that
	// fell behind catches up rather than skip. A move that finds its player
	// still busy with the last one is lost (switches/s shows it).
	pacer := func(stop <-chan struct{}) *sync.WaitGroup {
		var wg sync.WaitGroup
		due := make([]chan struct{}, len(players))
		for i := range players {
			due[i] = make(chan struct{}, 1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					case <-due[i]:
						move(i)
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			interval := time.Second / time.Duration(rate)
			start := time.Now()
			timer := time.NewTimer(interval / 2)
			defer timer.Stop()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				case <-timer.C:
				}
				select {
				case due[k%len(due)] <- struct{}{}:
				default:
				}
				timer.Reset(time.Until(start.Add(interval/2 + time.Duration(k+1)*interval)))
			}
		}()
		return &wg
	}
	startSwitching := switchers
	if rate > 0 {
		startSwitching = pacer
	}

	var idle, busy, idleCPU, busyCPU time.Duration
	var idleLogins, busyLogins, busySwitches int64
	b.ReportAllocs()
	for b.Loop() {
		n, took, cpu := loginBlock()
		idleLogins, idle, idleCPU = idleLogins+n, idle+took, idleCPU+cpu
		stop := make(chan struct{})
		wg := startSwitching(stop)
		before := switches.Load()
		n, took, cpu = loginBlock()
		busySwitches += switches.Load() - before
		busyLogins, busy, busyCPU = busyLogins+n, busy+took, busyCPU+cpu
		close(stop)
		wg.Wait()
	}
	idleRate, busyRate := float64(idleLogins)/idle.Seconds(), float64(busyLogins)/busy.Seconds()
	b.ReportMetric(idleRate, "idle-logins/s")
	b.ReportMetric(busyRate, "switching-logins/s")
	b.ReportMetric(busyRate/idleRate, "ratio")
	b.ReportMetric(float64(busySwitches)/busy.Seconds(), "switches/s")
	if _, ok := processCPU(); ok {
		// CPU per login from the baseline blocks; what the switching blocks used
		// beyond their logins is the switches' (process CPU: proxy, fakes and
		// clients together).
		perLogin := idleCPU.Seconds() / float64(idleLogins)
		b.ReportMetric(perLogin*1e6, "cpu-µs/login")
		if busySwitches > 0 {
			b.ReportMetric((busyCPU.Seconds()-perLogin*float64(busyLogins))*1e6/float64(busySwitches), "cpu-µs/switch")
		}
		b.ReportMetric(idleCPU.Seconds()/idle.Seconds(), "idle-cores")
		b.ReportMetric(busyCPU.Seconds()/busy.Seconds(), "switching-cores")
	}
}
