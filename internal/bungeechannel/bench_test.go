package bungeechannel

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
)

// A scoreboard polls PlayerCount; GetServer is the cheapest full request. Both
// against decoding alone, the floor any handler pays.
func BenchmarkHandle(b *testing.B) {
	px := network()
	for i := range 1000 {
		px.players = append(px.players, Player{Name: fmt.Sprintf("player%d", i), Server: "survival", Addr: netip.MustParseAddrPort("198.51.100.9:1")})
	}
	h := Handler{Proxy: px, Permissions: allowAll()}
	for _, c := range []struct{ name, req string }{
		{"decode-only", u("PlayerCount") + u("ALL")},
		{"GetServer", u("GetServer")},
		{"PlayerCount-ALL-1003", u("PlayerCount") + u("ALL")},
		{"UUIDOther", u("UUIDOther") + u("jeb_")},
	} {
		payload := []byte(c.req)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if c.name == "decode-only" {
					if _, err := DecodeRequest(payload); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if _, reply, err := h.Handle(context.Background(), notch, payload); err != nil || reply == nil {
					b.Fatal(reply, err)
				}
			}
		})
	}
}
