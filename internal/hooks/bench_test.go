package hooks

import (
	"context"
	"net/netip"
	"testing"
)

// sink keeps the compiler from removing the work a benchmark measures.
var sink Result

//go:noinline
func loginFields(name string) (Connection, string) {
	return Connection{ID: 1, ClientIP: netip.MustParseAddr("192.0.2.1"), Host: "play.example.com", Protocol: 767, ProxyMode: "passthrough"}, name
}

// BenchmarkFire measures the call sites' cost; "none" is the baseline: the same
// event built with no dispatcher call at all.
func BenchmarkFire(b *testing.B) {
	ctx := context.Background()
	empty, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	reg := NewRegistry()
	On(reg, "noop", func(context.Context, *PreLogin) {})
	one, err := New(Options{Handlers: reg})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, n := loginFields("alice")
			ev := PreLogin{Connection: c, Username: n, Server: "lobby"}
			sink = ev.Result()
		}
	})
	b.Run("nil_dispatcher", func(b *testing.B) {
		b.ReportAllocs()
		var d *Dispatcher
		for b.Loop() {
			c, n := loginFields("alice")
			sink = Fire(d, ctx, &PreLogin{Connection: c, Username: n, Server: "lobby"})
		}
	})
	b.Run("no_handlers", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, n := loginFields("alice")
			sink = Fire(empty, ctx, &PreLogin{Connection: c, Username: n, Server: "lobby"})
		}
	})
	b.Run("one_handler", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, n := loginFields("alice")
			sink = Fire(one, ctx, &PreLogin{Connection: c, Username: n, Server: "lobby"})
		}
	})
}
