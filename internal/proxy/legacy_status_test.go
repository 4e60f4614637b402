package proxy

import (
	"bufio"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

func TestLegacyPings(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "legacy", MOTD: "old but gold", Legacy: true, Online: 3, Max: 9})
	tp := startProxy(t, func(c *config.Config) { c.DefaultMOTD.Text = "default here"; c.DefaultMOTD.MaxPlayers = 5 },
		newServer("legacy", []string{"old.example.com"}, b.Addr()))
	cases := []struct {
		ping mc.LegacyPing
		motd string
	}{
		{mc.LegacyPing{Form: mc.Legacy16, Protocol: 78, Host: "old.example.com", Port: 25565}, "old but gold"},
		{mc.LegacyPing{Form: mc.Legacy14}, "default here"},
		{mc.LegacyPing{Form: mc.LegacyBeta}, "default here"},
	}
	for _, tc := range cases {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write(mc.EncodeLegacyPing(tc.ping))
		reply, err := mc.ReadLegacyPingReply(bufio.NewReader(c))
		c.Close()
		if err != nil {
			t.Fatalf("%v: %v", tc.ping.Form, err)
		}
		if reply.MOTD != tc.motd {
			t.Errorf("%v: MOTD %q want %q", tc.ping.Form, reply.MOTD, tc.motd)
		}
	}
	if b.LegacyPings.Load() != 1 {
		t.Fatalf("backend saw %d legacy pings, want 1 (the 1.6 form routed by host)", b.LegacyPings.Load())
	}
}

// A rewrite keeps Forge's marker (the backend needs it to accept a modded client),
// and legacy clients are rewritten too: a 1.6 ping's MC|PingHost and a legacy
// login's host field.
func TestDomainRewriteKeepsForgeMarkerAndCoversLegacy(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "b"})
	hosts := make(chan string, 4)
	legacy := legacyHostRecorder(t, hosts)
	explicit := newServer("e", []string{"e.com"}, b.Addr())
	explicit.DomainRewrite = config.DomainRewrite{Mode: config.RewriteExplicit, Value: "internal.mc"}
	old := newServer("old", []string{"old.com"}, legacy)
	old.DomainRewrite = config.DomainRewrite{Mode: config.RewriteExplicit, Value: "legacy.internal"}
	tp := startProxy(t, nil, explicit, old)

	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write(mc.Handshake{ProtocolVersion: 767, ServerAddress: "e.com\x00FML3\x00", ServerPort: 25565, NextState: mc.StateLogin}.Encode())
	_, _ = c.Write(mc.LoginStart{Name: "Modder", HasUUID: true}.Encode(767))
	_, _ = mc.ReadFrame(bufio.NewReader(c), mc.MaxFrameSize)
	c.Close()
	if hs := b.Handshakes(); len(hs) != 1 || hs[0].ServerAddress != "internal.mc\x00FML3\x00" {
		t.Fatalf("backend saw %+v, want the rewritten host with the Forge marker", hs)
	}

	c, err = net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = legacyPingOn(c, "old.com")
	c.Close()
	c, err = net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = legacyLoginOn(c, "old.com", "Steve")
	c.Close()
	for _, what := range []string{"legacy ping", "legacy login"} {
		select {
		case h := <-hosts:
			if h != "legacy.internal" {
				t.Fatalf("%s reached the backend naming %q, want the rewritten host", what, h)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s never reached the backend", what)
		}
	}
}

// legacyHostRecorder is a legacy backend that reports the host each legacy ping
// or login names, then answers.
func legacyHostRecorder(t *testing.T, hosts chan<- string) string {
	t.Helper()
	return testutil.ServeTCP(t, func(c net.Conn) {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(c)
		first, err := br.Peek(1)
		if err != nil {
			return
		}
		if first[0] == 0xFE {
			ping, _, err := mc.ReadLegacyPing(br)
			if err != nil {
				return
			}
			hosts <- ping.Host
			_, _ = c.Write(mc.EncodeLegacyPingReply(ping.Form, mc.LegacyStatus{Protocol: 78, MOTD: "old"}))
			return
		}
		ll, _, err := mc.ReadLegacyLogin(br)
		if err != nil {
			return
		}
		hosts <- ll.Host
		_, _ = c.Write(mc.EncodeLegacyKick("bye"))
	})
}

// Pings with made-up protocol numbers cannot multiply the backend's status queries:
// 1 000 pings with 1 000 different numbers cost one backend query per known release
// they map to, and a client is told its own protocol back when the backend called
// the nearest release compatible.
func TestStatusCacheBoundsBackendQueries(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "lobby"})
	tp := startProxy(t, func(c *config.Config) { c.StatusCache.TTL = config.Duration(time.Hour) }, newServer("lobby", []string{"lobby.com"}, b.Addr()))
	query := func(protocol int32) int32 {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		body, _, err := mc.QueryStatus(c, "lobby.com", 25565, protocol)
		if err != nil {
			t.Fatalf("ping with protocol %d: %v", protocol, err)
		}
		st, err := mc.ParseStatusResponse(body)
		if err != nil {
			t.Fatal(err)
		}
		return st.Version.Protocol
	}
	for p := int32(100000); p < 101000; p++ {
		if got := query(p); got != p {
			t.Fatalf("ping with protocol %d was answered with protocol %d; want its own echoed", p, got)
		}
	}
	if n := b.StatusRequests.Load(); n != 1 {
		t.Fatalf("1 000 pings with 1 000 unknown protocol numbers made %d backend queries, want 1", n)
	}
	for _, p := range []int32{767, 767, 766} {
		if got := query(p); got != p {
			t.Fatalf("known protocol %d answered as %d", p, got)
		}
	}
	if n := b.StatusRequests.Load(); n != 3 {
		t.Fatalf("backend queries after two known releases: %d, want 3", n)
	}
}

// When no address answers a status ping the server list shows the offline MOTD,
// and the operator reads it in the log once, not per ping (nor never); the
// recovery is logged once too.
func TestOfflineMOTDIsLoggedOncePerChange(t *testing.T) {
	addr := laterAddress(t)
	var logs testutil.SyncBuffer
	s := newServer("lobby", []string{"lobby.com"}, addr)
	tp := startProxyOpts(t, func(c *config.Config) { c.StatusCache.TTL = 0; c.StatusCache.MaxStale = 0 },
		Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}, s)
	for range 3 {
		pingVia(t, tp.addr, "lobby.com")
	}
	if n := strings.Count(logs.String(), "shows the offline MOTD"); n != 1 {
		t.Fatalf("offline MOTD logged %d times for 3 pings, want once:\n%s", n, logs.String())
	}
	b, err := fakemc.Start(addr, fakemc.Options{Name: "back", MOTD: "back"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	for range 3 {
		if got := mc.DescriptionText(pingVia(t, tp.addr, "lobby.com").Description); got != "back" {
			t.Fatalf("after the backend came back: %q", got)
		}
	}
	if n := strings.Count(logs.String(), "answered by the backend again"); n != 1 {
		t.Fatalf("recovery logged %d times, want once:\n%s", n, logs.String())
	}
}
