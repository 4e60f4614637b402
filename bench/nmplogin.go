package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth/authtest"
)

// NMPLoginOptions configure NMPLogins.
type NMPLoginOptions struct {
	Binary  string // the infrarust binary
	NMPDir  string // test/nmp, with its npm packages installed
	Version string // Minecraft version of the clients and the backend
	Logins  int    // logins per mode in each round
	Clients int    // logins at once
	Rounds  int
	// Only, when set, runs that mode alone (passthrough or offline), for a
	// profiler attached to the proxy to see one mode's logins only.
	Only string
	// ClientOnly adds a client_only route (online-mode clients against a
	// stand-in session server in this process) and reports its login's extra
	// CPU over offline's.
	ClientOnly bool
	// Paired runs two proxy processes of the binary side by side, one mode
	// each (the two swap every round), and interleaves their logins in one
	// batch: both see the machine as it is at the same moment, so its drift
	// cancels out of each round's ratio instead of only between back-to-back
	// batches. Clients logins at once go to each.
	Paired bool
	Out    io.Writer
}

// routeHost is the host name of mode's route (a host name has no underscore).
func routeHost(mode string) string { return strings.ReplaceAll(mode, "_", "") + ".bench" }

// nmpModes are the routes NMPLogins compares, both to the same backend.
var nmpModes = []string{"passthrough", "offline"}

// ErrPairedAlone: Paired compares passthrough and offline only.
var ErrPairedAlone = errors.New("--paired compares passthrough and offline: not with --only or --client-only")

// NMPLogins measures the proxy's CPU per login with real clients and a real
// backend (node-minecraft-protocol: test/nmp's client.js and server.js), the
// yardstick issue 31 was filed with: the binary runs one passthrough and one
// offline route to one server.js, client.js logs players in through each in
// turn (the order alternating between rounds), and the proxy's CPU is read
// around each batch, to the nanosecond, with how many times its threads were
// put on a CPU (procSched). Many short rounds rather
// than a few long ones: the machine's speed drifts (a VM's neighbours), and
// each round's two batches, back to back, share the drift. A client counts
// once it spawned in the world, so the whole join is inside every figure. The
// clients send their brand and Client Information as soon as they are in
// configuration, as the vanilla client does (nmp's own client sends neither).
func NMPLogins(o NMPLoginOptions) error {
	if o.Paired && (o.Only != "" || o.ClientOnly) {
		return ErrPairedAlone
	}
	modes := nmpModes
	if o.ClientOnly {
		modes = append(slices.Clone(modes), "client_only")
	}
	if o.Only != "" {
		if !slices.Contains(modes, o.Only) {
			return fmt.Errorf("--only %q: the modes are %s", o.Only, strings.Join(modes, ", "))
		}
		modes = []string{o.Only}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port, err := StartNMPServer(ctx, o.NMPDir, o.Version, nil)
	if err != nil {
		return err
	}
	// The clients' joins and the proxy's hasJoined go to a stand-in here: its
	// work (it signs each answer's textures) is this process's, not the proxy's.
	ss, err := authtest.Start()
	if err != nil {
		return err
	}
	defer ss.Close()
	online := func(mode, name string) map[string]any {
		if mode != "client_only" {
			return nil
		}
		a := ss.AddAccount(name)
		return map[string]any{"online": true, "session-server": ss.URL, "access-token": a.AccessToken, "profile-id": a.ID.Undashed()}
	}
	nproxies := 1
	if o.Paired {
		nproxies = 2
	}
	var proxies []*child
	var binds []string
	for range nproxies {
		proxy, bind, err := startNMPProxy(o.Binary, ss.URL, port)
		if err != nil {
			return err
		}
		defer proxy.Close()
		proxies, binds = append(proxies, proxy), append(binds, bind)
	}
	cl, err := startNMPClient(ctx, o.NMPDir)
	if err != nil {
		return err
	}
	defer cl.close()

	how := ""
	if o.Paired {
		how = " per proxy, two proxies side by side (one mode each, swapped every round)"
	}
	fmt.Fprintf(o.Out, "nmplogin: %s clients (brand and Client Information at once, as vanilla) and backend (node-minecraft-protocol), %d logins per mode and round, %d at once%s; load average %s\n",
		o.Version, o.Logins, o.Clients, how, loadAverage())
	for _, bind := range binds { // warm-up: the proxies' pools, node's JIT
		for _, m := range modes {
			if _, err := cl.batch([]nmpTarget{{bind, m}}, o.Version, 30, o.Clients, online); err != nil {
				return err
			}
		}
	}
	perLogin, wakes := map[string][]float64{}, map[string][]float64{}
	for r := range o.Rounds {
		if o.Paired {
			if err := pairedRound(o, cl, r, proxies, binds, perLogin, wakes); err != nil {
				return err
			}
			continue
		}
		order := slices.Clone(modes)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, m := range order {
			cpu0, runs0, err := procSched(proxies[0].Pid())
			if err != nil {
				return err
			}
			start := time.Now()
			failed, err := cl.batch([]nmpTarget{{binds[0], m}}, o.Version, o.Logins, o.Clients, online)
			if err != nil {
				return err
			}
			took := time.Since(start)
			cpu1, runs1, err := procSched(proxies[0].Pid())
			if err != nil {
				return err
			}
			us := float64((cpu1 - cpu0).Microseconds()) / float64(o.Logins)
			runs := float64(runs1-runs0) / float64(o.Logins)
			perLogin[m] = append(perLogin[m], us)
			wakes[m] = append(wakes[m], runs)
			fmt.Fprintf(o.Out, "round %d %-12s %7.1f µs/login  %5.1f thread runs/login  %5.1f logins/s  %d failed\n", r+1, m, us, runs, float64(o.Logins)/took.Seconds(), failed)
		}
	}
	if o.Only != "" {
		return nil
	}
	mean := func(v []float64) float64 {
		var sum float64
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	}
	pt, off := mean(perLogin["passthrough"]), mean(perLogin["offline"])
	defer func() {
		if !o.ClientOnly {
			return
		}
		var extra []float64
		for r := range o.Rounds {
			extra = append(extra, perLogin["client_only"][r]-perLogin["offline"][r])
		}
		slices.Sort(extra)
		fmt.Fprintf(o.Out, "\n| client_only login (same rounds) | CPU per login | its extra over offline | each round's extra: median (range) | thread runs per login |\n|---|---:|---:|---|---:|\n| %s, %d at once | %.1f µs | %.1f µs | %.1f µs (%.1f–%.1f) | %.1f |\n",
			o.Version, o.Clients, mean(perLogin["client_only"]), mean(perLogin["client_only"])-off, extra[len(extra)/2], extra[0], extra[len(extra)-1], mean(wakes["client_only"]))
	}()
	// Each round's own ratio too: the two modes run back to back, so a drift of
	// the machine's speed between rounds cancels out of it.
	var ratios []float64
	for r := range o.Rounds {
		ratios = append(ratios, perLogin["offline"][r]/perLogin["passthrough"][r])
	}
	slices.Sort(ratios)
	rounds := fmt.Sprintf("%d rounds of %d", o.Rounds, o.Logins)
	if o.Paired {
		rounds += ", paired"
	}
	fmt.Fprintf(o.Out, "\n| proxy CPU per login (%s) | passthrough | offline | offline / passthrough | each round's: median (range) | thread runs per login: passthrough, offline |\n|---|---:|---:|---:|---|---|\n| %s, %d at once | %.1f µs | %.1f µs | **%.2f×** | %.2f× (%.2f–%.2f) | %.1f, %.1f |\n",
		rounds, o.Version, o.Clients, pt, off, off/pt, ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1], mean(wakes["passthrough"]), mean(wakes["offline"]))
	return nil
}

