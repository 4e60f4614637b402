// Command mcbench measures Infrarust against the same workloads sent straight to
// the backend: bulk throughput, small-message latency, status and login storms,
// the memory of idle sessions, and for each proxy mode (passthrough, offline,
// offline-reframe, client_only) the relay throughput of play packets, full
// Minecraft logins and idle sessions. Everything runs on 127.0.0.1. With
// --binary the proxy is a child process and every proxied row also shows the
// proxy's CPU per unit of work, read from /proc/<pid>/stat.
//
//	go run ./bench/cmd/mcbench                      # in-process proxy, a few minutes
//	go run ./bench/cmd/mcbench --binary ./infrarust # the real binary as a child process (CPU per unit)
//	go run ./bench/cmd/mcbench --binary ./infrarust --forwarders goroutine,epoll --haproxy /usr/sbin/haproxy
//	go run ./bench/cmd/mcbench --binary ./infrarust --modes offline,client_only --gate ./gate
//	go run ./bench/cmd/mcbench --only status-cache-on-64 --cpuprofile cpu.pprof --memprofile allocs.pprof
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/infrarust-go/infrarust/bench"
	"github.com/infrarust-go/infrarust/internal/forward"
)

func main() {
	o := bench.Defaults()
	flag.StringVar(&o.Binary, "binary", "", "run this infrarust binary (with a generated config) instead of the in-process proxy")
	flag.DurationVar(&o.BulkTime, "bulk-time", o.BulkTime, "duration of each bulk throughput measurement")
	flag.Float64Var(&o.RelayRate, "relay-rate", 0, "pace the relay workloads' sender to this many MiB/s of packets, so every mode relays at one arrival rate (0: as fast as the sender can)")
	flag.IntVar(&o.Streams, "streams", o.Streams, "parallel streams of the multi-stream bulk case")
	flag.IntVar(&o.RTTCount, "rtt-count", o.RTTCount, "maximum round trips per latency measurement")
	flag.DurationVar(&o.RTTTime, "rtt-time", o.RTTTime, "maximum duration of each latency measurement")
	flag.IntVar(&o.RTTSize, "rtt-size", o.RTTSize, "message size for the latency measurement")
	flag.DurationVar(&o.StormTime, "storm-time", o.StormTime, "duration of each status/login storm")
	flag.IntVar(&o.Clients, "clients", o.Clients, "concurrent clients in the status/login storms")
	flag.IntVar(&o.Sessions, "sessions", o.Sessions, "idle proxied sessions for the memory figure (scaled down to RLIMIT_NOFILE)")
	flag.IntVar(&o.Rounds, "rounds", o.Rounds, "repeat each rate measurement and report the median")
	flag.IntVar(&o.ReframeThreshold, "reframe-threshold", o.ReframeThreshold, "backend compression threshold behind offline-reframe (the proxy's is 256; -1: backend compression off)")
	flag.IntVar(&o.Syscalls, "syscalls", 0, "with --binary: count the proxy's system calls over this many logins per login workload (perf, and strace -c for the breakdown)")
	flag.BoolVar(&o.Verify, "verify", false, "decode every relayed packet and check it against what was sent (slower)")
	forwarders := flag.String("forwarders", "", "comma-separated passthrough forwarders to compare side by side, one proxy each (goroutine, epoll, auto; default: the configuration's default)")
	flag.StringVar(&o.HAProxy, "haproxy", "", "also measure this haproxy binary (TCP mode) on the passthrough workloads")
	flag.StringVar(&o.Gate, "gate", "", "also measure this Gate binary (github.com/minekube/gate, full mode) on the offline and client_only workloads")
	flag.StringVar(&o.BaselineBinary, "baseline-binary", "", "with --binary: another infrarust build measured beside it on the passthrough workloads (rows [baseline])")
	flag.StringVar(&o.HandlerBinary, "handler-binary", "", "with --binary: a build of ./bench/cmd/infrarust-handler, the one-handler variant of the events workload")
	modes := flag.String("modes", "", "comma-separated proxy modes of the relay/mclogin/idle-modes/syscalls workloads (default all: "+strings.Join(bench.AllModes, ",")+")")
	only := flag.String("only", "", "comma-separated workloads to run (bulk-up-1, bulk-down-16, rtt, status-cache-on-64, status-cache-off-64, login-64, relay-up-1, relay-down-1, mclogin-64, memory, idle-modes, syscalls, events)")
	jsonOut := flag.String("json", "", "also write the result as JSON to this file")
	cpuProf := flag.String("cpuprofile", "", "write a CPU profile of the proxied runs of the selected workloads")
	memProf := flag.String("memprofile", "", "write an allocation profile (FILE) and its baseline (FILE.base) around the proxied runs; compare with pprof -diff_base")
	heapProf := flag.String("heapprofile", "", "write an in-use heap profile while the idle proxied sessions are open")
	flag.Parse()

	if *only != "" {
		o.Only = map[string]bool{}
		for _, w := range strings.Split(*only, ",") {
			o.Only[strings.TrimSpace(w)] = true
		}
	}
	if *modes != "" {
		for _, m := range strings.Split(*modes, ",") {
			m = strings.TrimSpace(m)
			if !slices.Contains(bench.AllModes, m) {
				fmt.Fprintf(os.Stderr, "mcbench: unknown mode %q (modes: %s)\n", m, strings.Join(bench.AllModes, ", "))
				os.Exit(2)
			}
			o.Modes = append(o.Modes, m)
		}
	}
	if *forwarders != "" {
		for _, f := range strings.Split(*forwarders, ",") {
			f = strings.TrimSpace(f)
			if _, err := forward.ParseKind(f); err != nil || f == "" {
				fmt.Fprintf(os.Stderr, "mcbench: --forwarders: %q is not a forwarder (goroutine, epoll, auto)\n", f)
				os.Exit(2)
			}
			o.Forwarders = append(o.Forwarders, f)
		}
	}
	o.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	if _, err := bench.RaiseFileLimit(); err != nil {
		fmt.Fprintln(os.Stderr, "mcbench: raising RLIMIT_NOFILE:", err)
	}

	var cpuFile *os.File
	if *cpuProf != "" || *memProf != "" {
		if *memProf != "" {
			runtime.MemProfileRate = 4096
		}
		// One profile spans from the first proxied run to the end: select one workload
		// with --only to profile just that storm.
		started := false
		o.BeforeWorkload = func(string) {
			if started {
				return
			}
			started = true
			if *memProf != "" {
				writeHeap(*memProf + ".base")
			}
			if *cpuProf != "" {
				f, err := os.Create(*cpuProf)
				if err == nil {
					err = pprof.StartCPUProfile(f)
				}
				if err != nil {
					fmt.Fprintf(os.Stderr, "mcbench: --cpuprofile: %v\n", err)
				} else {
					cpuFile = f
				}
			}
		}
	}

	if *heapProf != "" {
		// Every allocation sampled: an idle session's few KiB are below the
		// default rate's 512 KiB granularity.
		runtime.MemProfileRate = 1
		o.WhileOpen = func() {
			f, err := os.Create(*heapProf)
			if err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}
	fmt.Fprintf(os.Stderr, "mcbench: %d CPUs, %s\n", runtime.NumCPU(), runtime.Version())
	res, err := bench.Run(o)
	if cpuFile != nil {
		pprof.StopCPUProfile()
		cpuFile.Close()
	}
	if *memProf != "" {
		writeHeap(*memProf)
	}
	if res != nil {
		bench.WriteTable(os.Stdout, res)
		if *jsonOut != "" {
			b, _ := json.MarshalIndent(res, "", "  ")
			if werr := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); werr != nil {
				fmt.Fprintln(os.Stderr, "mcbench:", werr)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcbench:", err)
		os.Exit(1)
	}
}

func writeHeap(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcbench:", err)
		return
	}
	defer f.Close()
	_ = pprof.Lookup("allocs").WriteTo(f, 0)
}
