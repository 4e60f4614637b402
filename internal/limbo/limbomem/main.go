//go:build unix

// Command limbomem measures what holding players in the limbo costs: it
// starts a limbo holder in a child process (so the clients' memory is not
// counted), opens N loopback clients that log in, enter the limbo and answer
// keep-alives like vanilla clients, and reports the holder's resident memory
// per held player (from /proc/self/status) and its CPU time per second while
// it holds them. LIMBOMEM_CPUPROFILE=file profiles the holder over the window.
//
// With -binary, the holder is the real proxy instead: `infrarust serve` with a
// generated configuration whose one server is in maintenance with the
// "maintenance" limbo handler, so every client is held by a whole intercepted
// session (its login, the session, the handler's wait and its title every
// second), measured from /proc/<pid> and the proxy's /metrics.
//
//	go run ./internal/limbo/limbomem -players 5000 -version 1.21.4 -window 60s
//	go build -o /tmp/infrarust ./cmd/infrarust
//	go run ./internal/limbo/limbomem -binary /tmp/infrarust -players 5000 -window 60s
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/limbo/limbotest"
	"github.com/infrarust-go/infrarust/internal/mc"
)

func main() {
	serve := flag.Bool("serve", false, "run as the holder (the parent starts this itself)")
	players := flag.Int("players", 5000, "clients to hold")
	version := flag.String("version", "1.21.4", "Minecraft version of the clients")
	window := flag.Duration("window", 60*time.Second, "how long to measure CPU while holding")
	message := flag.Bool("message", false, "show a title and an action bar refreshed every second (and clients send a position every second, as vanilla)")
	binary := flag.String("binary", "", "measure this infrarust binary holding the players (a server in maintenance) instead of the bare limbo")
	flag.Parse()
	var err error
	switch {
	case *serve:
		err = runHolder(*message)
	case *binary != "":
		var t *proxyTarget
		if t, err = startProxy(*binary); err == nil {
			err = runParent(t, *players, *version, *window, *message)
		}
	default:
		var t *holder
		if t, err = startHolder(*message); err == nil {
			err = runParent(t, *players, *version, *window, *message)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "limbomem:", err)
		os.Exit(1)
	}
}

// stats is the holder's answer to "stats"; for the proxy, Held is -1 (the
// clients count themselves).
type stats struct {
	Held       int64   `json:"held"`
	Failed     int64   `json:"failed"`
	RSSKiB     int64   `json:"rss_kib"`
	HeapKiB    uint64  `json:"heap_kib"`
	StackKiB   uint64  `json:"stack_kib"`
	Goroutines int     `json:"goroutines"`
	CPUSeconds float64 `json:"cpu_s"`
}

func runHolder(message bool) error {
	var held, failed atomic.Int64
	opts := limbo.HoldOptions{}
	if message {
		start := time.Now()
		opts.Message = func() limbo.Message {
			return limbo.Message{
				Title:     mc.TextComponent("Waking the server…"),
				Subtitle:  mc.TextComponent(strconv.Itoa(int(time.Since(start).Seconds())) + " s"),
				ActionBar: mc.TextComponent("You are #3 in the queue"),
			}
		}
	}
	srv, err := limbotest.Listen("127.0.0.1:0", limbotest.Options{
		Threshold: 256,
		Script: func(ctx context.Context, p *limbo.Player, _ string) error {
			_ = p.Net.SetDeadline(time.Now().Add(30 * time.Second))
			if err := limbo.Enter(p, limbo.World{}); err != nil {
				return err
			}
			held.Add(1)
			defer held.Add(-1)
			return limbo.Hold(ctx, p, opts)
		},
		Done: func(_ string, err error) {
			if err != nil && !errors.Is(err, context.Canceled) {
				failed.Add(1)
			}
		},
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Println("addr", srv.Addr)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "profile-start":
			if path := os.Getenv("LIMBOMEM_CPUPROFILE"); path != "" {
				if f, err := os.Create(path); err == nil {
					_ = pprof.StartCPUProfile(f)
				}
			}
			fmt.Println("ok")
		case "profile-stop":
			pprof.StopCPUProfile()
			fmt.Println("ok")
		case "gc":
			runtime.GC()
			debug.FreeOSMemory()
			fmt.Println("ok")
		case "stats":
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			var ru syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
			b, _ := json.Marshal(stats{
				Held: held.Load(), Failed: failed.Load(), RSSKiB: rssKiB(), HeapKiB: ms.HeapInuse >> 10,
				StackKiB: ms.StackInuse >> 10, Goroutines: runtime.NumGoroutine(), CPUSeconds: cpu,
			})
			fmt.Println(string(b))
		}
	}
	return nil
}

