//go:build linux

package forward

// The benchmarks put the player and the server in a child process (this test binary,
// re-executed with peerEnv set), so that getrusage, VmRSS and /proc/self/fd of this
// process measure the forwarder and its two sockets per session, nothing else. Every
// forwarder runs in the same `go test -bench` invocation, side by side:
//
//	go test -run '^$' -bench . -benchmem ./internal/forward/
//
// Throughput: MB/s (player → server, 1 MiB per op), cpu-ms/GiB (this process's
// user+system CPU per GiB moved) and ctxsw/MiB. RTT: 64-byte ping-pong through the forwarder, on 1
// session and on 256 at once: p50-µs, p99-µs, cpu-µs/rtt and ctxsw/rtt. SessionCycle:
// cpu-µs/session for a whole short session (connect, a byte each way, close). Idle: sessions established, one byte moved each way,
// then idle: rss-B/session and fds/session (VmRSS and /proc/self/fd growth over the
// state before the first session, divided by the sessions), leftover-fds (fds still
// open right after every session ended, no GC forced), and the sessions count, which
// is 10 000 or as many as RLIMIT_NOFILE allows for that forwarder.
//
// On a shared machine wall-clock figures swing with load while CPU per unit of work
// swings less; -count repeats one sub-benchmark back to back, so to compare two
// forwarders under the same load, alternate them, e.g.
//
//	for i in 1 2 3 4 5; do for f in goroutine epoll; do
//	  go test -run '^$' -bench "Throughput/$f\$" ./internal/forward/; done; done

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const peerEnv = "FORWARD_BENCH_PEER"