// startNMPProxy runs the binary in a directory of its own (its data, its
// listeners) with one route per mode to the backend on port, and returns it
// and the players' address.
func startNMPProxy(binary, sessionServer string, port int) (*child, string, error) {
	dir, addrs, err := childDir("nmplogin", 2, func(dir string, addrs []string) error {
		if err := os.Mkdir(filepath.Join(dir, "servers"), 0o755); err != nil {
			return err
		}
		cfg := fmt.Sprintf("bind = %q\nservers_dir = \"servers\"\n\n[web]\nbind = %q\n\n[auth]\nsession_server = %q\n", addrs[0], addrs[1], sessionServer)
		if err := os.WriteFile(filepath.Join(dir, "infrarust.toml"), []byte(cfg), 0o644); err != nil {
			return err
		}
		for _, m := range append(slices.Clone(nmpModes), "client_only") {
			srv := fmt.Sprintf("domains = [%q]\naddresses = [\"127.0.0.1:%d\"]\nproxy_mode = %q\n", routeHost(m), port, m)
			if err := os.WriteFile(filepath.Join(dir, "servers", m+".toml"), []byte(srv), 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	var plog bytes.Buffer
	proxy, err := startChild(dir, &plog, addrs[:1], binary, "serve", "-c", "infrarust.toml", "--log-level", "warn")
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("%w\n%s", err, plog.String())
	}
	return proxy, addrs[0], nil
}

// pairedRound is one round of --paired: proxy r%2 takes the offline logins,
// the other the passthrough ones, interleaved in one batch, and each proxy's
// CPU is read around it.
func pairedRound(o NMPLoginOptions, cl *nmpClient, r int, proxies []*child, binds []string, perLogin, wakes map[string][]float64) error {
	off, pt := r%2, 1-r%2
	targets := []nmpTarget{{binds[off], "offline"}, {binds[pt], "passthrough"}}
	var cpu0 [2]time.Duration
	var runs0 [2]int64
	for i, p := range proxies {
		var err error
		if cpu0[i], runs0[i], err = procSched(p.Pid()); err != nil {
			return err
		}
	}
	start := time.Now()
	failed, err := cl.batch(targets, o.Version, o.Logins, 2*o.Clients, func(string, string) map[string]any { return nil })
	if err != nil {
		return err
	}
	took := time.Since(start)
	for i, p := range proxies {
		cpu, runs, err := procSched(p.Pid())
		if err != nil {
			return err
		}
		m := "passthrough"
		if i == off {
			m = "offline"
		}
		us := float64((cpu - cpu0[i]).Microseconds()) / float64(o.Logins)
		w := float64(runs-runs0[i]) / float64(o.Logins)
		perLogin[m] = append(perLogin[m], us)
		wakes[m] = append(wakes[m], w)
		fmt.Fprintf(o.Out, "round %d %-12s %7.1f µs/login  %5.1f thread runs/login  (proxy %d)\n", r+1, m, us, w, i+1)
	}
	fmt.Fprintf(o.Out, "round %d both: %.1f logins/s, %d failed\n", r+1, float64(2*o.Logins)/took.Seconds(), failed)
	return nil
}

// nmpTarget is where a batch's logins go: a proxy's players' address and a route.
type nmpTarget struct{ addr, mode string }

// NMPEvent is one line server.js reports on stdout ("listening", "login", "join", ...).
type NMPEvent struct {
	Event    string
	Username string
	Port     int
}

// StartNMPServer runs test/nmp's server.js for version until ctx ends (and no
// longer than this process: it exits when its stdin closes) and returns the
// port it listens on; onEvent, when set, sees every event it reports after.
func StartNMPServer(ctx context.Context, nmpDir, version string, onEvent func(NMPEvent)) (int, error) {
	cmd := exec.CommandContext(ctx, "node", filepath.Join(nmpDir, "server.js"), "--version", version, "--port", "0", "--exit-with-stdin")
	// Held by cmd until Wait; closed with this process, which ends server.js.
	if _, err := cmd.StdinPipe(); err != nil {
		return 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("server.js: %w", err)
	}
	ready := make(chan int, 1)
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ev NMPEvent
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			if ev.Event == "listening" {
				ready <- ev.Port
			} else if onEvent != nil {
				onEvent(ev)
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case port := <-ready:
		return port, nil
	case <-exited:
		return 0, fmt.Errorf("server.js exited before listening (are test/nmp's npm packages installed? npm ci there): %s", nodeReason(stderr.String()))
	case <-time.After(30 * time.Second):
		return 0, errors.New("server.js did not listen within 30 s")
	}
}

// nodeReason picks node's one-line reason out of its output: the "Error: ..."
// line above a stack, else the first line (server.js's own complaints).
func nodeReason(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if l = strings.TrimSpace(l); strings.Contains(l, "Error") && !strings.HasPrefix(l, "at ") {
			return l
		}
	}
	if lines[0] == "" {
		return "no output"
	}
	return lines[0]
}

// nmpClient is test/nmp's client.js in its --serve mode: jobs on stdin, one
// result line each on stdout.
type nmpClient struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	next int
}

func startNMPClient(ctx context.Context, nmpDir string) (*nmpClient, error) {
	cmd := exec.CommandContext(ctx, "node", filepath.Join(nmpDir, "client.js"), "--serve")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("client.js: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	return &nmpClient{cmd: cmd, in: in, out: sc}, nil
}

func (c *nmpClient) close() {
	_ = c.in.Close()
	_ = c.cmd.Wait()
}

// batch logs n players in through each target, in turn (one login to each,
// then the next), at most conc at once, and returns how many failed; online
// gives a player's online-mode fields (nil: an offline client).
func (c *nmpClient) batch(targets []nmpTarget, version string, n, conc int, online func(mode, name string) map[string]any) (failed int, err error) {
	ports := make([]string, len(targets))
	for i, t := range targets {
		if _, ports[i], err = net.SplitHostPort(t.addr); err != nil {
			return 0, err
		}
	}
	total := n * len(targets)
	sent, running := 0, 0
	for done := 0; done < total; done++ {
		for running < conc && sent < total {
			c.next++
			name := fmt.Sprintf("nmp%d", c.next%100000)
			mode := targets[sent%len(targets)].mode
			job := map[string]any{"id": c.next, "port": ports[sent%len(targets)], "server-host": routeHost(mode), "version": version,
				"username": name, "timeout-ms": 30000, "client-info": true}
			for k, v := range online(mode, name) {
				job[k] = v
			}
			line, _ := json.Marshal(job)
			if _, err := c.in.Write(append(line, '\n')); err != nil {
				return failed, fmt.Errorf("client.js: %w", err)
			}
			sent++
			running++
		}
		if !c.out.Scan() {
			return failed, fmt.Errorf("client.js ended: %v", c.out.Err())
		}
		running--
		var res struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(c.out.Bytes(), &res); err != nil {
			return failed, fmt.Errorf("client.js said %q: %w", c.out.Text(), err)
		}
		if !res.OK {
			failed++
		}
	}
	return failed, nil
}
