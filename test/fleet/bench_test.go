//go:build unix

package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/events"
)

// The fleet's benchmarks run the real binary against a real redis-server, like
// the end-to-end tests. Numbers and how to read them: docs/benchmarks.md.
//
//	go test -run '^$' -bench 'Fleet' -benchtime=100x ./test/fleet

// BenchmarkFleetPropagation is the delay between an operator's change on proxy a
// and proxy b applying it, one change per iteration (drain/enable, or ban/unban,
// alternately), seen through b's event stream. It reports the p50 and p99 from
// the request to a (what an operator waits for) and from a's answer.
func BenchmarkFleetPropagation(b *testing.B) {
	for _, kind := range []string{"drain", "ban"} {
		b.Run(kind, func(b *testing.B) {
			r := startRedis(b)
			one, two := plainBackend(b, "one"), plainBackend(b, "two")
			servers := map[string]string{"lobby": lobbyFile(one.Addr(), two.Addr())}
			pa := startProxy(b, proxyOpts{id: "a", redis: r, servers: servers})
			pb := startProxy(b, proxyOpts{id: "b", redis: r, servers: servers})
			ctx := context.Background()
			eventually(b, 10*time.Second, "both proxies in the fleet", func() bool {
				st, err := pb.client.Fleet(ctx)
				return err == nil && st.LiveProxies == 2
			})
			stream, err := pb.client.Events(ctx, events.BackendHealthChange, events.BanCreated, events.BanRemoved)
			if err != nil {
				b.Fatal(err)
			}
			defer stream.Close()
			var fromRequest, fromAnswer []time.Duration
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				var want func(admin.StreamEvent) bool
				switch {
				case kind == "drain" && i%2 == 0:
					_, err = pa.client.Drain(ctx, "lobby", one.Addr())
					want = healthTo(one.Addr(), "draining")
				case kind == "drain":
					_, err = pa.client.Enable(ctx, "lobby", one.Addr())
					want = healthTo(one.Addr(), "healthy")
				case i%2 == 0:
					_, err = pa.client.AddBan(ctx, admin.BanRequest{Type: "username", Value: "Bench", Reason: strconv.Itoa(i)})
					want = func(ev admin.StreamEvent) bool { return ev.Type == events.BanCreated }
				default:
					_, err = pa.client.RemoveBan(ctx, "username", "bench")
					want = func(ev admin.StreamEvent) bool { return ev.Type == events.BanRemoved }
				}
				if err != nil {
					b.Fatal(err)
				}
				answered := time.Now()
				for {
					ev, err := stream.Next()
					if err != nil {
						b.Fatal(err)
					}
					if want(ev) {
						break
					}
				}
				seen := time.Now()
				fromRequest = append(fromRequest, seen.Sub(start))
				fromAnswer = append(fromAnswer, seen.Sub(answered))
			}
			b.StopTimer()
			b.ReportMetric(msAt(fromRequest, 0.50), "p50-ms")
			b.ReportMetric(msAt(fromRequest, 0.99), "p99-ms")
			b.ReportMetric(msAt(fromAnswer, 0.50), "p50-after-answer-ms")
			b.ReportMetric(msAt(fromAnswer, 0.99), "p99-after-answer-ms")
		})
	}
}

func healthTo(addr, state string) func(admin.StreamEvent) bool {
	return func(ev admin.StreamEvent) bool {
		var hc events.HealthChange
		return ev.Type == events.BackendHealthChange && json.Unmarshal(ev.Data, &hc) == nil && hc.Address == addr && hc.To == state
	}
}

// msAt is the q-quantile of ds in milliseconds (nearest rank).
func msAt(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, int(q*float64(len(s))+0.5)-1)
	return float64(s[max(i, 0)].Microseconds()) / 1000
}

// BenchmarkFleetLogin is one login (handshake, login start, the backend's
// answer relayed) through a proxy without [fleet] (the baseline) and with it. The
// heartbeat is set to an hour so the Redis commands counted during the logins are
// the login path's own: the answer must be 0; "on-heartbeat-1s" adds the default
// heartbeat, whose commands (two a second plus the players that changed, in one
// pipeline) are then spread over the logins. proxy-cpu-us/login is the proxy
// process's CPU time per login (from /proc), which machine load does not skew.
func BenchmarkFleetLogin(b *testing.B) {
	for _, mode := range []string{"off", "on", "on-heartbeat-1s"} {
		b.Run("fleet="+mode, func(b *testing.B) {
			backend := plainBackend(b, "one")
			o := proxyOpts{id: "a", servers: map[string]string{"lobby": lobbyFile(backend.Addr())}, heartbeat: "1h", noFleet: mode == "off"}
			if mode == "on-heartbeat-1s" {
				o.heartbeat = "1s"
			}
			if mode != "off" {
				o.redis = startRedis(b)
			}
			p := startProxy(b, o)
			ctx := context.Background()
			if mode != "off" {
				eventually(b, 10*time.Second, "the proxy joined the fleet", func() bool {
					st, err := p.client.Fleet(ctx)
					return err == nil && st.Connected
				})
			}
			cmds0, _ := p.metric(b, "infrarust_fleet_redis_commands_total")
			cpu0 := procCPU(b, p.pid())
			b.ResetTimer()
			for i := range b.N {
				name := "Player" + strconv.Itoa(i%100000)
				text, err := loginText(ctx, p.proxyAddr, playHost, name)
				if err != nil || text != "You reached one (as "+name+")" {
					b.Fatalf("login: %q %v", text, err)
				}
			}
			b.StopTimer()
			cpu := procCPU(b, p.pid()) - cpu0
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "proxy-cpu-us/login")
			if mode != "off" {
				cmds, _ := p.metric(b, "infrarust_fleet_redis_commands_total")
				b.ReportMetric((cmds-cmds0)/float64(b.N), "redis-ops/login")
			}
		})
	}
}

// procCPU is a process's user+system CPU time from /proc (Linux); 0 elsewhere.
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) start after the last ')'.
	rest := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(rest) < 13 {
		b.Fatalf("unexpected /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseInt(rest[11], 10, 64)
	stime, _ := strconv.ParseInt(rest[12], 10, 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}