// benchImpls are the forwarders compared: the goroutine one, the epoll one as it
// ships, and the epoll one forced to buffer-only and splice-only moves (which shows
// why the shipped one adapts).
func benchImpls() []impl {
	mk := func(m moveMode) func(testing.TB) Forwarder {
		return func(t testing.TB) Forwarder {
			f, err := NewEpoll(EpollOptions{move: m})
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return []impl{
		{"goroutine", func(testing.TB) Forwarder { return NewGoroutine() }},
		{"epoll", mk(moveAdaptive)},
		{"epoll-buffer", mk(moveBuffer)},
		{"epoll-splice", mk(moveSplice)},
	}
}

// harness is one forwarder with a child peer process holding the other ends.
type harness struct {
	f     Forwarder
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	ended sync.WaitGroup
	mu    sync.Mutex
	errs  []error
}

// startHarness runs before (if any), spawns the peer and forwards n sessions
// through f.
func startHarness(b *testing.B, f Forwarder, n int, before func()) *harness {
	b.Helper()
	if before != nil {
		before()
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), peerEnv+"=1", "FORWARD_BENCH_PROXY="+ln.Addr().String(), "FORWARD_BENCH_SESSIONS="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	h := &harness{f: f, cmd: cmd, in: in, out: bufio.NewScanner(outPipe)}
	server := h.expect(b, "S")[0]
	for range n {
		client, err := ln.AcceptTCP()
		if err != nil {
			b.Fatal(err)
		}
		backend, err := net.Dial("tcp", server)
		if err != nil {
			b.Fatal(err)
		}
		h.ended.Add(1)
		f.Forward(client, backend.(*net.TCPConn), func(r Result) {
			if r.Err != nil {
				h.mu.Lock()
				h.errs = append(h.errs, r.Err)
				h.mu.Unlock()
			}
			h.ended.Done()
		})
	}
	h.expect(b, "CONNECTED")
	return h
}

// say sends the peer one command line.
func (h *harness) say(b *testing.B, format string, args ...any) {
	b.Helper()
	if _, err := fmt.Fprintf(h.in, format+"\n", args...); err != nil {
		b.Fatal(err)
	}
}

// expect reads the peer's next line, which must start with tag.
func (h *harness) expect(b *testing.B, tag string) []string {
	b.Helper()
	if !h.out.Scan() {
		b.Fatalf("peer ended before %s: %v", tag, h.out.Err())
	}
	f := strings.Fields(h.out.Text())
	if len(f) == 0 || f[0] != tag {
		b.Fatalf("peer said %q, want %s", h.out.Text(), tag)
	}
	return f[1:]
}

// end lets the peer close everything and waits for every session to end; the
// forwarder stays open.
func (h *harness) end(b *testing.B) {
	b.Helper()
	h.say(b, "quit")
	h.in.Close()
	if err := h.cmd.Wait(); err != nil {
		b.Fatalf("peer: %v", err)
	}
	h.ended.Wait()
	if len(h.errs) > 0 {
		b.Fatalf("%d sessions ended with an error, first %v", len(h.errs), h.errs[0])
	}
}

// finish ends the sessions and closes the forwarder.
func (h *harness) finish(b *testing.B) {
	b.Helper()
	h.end(b)
	h.f.Close()
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// switches counts this process's context switches, voluntary or not: each is a
// thread that slept and was woken (or was preempted).
func switches() int64 {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return int64(ru.Nvcsw) + int64(ru.Nivcsw)
}

func BenchmarkThroughput(b *testing.B) {
	const chunk = 1 << 20
	for _, im := range benchImpls() {
		b.Run(im.name, func(b *testing.B) {
			h := startHarness(b, im.new(b), 1, nil)
			b.SetBytes(chunk)
			cpu0, sw0 := cpuTime(), switches()
			b.ResetTimer()
			h.say(b, "bulk %d", int64(b.N)*chunk)
			h.expect(b, "T")
			b.StopTimer()
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(switches()-sw0)/float64(b.N), "ctxsw/MiB")
			b.ReportMetric(float64(cpu.Milliseconds())/(float64(b.N)*chunk/(1<<30)), "cpu-ms/GiB")
			h.finish(b)
		})
	}
}

// BenchmarkRTT bounces 64-byte messages player → server → player, one at a time per
// session: with 1 session every message is its own wakeup (the worst case for the
// epoll forwarder, which then pays its own epoll_wait on top of Go's), with 256 busy
// sessions wakeups carry many events, as in a proxy full of players.
func BenchmarkRTT(b *testing.B) {
	for _, sessions := range []int{1, 256} {
		for _, im := range benchImpls() {
			b.Run(fmt.Sprintf("sessions=%d/%s", sessions, im.name), func(b *testing.B) {
				h := startHarness(b, im.new(b), sessions, nil)
				cpu0, sw0 := cpuTime(), switches()
				b.ResetTimer()
				h.say(b, "rtt %d 64", b.N)
				r := h.expect(b, "R")
				b.StopTimer()
				cpu := cpuTime() - cpu0
				b.ReportMetric(float64(switches()-sw0)/float64(b.N), "ctxsw/rtt")
				p50, _ := strconv.ParseFloat(r[0], 64)
				p99, _ := strconv.ParseFloat(r[1], 64)
				b.ReportMetric(p50/1e3, "p50-µs")
				b.ReportMetric(p99/1e3, "p99-µs")
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/rtt")
				h.finish(b)
			})
		}
	}
}

// BenchmarkSessionCycle is one whole short session per op: the peer connects, the
// forwarder gets the pair, one byte goes each way, both ends close, done runs. Its
// cpu-µs/session is what a forwarder adds to a login (accept and dial included, the
// same for both).
func BenchmarkSessionCycle(b *testing.B) {
	for _, im := range benchImpls()[:2] {
		b.Run(im.name, func(b *testing.B) {
			h := startHarness(b, im.new(b), 0, nil)
			ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			h.say(b, "cycles %d %s", b.N, ln.Addr())
			server := h.expect(b, "S2")[0]
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				client, err := ln.AcceptTCP()
				if err != nil {
					b.Fatal(err)
				}
				backend, err := net.Dial("tcp", server)
				if err != nil {
					b.Fatal(err)
				}
				h.ended.Add(1)
				h.f.Forward(client, backend.(*net.TCPConn), func(r Result) {
					if r.Err != nil || r.Up != 1 || r.Down != 1 {
						h.mu.Lock()
						h.errs = append(h.errs, fmt.Errorf("session %+v", r))
						h.mu.Unlock()
					}
					h.ended.Done()
				})
			}
			h.expect(b, "CYCLED")
			h.ended.Wait()
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/session")
			h.finish(b)
		})
	}
}

// idleSessions is how many idle sessions BenchmarkIdle asks for.
const idleSessions = 10_000

func BenchmarkIdle(b *testing.B) {
	var limit unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &limit); err != nil {
		b.Fatal(err)
	}
	for _, im := range benchImpls()[:2] {
		b.Run(im.name, func(b *testing.B) {
			// fds per session in this process: two sockets, plus two pipes for
			// the goroutine forwarder; the peer holds two. Leave room for the rest.
			perSession := 2
			if im.name == "goroutine" {
				perSession = 6
			}
			n := min(idleSessions, (int(limit.Cur)-256)/perSession)
			var rss0, fds0 int
			h := startHarness(b, im.new(b), n, func() { rss0, fds0 = settle(b) })
			h.say(b, "touch")
			h.expect(b, "TOUCHED")
			rss, fds := settle(b)
			b.ReportMetric(float64(rss-rss0)/float64(n), "rss-B/session")
			b.ReportMetric(float64(fds-fds0)/float64(n), "fds/session")
			b.ReportMetric(float64(n), "sessions")
			h.end(b)
			// Right after the last session ended, no GC forced: what a running
			// proxy keeps holding (Go's splice pipes wait for two GC cycles).
			b.ReportMetric(float64(openFDs(b)-fds0), "leftover-fds")
			h.f.Close()
		})
	}
}

// settle collects garbage until the open fds stop changing (Go's splice pipes of
// an earlier run are closed by GC cleanups, two cycles after their last use) and
// returns VmRSS in bytes, after the GC has returned what it can to the OS, and the
// open fds.
func settle(b *testing.B) (rss, fds int) {
	b.Helper()
	fds = -1
	for range 100 {
		runtime.GC()
		debug.FreeOSMemory()
		n := openFDs(b)
		if n == fds {
			break
		}
		fds = n
		time.Sleep(20 * time.Millisecond) // cleanups run on their own goroutine
	}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10, fds
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0, 0
}

