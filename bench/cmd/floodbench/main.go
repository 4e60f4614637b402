// Command floodbench measures bot verification under a join flood: it runs
// an infrarust binary in front of a real backend (test/nmp's server.js),
// sends --bots join bots (1.8 clients of our own, written from the public
// protocol and the documented check, of --kind: idle logs in and answers
// keep-alives but never moves; silent answers nothing at all; hover reports
// where it was put, then nothing more; replay sends its settings and brand,
// computes vanilla's fall from where it was put and sends every height of it
// at once, then the landing; mix takes turns) from loopback addresses spread
// over --addrs, and --players real clients
// with physics (mineflayer, test/nmp's bot.js) one second into the flood. It
// reports how many real players reached the backend and how fast, how many
// bots did (the goal: none), how the bots were turned away, and the proxy's
// memory and CPU per bot. docs/benchmarks.md keeps its results.
//
//	go build -o /tmp/infrarust ./cmd/infrarust
//	go run ./bench/cmd/floodbench --binary /tmp/infrarust --nmp test/nmp
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/bench"
	"github.com/infrarust-go/infrarust/internal/mc"
)

func main() {
	binary := flag.String("binary", "", "the infrarust binary to measure (required)")
	nmpDir := flag.String("nmp", "test/nmp", "test/nmp, with its npm packages installed")
	bots := flag.Int("bots", 5000, "join bots")
	addrs := flag.Int("addrs", 50000, "loopback addresses the bots come from (127.1.0.0 up)")
	players := flag.Int("players", 20, "real clients with physics (mineflayer)")
	mode := flag.String("mode", "always", "[verify] mode: always or attack")
	version := flag.String("version", "1.8.8", "the real clients' version (the bots speak 1.8)")
	maxConc := flag.Int("max-concurrent", 0, "[verify] max_concurrent (0: the proxy's default)")
	flag.StringVar(&botKind, "kind", "idle", "the bots: idle, silent, hover, replay or mix")
	flag.Parse()
	if !slices.Contains(append(kinds, "mix"), botKind) {
		fmt.Fprintf(os.Stderr, "floodbench: --kind %q: want idle, silent, hover, replay or mix\n", botKind)
		os.Exit(2)
	}
	if *binary == "" {
		fmt.Fprintln(os.Stderr, "floodbench: --binary is required")
		os.Exit(2)
	}
	if err := run(*binary, *nmpDir, *bots, *addrs, *players, *mode, *version, *maxConc); err != nil {
		fmt.Fprintln(os.Stderr, "floodbench:", err)
		os.Exit(1)
	}
}

type backend struct {
	port  int
	mu    sync.Mutex
	joins map[string]time.Time
}

