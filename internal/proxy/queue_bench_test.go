package proxy

import (
	"fmt"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// queueDrainPlayers wait in a full server's queue in BenchmarkQueueDrain.
const queueDrainPlayers = 40

// BenchmarkQueueDrain: queueDrainPlayers wait in the limbo queue of a full
// server; then it has room for all of them and its status answer says so.
// players/s is how fast the queue empties into it (docs/benchmarks.md, issue 27:
// the queue drains at the server's pace, not one player at a time).
func BenchmarkQueueDrain(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		be := startPlayBackendAt(b, "127.0.0.1:0", "Q", 1)
		s := interceptedServer("full", config.ModeOffline, be.addr)
		s.LimboHandlers = []config.LimboHandler{config.LimboQueue}
		tp := startProxy(b, nil, s)
		first := joinAndPlay(b, tp.addr, "full.test", "First")
		for m := range first.messages {
			if m == "hello from Q" {
				break
			}
		}
		for j := 0; j < queueDrainPlayers; j++ {
			pc := joinAndPlay(b, tp.addr, "full.test", fmt.Sprintf("Queued%d", j))
			select {
			case <-pc.joins: // in the limbo
			case k := <-pc.kicked:
				b.Fatalf("kicked instead of queued: %q", k)
			case <-time.After(10 * time.Second):
				b.Fatal("not held in the limbo")
			}
		}
		be.mu.Lock()
		be.maxPlay = 0
		be.mu.Unlock()
		tp.state.Load().servers["full"].pool.ReportStatus(be.addr, 1, queueDrainPlayers+1, time.Now())
		start := time.Now()
		b.StartTimer()
		for deadline := start.Add(5 * time.Minute); be.joined.Load() < queueDrainPlayers+1; {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d queued players got in", be.joined.Load()-1, queueDrainPlayers)
			}
			time.Sleep(5 * time.Millisecond)
		}
		b.StopTimer()
		b.ReportMetric(float64(queueDrainPlayers)/time.Since(start).Seconds(), "players/s")
	}
}