func openFDs(b testing.TB) int {
	b.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Fatal(err)
	}
	return len(ents)
}

// runPeer is the child process: it holds the player and server ends of every
// session and runs the workloads the parent asks for, timing them itself.
func runPeer() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "peer:", err); return 1 }
	n, err := strconv.Atoi(os.Getenv("FORWARD_BENCH_SESSIONS"))
	if err != nil {
		return fail(err)
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return fail(err)
	}
	fmt.Println("S", ln.Addr())
	players := make([]*net.TCPConn, n)
	servers := make([]*net.TCPConn, n)
	for i := range n {
		c, err := net.Dial("tcp", os.Getenv("FORWARD_BENCH_PROXY"))
		if err != nil {
			return fail(err)
		}
		players[i] = c.(*net.TCPConn)
		if servers[i], err = ln.AcceptTCP(); err != nil {
			return fail(err)
		}
	}
	ln.Close()
	fmt.Println("CONNECTED")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "bulk":
			total, _ := strconv.ParseInt(f[1], 10, 64)
			start := time.Now()
			if err := peerBulk(players[0], servers[0], total); err != nil {
				return fail(err)
			}
			fmt.Println("T", time.Since(start).Nanoseconds())
		case "rtt":
			// rtt COUNT SIZE: COUNT round trips spread over every session at once.
			count, _ := strconv.Atoi(f[1])
			size, _ := strconv.Atoi(f[2])
			lats := make([][]time.Duration, n)
			errs := make(chan error, n)
			for i := range n {
				go func() {
					var err error
					lats[i], err = peerRTT(players[i], servers[i], (count+n-1-i)/n, size)
					errs <- err
				}()
			}
			for range n {
				if err := <-errs; err != nil {
					return fail(err)
				}
			}
			lat := slices.Concat(lats...)
			slices.Sort(lat)
			fmt.Println("R", lat[len(lat)/2].Nanoseconds(), lat[len(lat)*99/100].Nanoseconds())
		case "cycles":
			// cycles N PROXY: N short sessions in a row through a second listener.
			count, _ := strconv.Atoi(f[1])
			sl, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				return fail(err)
			}
			fmt.Println("S2", sl.Addr())
			for range count {
				if err := peerCycle(f[2], sl); err != nil {
					return fail(err)
				}
			}
			sl.Close()
			fmt.Println("CYCLED")
		case "touch":
			one := []byte{1}
			for i := range n {
				if _, err := players[i].Write(one); err != nil {
					return fail(err)
				}
				if _, err := io.ReadFull(servers[i], one); err != nil {
					return fail(err)
				}
				if _, err := servers[i].Write(one); err != nil {
					return fail(err)
				}
				if _, err := io.ReadFull(players[i], one); err != nil {
					return fail(err)
				}
			}
			fmt.Println("TOUCHED")
		case "quit":
			for i := range n {
				players[i].Close()
				servers[i].Close()
			}
			return 0
		}
	}
	return 0
}

// peerCycle is one short session: connect, a byte each way, close both ends.
func peerCycle(proxy string, ln *net.TCPListener) error {
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		return err
	}
	player := c.(*net.TCPConn)
	defer player.Close()
	server, err := ln.AcceptTCP()
	if err != nil {
		return err
	}
	defer server.Close()
	one := []byte{1}
	if _, err := player.Write(one); err != nil {
		return err
	}
	if _, err := io.ReadFull(server, one); err != nil {
		return err
	}
	if _, err := server.Write(one); err != nil {
		return err
	}
	if _, err := io.ReadFull(player, one); err != nil {
		return err
	}
	// A clean end both ways, as a player quitting and the server closing do.
	player.CloseWrite()
	server.CloseWrite()
	if _, err := io.ReadAll(server); err != nil {
		return err
	}
	_, err = io.ReadAll(player)
	return err
}

// peerBulk writes total bytes from the player and reads them at the server.
func peerBulk(player, server *net.TCPConn, total int64) error {
	errc := make(chan error, 1)
	go func() {
		buf := make([]byte, 1<<20)
		for left := total; left > 0; {
			n := min(left, int64(len(buf)))
			if _, err := player.Write(buf[:n]); err != nil {
				errc <- err
				return
			}
			left -= n
		}
		errc <- nil
	}()
	buf := make([]byte, 1<<20)
	for got := int64(0); got < total; {
		n, err := server.Read(buf)
		if err != nil {
			return err
		}
		got += int64(n)
	}
	return <-errc
}

// peerRTT bounces size bytes player → server → player count times.
func peerRTT(player, server *net.TCPConn, count, size int) ([]time.Duration, error) {
	lat := make([]time.Duration, count)
	msg := make([]byte, size)
	for i := range count {
		start := time.Now()
		if _, err := player.Write(msg); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(server, msg); err != nil {
			return nil, err
		}
		if _, err := server.Write(msg); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(player, msg); err != nil {
			return nil, err
		}
		lat[i] = time.Since(start)
	}
	return lat, nil
}