func startBackend(ctx context.Context, nmpDir, version string) (*backend, error) {
	b := &backend{joins: map[string]time.Time{}}
	port, err := bench.StartNMPServer(ctx, nmpDir, version, func(ev bench.NMPEvent) {
		if ev.Event == "join" {
			b.mu.Lock()
			b.joins[ev.Username] = time.Now()
			b.mu.Unlock()
		}
	})
	if err != nil {
		return nil, err
	}
	b.port = port
	return b, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func run(binary, nmpDir string, bots, addrs, players int, mode, version string, maxConc int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be, err := startBackend(ctx, nmpDir, version)
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "floodbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	_ = os.MkdirAll(filepath.Join(dir, "servers"), 0o755)
	cfg := fmt.Sprintf("bind = \"127.0.0.1:%d\"\nservers_dir = \"servers\"\n[web]\nenabled = false\ndata_dir = \"data\"\n[verify]\nmode = %q\ntimeout = \"10s\"\n", port, mode)
	if maxConc > 0 {
		cfg += fmt.Sprintf("max_concurrent = %d\n", maxConc)
	}
	srv := fmt.Sprintf("domains = [\"*\"]\naddresses = [\"127.0.0.1:%d\"]\nproxy_mode = \"offline\"\nlimbo_handlers = [\"verify\"]\n", be.port)
	if err := os.WriteFile(filepath.Join(dir, "infrarust.toml"), []byte(cfg), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "servers", "lobby.toml"), []byte(srv), 0o644); err != nil {
		return err
	}
	proxy := exec.CommandContext(ctx, binary, "serve", "-c", filepath.Join(dir, "infrarust.toml"), "--log-level", "error")
	var plog bytes.Buffer
	proxy.Stdout, proxy.Stderr = &plog, &plog
	if err := proxy.Start(); err != nil {
		return err
	}
	defer func() { _ = proxy.Process.Kill(); _ = proxy.Wait() }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if i > 100 {
			return fmt.Errorf("the proxy did not listen:\n%s", plog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	pid := proxy.Process.Pid
	rss0, cpu0 := rssKiB(pid), cpuTicks(pid)

	// Peak memory, sampled while the flood runs.
	var peak atomic.Int64
	stopSample := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSample:
				return
			case <-t.C:
				if r := rssKiB(pid); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	}()

	start := time.Now()
	outcomes := map[string]int{}
	var omu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 5000) // bots connected at once
	for i := range bots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			a := i * (addrs / max(bots, 1))
			src := net.IPv4(127, byte(1+a/65536), byte(a/256), byte(a%256))
			kind := botKind
			if kind == "mix" {
				kind = kinds[i%len(kinds)]
			}
			o := joinBot(addr, src, fmt.Sprintf("bot%d", i), kind)
			omu.Lock()
			outcomes[o]++
			omu.Unlock()
		}()
	}
	// The real players, one second into the flood.
	time.Sleep(time.Second)
	type real struct {
		name    string
		started time.Time
		in      time.Duration
		report  string    // bot.js's kick reason or error
		conn    time.Time // when its connection opened (node's start-up excluded)
	}
	reals := make([]*real, players)
	var pwg sync.WaitGroup
	for i := range players {
		r := &real{name: fmt.Sprintf("Real%d", i), started: time.Now()}
		reals[i] = r
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			cmd := exec.CommandContext(ctx, "node", filepath.Join(nmpDir, "bot.js"), "--port", strconv.Itoa(port), "--version", version,
				"--username", r.name, "--timeout-ms", "20000")
			out, _ := cmd.Output()
			var res struct {
				KickReason  string `json:"kick_reason"`
				Error       string `json:"error"`
				ConnectedAt int64  `json:"connected_at"`
			}
			_ = json.Unmarshal(bytes.TrimSpace(out), &res)
			r.report = res.KickReason + res.Error
			if res.ConnectedAt > 0 {
				r.conn = time.UnixMilli(res.ConnectedAt)
			}
		}()
	}
	pwg.Wait()
	wg.Wait()
	close(stopSample)
	elapsed := time.Since(start)
	cpu1 := cpuTicks(pid)

	be.mu.Lock()
	botsIn, in10 := 0, 0
	var lat []time.Duration
	for name := range be.joins {
		if strings.HasPrefix(name, "bot") {
			botsIn++
		}
	}
	for _, r := range reals {
		if at, ok := be.joins[r.name]; ok {
			from := r.started
			if !r.conn.IsZero() {
				from = r.conn
			}
			r.in = at.Sub(from)
			lat = append(lat, r.in)
			if r.in <= 10*time.Second {
				in10++
			}
		}
	}
	be.mu.Unlock()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("| mode %s, max_concurrent %d: %d %s bots from %d addresses, %d real %s players | value |\n| --- | --- |\n", mode, maxConc, bots, botKind, addrs, players, version)
	fmt.Printf("| real players on the backend within 10 s of connecting | %d of %d (%.0f %%) |\n", in10, players, 100*float64(in10)/float64(max(players, 1)))
	if len(lat) > 0 {
		fmt.Printf("| real player: connection to backend, median / max | %v / %v |\n", lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	}
	fmt.Printf("| bots on the backend | %d |\n", botsIn)
	missed := map[string]int{}
	for _, r := range reals {
		if r.in == 0 {
			missed[r.report]++
		}
	}
	for why, n := range missed {
		fmt.Printf("| real players kept out: %q | %d |\n", why, n)
	}
	keys := make([]string, 0, len(outcomes))
	for k := range outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("| bots: %s | %d |\n", k, outcomes[k])
	}
	fmt.Printf("| flood duration | %v |\n", elapsed.Round(time.Millisecond))
	fmt.Printf("| proxy RSS: before / peak, KiB per bot | %d / %d KiB, %.1f |\n", rss0, peak.Load(), float64(peak.Load()-rss0)/float64(max(bots, 1)))
	fmt.Printf("| proxy CPU per bot | %.0f µs |\n", float64(cpu1-cpu0)*1e6/100/float64(max(bots, 1)))
	return nil
}

// The bots' kinds (--kind).
var (
	kinds   = []string{"idle", "silent", "hover", "replay"}
	botKind string
)

