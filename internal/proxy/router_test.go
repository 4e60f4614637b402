package proxy

import (
	"fmt"
	"testing"
)

func TestNormalizeHost(t *testing.T) {
	for in, want := range map[string]string{
		"Play.Example.COM":             "play.example.com",
		"play.example.com.":            "play.example.com",
		"play.example.com\x00FML\x00":  "play.example.com",
		"play.example.com\x00FML3\x00": "play.example.com",
		"play.example.com:25565":       "play.example.com",
		"localhost":                    "localhost",
		"::1":                          "::1",
	} {
		if got := NormalizeHost(in); got != want {
			t.Errorf("NormalizeHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRouterOrder(t *testing.T) {
	r := newRouter(map[string]string{
		"play.example.com": "exact",
		"*.example.com":    "wild",
		"*.eu.example.com": "eu",
		"mc?.example.com":  "numbered",
		"*":                "catchall",
	})
	for host, want := range map[string]string{
		"play.example.com":  "exact",
		"lobby.example.com": "wild",
		"a.eu.example.com":  "eu",
		"mc1.example.com":   "numbered",
		"other.net":         "catchall",
	} {
		if got, ok := r.lookup(host); !ok || got != want {
			t.Errorf("lookup(%q) = %q, %v; want %q", host, got, ok, want)
		}
	}
	if _, ok := newRouter(map[string]string{"a.com": "a"}).lookup("b.com"); ok {
		t.Error("unknown host matched")
	}
}

func BenchmarkRoute(b *testing.B) {
	domains := map[string]string{"play.example.com": "exact"}
	for i := 0; i < 100; i++ {
		domains[fmt.Sprintf("*.zone%d.example.com", i)] = fmt.Sprintf("s%d", i)
	}
	r := newRouter(domains)
	b.Run("exact", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r.lookup(NormalizeHost("Play.Example.com\x00FML\x00"))
		}
	})
	b.Run("100-wildcards", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r.lookup(NormalizeHost("a.zone99.example.com"))
		}
	})
}
