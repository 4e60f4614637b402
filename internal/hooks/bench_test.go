package hooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/hooks"
)

// sink keeps the compiler from removing the work a benchmark measures.
var sink hooks.Result

// BenchmarkFire is the cost of one event point in the proxy. "baseline" builds the
// same event with no dispatcher call at all; the rest are ratios against it:
// nil_dispatcher (no extensions configured) and no_handlers (a dispatcher with
// nothing for this event) must cost ~0 over it and allocate nothing.
func BenchmarkFire(b *testing.B) {
	ctx := context.Background()
	c := hooks.Connection{ID: 1, ClientIP: netip.MustParseAddr("192.0.2.1"), Host: "play.example.com", Protocol: 767, ProxyMode: "passthrough"}
	names := []string{"alice", "bob", "carol", "dave"}
	dispatcher := func(b *testing.B, o hooks.Options) *hooks.Dispatcher {
		d, err := hooks.New(o)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			// Whatever is still queued is not part of the measurement.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = d.Close(ctx)
		})
		return d
	}
	loop := func(b *testing.B, d *hooks.Dispatcher) {
		b.ReportAllocs()
		i := 0
		start := cpuTime()
		for b.Loop() {
			i++
			sink = hooks.Fire(d, ctx, &hooks.PreLogin{Connection: c, Username: names[i&3], Server: "lobby"})
		}
		reportCPU(b, start)
	}
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		start := cpuTime()
		for b.Loop() {
			i++
			ev := hooks.PreLogin{Connection: c, Username: names[i&3], Server: "lobby"}
			sink = ev.Result()
		}
		reportCPU(b, start)
	})
	b.Run("nil_dispatcher", func(b *testing.B) { loop(b, nil) })
	b.Run("no_handlers", func(b *testing.B) {
		// Something is registered, for another event: the common case of a proxy
		// with a Disconnect logger firing PreLogin.
		reg := hooks.NewRegistry()
		hooks.On(reg, "other", func(context.Context, *hooks.Disconnect) {})
		loop(b, dispatcher(b, hooks.Options{Handlers: reg}))
	})
	b.Run("one_handler", func(b *testing.B) {
		reg := hooks.NewRegistry()
		hooks.On(reg, "noop", func(_ context.Context, e *hooks.PreLogin) {
			if e.Username == "mallory" {
				e.Deny("no")
			}
		})
		loop(b, dispatcher(b, hooks.Options{Handlers: reg}))
	})
	b.Run("deciding_webhook_loopback", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"action":"continue"}`))
		}))
		b.Cleanup(srv.Close) // after the dispatcher's (cleanups run last-in first-out)
		loop(b, dispatcher(b, hooks.Options{Webhooks: []config.Webhook{{URL: srv.URL, Secret: "k", Decide: true, Events: []string{"pre_login"}}}}))
	})
	b.Run("notifying_webhook_enqueue", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		b.Cleanup(srv.Close)
		loop(b, dispatcher(b, hooks.Options{Webhooks: []config.Webhook{{URL: srv.URL, Events: []string{"pre_login"}, QueueSize: 1 << 16}}}))
	})
}