// joinBot logs in as a 1.8 client of kind (see the command's doc) and
// returns how its connection ended.
func joinBot(addr string, src net.IP, name, kind string) string {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: 10 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return "dial failed"
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReader(nc)
	c := mc.NewConn(br, nc, botZlib)
	hs := mc.Handshake{ProtocolVersion: int32(mc.V1_8), ServerAddress: "flood.test", ServerPort: 25565, NextState: mc.StateLogin}
	if c.WritePacket(0, hs.AppendPayload(nil)) != nil {
		return "write failed"
	}
	if c.WritePacket(0, mc.LoginStart{Name: name}.AppendPayload(nil, mc.V1_8)) != nil {
		return "write failed"
	}
	reg, _ := mc.RegistryFor(mc.V1_8)
	id := func(t mc.PacketType) int32 { v, _ := reg.ID(mc.PlayState, mc.Serverbound, t); return v }
	state := mc.LoginState
	placed := false
	for {
		f, err := c.ReadFrame()
		if err != nil {
			if state == mc.LoginState {
				return "closed before login (rate limit)"
			}
			return "closed in play"
		}
		t, _ := reg.Type(state, mc.Clientbound, f.ID)
		switch {
		case state == mc.LoginState && t == mc.PacketSetCompression:
			sc, err := mc.DecodeSetCompression(f.Payload)
			if err != nil || c.SetCompression(int(sc.Threshold)) != nil {
				return "bad compression"
			}
		case state == mc.LoginState && t == mc.PacketLoginSuccess:
			state = mc.PlayState
		case t == mc.PacketDisconnect:
			d, err := mc.DecodeDisconnect(f.Payload, mc.V1_8, state)
			if err != nil {
				return "kicked"
			}
			text := d.Text()
			switch {
			case strings.Contains(text, "verification failed"):
				return "kicked: " + text
			case strings.Contains(text, "Too many players"):
				return "refused: busy"
			}
			return "kicked: " + text
		case state == mc.PlayState && t == mc.PacketKeepAlive && kind != "silent":
			_ = c.WritePacket(id(mc.PacketKeepAlive), f.Payload)
		case state == mc.PlayState && t == mc.PacketPlayerPosition && !placed && len(f.Payload) >= 24:
			placed = true
			x := math.Float64frombits(binary.BigEndian.Uint64(f.Payload[0:8]))
			y := math.Float64frombits(binary.BigEndian.Uint64(f.Payload[8:16]))
			z := math.Float64frombits(binary.BigEndian.Uint64(f.Payload[16:24]))
			pos := func(y float64, onGround bool) []byte {
				b := binary.BigEndian.AppendUint64(nil, math.Float64bits(x))
				b = binary.BigEndian.AppendUint64(b, math.Float64bits(y))
				b = binary.BigEndian.AppendUint64(b, math.Float64bits(z))
				if onGround {
					return append(b, 1)
				}
				return append(b, 0)
			}
			switch kind {
			case "hover":
				_ = c.WritePacket(id(mc.PacketMovePosition), pos(y, false))
			case "replay":
				// What vanilla sends on joining, then the whole fall at once.
				settings := append(mc.AppendString(nil, "en_US"), 8, 0, 1, 0x7f)
				brand := append(mc.AppendString(nil, "MC|Brand"), mc.AppendString(nil, "vanilla")...)
				out := []mc.OutPacket{{ID: id(mc.PacketClientInformation), Payload: settings}, {ID: id(mc.PacketPluginMessage), Payload: brand},
					{ID: id(mc.PacketMovePosition), Payload: pos(y, false)}}
				for v := 0.0; ; {
					v = (v - 0.08) * 0.98
					if y+v <= 65 {
						break
					}
					y += v
					out = append(out, mc.OutPacket{ID: id(mc.PacketMovePosition), Payload: pos(y, false)})
				}
				out = append(out, mc.OutPacket{ID: id(mc.PacketMovePosition), Payload: pos(65, true)})
				_ = c.WritePackets(out...)
			}
		}
	}
}

// botZlib compresses and inflates the bots' frames (the proxy turns
// compression on at 256 bytes).
var botZlib = func() *mc.Zlib {
	z, err := mc.NewZlib(1)
	if err != nil {
		panic(err)
	}
	return z
}()

func rssKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// cpuTicks is the process's user+system time in clock ticks (1/100 s).
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}
