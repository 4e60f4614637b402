package proxy

import (
	"fmt"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// BenchmarkPick is one login's pick and release on a healthy 4-address pool, per
// strategy, through the allocation-free AcquireInto the login path can use.
func BenchmarkPick(b *testing.B) {
	addrs := make([]balance.Address, 4)
	for i := range addrs {
		addrs[i] = balance.Address{Address: fmt.Sprintf("10.0.0.%d:25565", i+1), Weight: i + 1}
	}
	now := time.Unix(1_700_000_000, 0)
	for _, s := range []balance.Strategy{balance.FirstAvailable, balance.RoundRobin, balance.LeastConn, balance.Latency, balance.Random} {
		b.Run(string(s), func(b *testing.B) {
			p := balance.NewPool(balance.Options{Strategy: s}, addrs, now)
			var l balance.Lease
			b.ReportAllocs()
			for b.Loop() {
				if !p.AcquireInto(&l, now, nil) {
					b.Fatal("no address")
				}
				l.Release(now)
			}
		})
	}
}