// rssKiB reads VmRSS from /proc/self/status.
func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return -1
}

// target is the process holding the players, seen from the parent.
type target interface {
	Addr() string
	// Settle collects garbage and returns free pages to the OS, when it can.
	Settle() bool
	Stats() (stats, error)
	// Profile starts (on) or stops the CPU profile, when it can.
	Profile(on bool)
	Close()
}

// holder is the child process seen from the parent.
type holder struct {
	in   *os.File
	out  *bufio.Scanner
	cmd  *exec.Cmd
	addr string
}

func (h *holder) ask(cmd string) string {
	fmt.Fprintln(h.in, cmd)
	if !h.out.Scan() {
		return ""
	}
	return h.out.Text()
}

func (h *holder) Addr() string { return h.addr }
func (h *holder) Settle() bool { h.ask("gc"); return true }
func (h *holder) Close()       { h.in.Close(); _ = h.cmd.Wait() }
func (h *holder) Profile(on bool) {
	if on {
		h.ask("profile-start")
	} else {
		h.ask("profile-stop")
	}
}

func (h *holder) Stats() (stats, error) {
	var s stats
	err := json.Unmarshal([]byte(h.ask("stats")), &s)
	return s, err
}

func startHolder(message bool) (*holder, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-serve"}
	if message {
		args = append(args, "-message")
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = inR
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	inR.Close()
	h := &holder{in: inW, out: bufio.NewScanner(stdout), cmd: cmd}
	if !h.out.Scan() || !strings.HasPrefix(h.out.Text(), "addr ") {
		h.Close()
		return nil, errors.New("holder did not start")
	}
	h.addr = strings.TrimPrefix(h.out.Text(), "addr ")
	return h, nil
}

func runParent(h target, players int, version string, window time.Duration, message bool) error {
	defer h.Close()
	proto, ok := mc.ParseVersion(version)
	if !ok {
		return fmt.Errorf("unknown version %q", version)
	}
	addr := h.Addr()
	h.Settle()
	base, err := h.Stats()
	if err != nil {
		return err
	}
	fmt.Printf("holder idle: RSS %d KiB, heap %d KiB, %d goroutines\n", base.RSSKiB, base.HeapKiB, base.Goroutines)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var joined, clientErrs, dropped atomic.Int64
	var firstErr atomic.Value
	sem := make(chan struct{}, 64) // logins in flight
	began := time.Now()
	for i := range players {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := false
			err := runClient(ctx, addr, proto, fmt.Sprintf("p%d", i), message, func() { in = true; joined.Add(1); <-sem })
			if err != nil && ctx.Err() == nil {
				if in {
					dropped.Add(1)
				}
				if clientErrs.Add(1) == 1 {
					firstErr.Store(err)
				}
			}
		}()
	}
	for joined.Load()+clientErrs.Load() < int64(players) {
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("%d clients in the limbo after %v (%d failed", joined.Load(), time.Since(began).Round(time.Millisecond), clientErrs.Load())
	if e := firstErr.Load(); e != nil {
		fmt.Printf(", first: %v", e)
	}
	fmt.Println(")")
	// held is what the holder says, or for the proxy what the clients say.
	held := func(s stats) int64 {
		if s.Held >= 0 {
			return s.Held
		}
		return joined.Load() - dropped.Load()
	}

	// Let the joins' garbage go, then measure memory twice: as the runtime
	// left it, and (when the holder can) after returning free pages to the OS.
	time.Sleep(5 * time.Second)
	loaded, err := h.Stats()
	if err != nil {
		return err
	}
	per := func(s stats) float64 { return float64(s.RSSKiB-base.RSSKiB) / float64(max(held(s), 1)) }
	if h.Settle() {
		settled, err := h.Stats()
		if err != nil {
			return err
		}
		fmt.Printf("held %d: RSS %d KiB (%.1f KiB per player over idle); after GC+FreeOSMemory %d KiB (%.1f KiB per player); heap %d KiB, stacks %d KiB, %d goroutines\n",
			held(settled), loaded.RSSKiB, per(loaded), settled.RSSKiB, per(settled), settled.HeapKiB, settled.StackKiB, settled.Goroutines)
	} else {
		fmt.Printf("held %d: RSS %d KiB (%.1f KiB per player over idle); heap %d KiB, stacks %d KiB, %d goroutines\n",
			held(loaded), loaded.RSSKiB, per(loaded), loaded.HeapKiB, loaded.StackKiB, loaded.Goroutines)
	}

	// CPU while holding: over whole keep-alive rounds.
	c0, err := h.Stats()
	if err != nil {
		return err
	}
	t0 := time.Now()
	h.Profile(true)
	time.Sleep(window)
	h.Profile(false)
	c1, err := h.Stats()
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	cpuPerSec := (c1.CPUSeconds - c0.CPUSeconds) / secs
	n, failed := held(c1), c1.Failed
	if c1.Held < 0 {
		failed = dropped.Load()
	}
	fmt.Printf("CPU while holding %d players for %.0f s: %.2f ms per second (%.3f%% of one core), %.2f µs per player per second; still held %d, failed %d\n",
		n, secs, cpuPerSec*1000, cpuPerSec*100, cpuPerSec*1e6/math.Max(float64(n), 1), n, failed)
	cancel()
	wg.Wait()
	return nil
}

// runClient logs in like a vanilla client (answering the core known pack
// from 1.20.5), calls joined once it is in the limbo's world, then answers
// keep-alives (and with moving, sends a position every second) until ctx ends.
func runClient(ctx context.Context, addr string, p mc.Protocol, name string, moving bool, joined func()) error {
	reg, _ := mc.RegistryFor(p)
	nc, err := (&net.Dialer{Timeout: 30 * time.Second}).DialContext(ctx, "tcp", addr)
	if err != nil {
		joined()
		return err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	conn := mc.NewConn(bufio.NewReaderSize(nc, 4096), nc, clientZlib)
	once := sync.Once{}
	done := func() { once.Do(joined) }
	defer done()
	write := func(s mc.State, t mc.PacketType, payload []byte) error {
		id, ok := reg.ID(s, mc.Serverbound, t)
		if !ok {
			return fmt.Errorf("no %s in %s", t, s)
		}
		return conn.WritePacket(id, payload)
	}
	hs := mc.Handshake{ProtocolVersion: int32(p), ServerAddress: "limbo", ServerPort: 25565, NextState: mc.StateLogin}
	if err := write(mc.HandshakeState, mc.PacketHandshake, hs.AppendPayload(nil)); err != nil {
		return err
	}
	if err := write(mc.LoginState, mc.PacketLoginStart, mc.LoginStart{Name: name}.AppendPayload(nil, p)); err != nil {
		return err
	}
	state := mc.LoginState
	for {
		f, err := conn.ReadFrame()
		if err != nil {
			return err
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
			state = mc.PlayState
			if p.AtLeast(mc.V1_20_2) {
				if err := write(mc.LoginState, mc.PacketLoginAcknowledged, nil); err != nil {
					return err
				}
				state = mc.ConfigState
			}
		case state == mc.ConfigState && t == mc.PacketKnownPacks:
			names := p.Names()
			answer := mc.KnownPacks{Packs: []mc.KnownPack{mc.CorePack(names[len(names)-1])}}
			if err := write(mc.ConfigState, mc.PacketKnownPacks, answer.AppendPayload(nil)); err != nil {
				return err
			}
		case state == mc.ConfigState && t == mc.PacketFinishConfiguration:
			if err := write(mc.ConfigState, mc.PacketFinishConfiguration, nil); err != nil {
				return err
			}
			state = mc.PlayState
		case state == mc.PlayState && t == mc.PacketPlayerPosition:
			done()
			if moving {
				go move(ctx, conn, reg)
			}
		case t == mc.PacketKeepAlive:
			ka, err := mc.DecodeKeepAlive(f.Payload, p)
			if err != nil {
				return err
			}
			if err := write(state, mc.PacketKeepAlive, ka.AppendPayload(nil, p)); err != nil {
				return err
			}
		case t == mc.PacketDisconnect:
			return errors.New("kicked")
		}
	}
}

// move sends a player position every second, as an idle vanilla client does.
func move(ctx context.Context, conn *mc.Conn, reg *mc.Registry) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	payload := make([]byte, 25) // x, y, z doubles and the on-ground flag
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// Any id the limbo does not act on stands for movement.
			if conn.WritePacket(0x1C, payload) != nil {
				return
			}
		}
	}
}

var clientZlib = func() *mc.Zlib {
	z, err := mc.NewZlib(1)
	if err != nil {
		panic(err)
	}
	return z
}()
