package telemetry_test

import (
	"context"
	"net/netip"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/telemetry"
)

// discard is an exporter that drops batches, so the benchmark measures the spans,
// not a network.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkSession is one login's tracing: the session span, one dial and the end.
// "off" is a nil tracer ([telemetry] not enabled).
func BenchmarkSession(b *testing.B) {
	info := telemetry.SessionInfo{Server: "lobby", Username: "alice", ProxyMode: "passthrough", ClientIP: netip.MustParseAddr("192.0.2.1"), Host: "play.example.com", Protocol: 767}
	run := func(b *testing.B, tr *telemetry.Tracer) {
		b.ReportAllocs()
		ctx := context.Background()
		start := cpuTime()
		for b.Loop() {
			_, s := tr.StartSession(ctx, info)
			s.Dial("10.0.0.1:25565")(nil)
			s.SetBackend("10.0.0.1:25565")
			s.End("played", nil)
		}
		// Spans still in the batch queue are exported (to nowhere) within the
		// measurement: their cost is part of a traced login.
		_ = tr.Flush(ctx)
		reportCPU(b, start)
	}
	b.Run("off", func(b *testing.B) { run(b, nil) })
	for _, ratio := range []float64{1, 0.01} {
		name := "on"
		if ratio < 1 {
			name = "on_sampled_1pct"
		}
		b.Run(name, func(b *testing.B) {
			tr, err := telemetry.New(telemetry.Options{Config: config.Telemetry{Enabled: true, SampleRatio: ratio}, Exporter: discard{}})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Shutdown(context.Background())
			run(b, tr)
		})
	}
}
