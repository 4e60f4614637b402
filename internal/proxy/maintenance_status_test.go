package proxy

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// legacyPingVia runs a 1.6 legacy ping for host through the proxy.
func legacyPingVia(t *testing.T, proxyAddr, host string) mc.LegacyStatus {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxyAddr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(mc.EncodeLegacyPing(mc.LegacyPing{Form: mc.Legacy16, Protocol: 78, Host: host, Port: 25565})); err != nil {
		t.Fatal(err)
	}
	st, err := mc.ReadLegacyPingReply(bufio.NewReader(c))
	if err != nil {
		t.Fatalf("legacy ping via proxy for %q: %v", host, err)
	}
	return st
}

// backendContacts counts the connections a fake backend was asked anything on:
// every modern connection sends a handshake, every legacy ping is counted.
func backendContacts(b *fakemc.Server) int {
	return len(b.Handshakes()) + int(b.LegacyPings.Load())
}

// While a server is in maintenance the server list says so, without a status
// connection to its backend, in the modern and the legacy ping alike; the answer
// claims a protocol no client has, so clients show the version name in red. When
// the maintenance ends the backend answers again: not an answer cached before it,
// even with an hour-long cache.
func TestMaintenanceStatus(t *testing.T) {
	const favicon = "data:image/png;base64,iVBORw0KGgo="
	cases := []struct {
		name          string
		motd          *config.MOTD
		text, version string
		max           int
		favicon       string
	}{
		{"built-in", nil, "§clobby is under maintenance — please come back later", "Maintenance", 0, ""},
		{"configured", &config.MOTD{Text: "§6Back at 18:00 UTC", MaxPlayers: 50, Favicon: favicon},
			"§6Back at 18:00 UTC", "Maintenance", 50, favicon},
		{"configured version", &config.MOTD{VersionName: "§4Closed"},
			"§clobby is under maintenance — please come back later", "§4Closed", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "open for business", Legacy: true, Online: 3})
			s := newServer("lobby", []string{"lobby.com"}, b.Addr())
			s.MOTD.Maintenance = tc.motd
			s.ActiveHealth = &config.ActiveHealth{Enabled: false}
			tp := startProxy(t, func(c *config.Config) { c.StatusCache.TTL = config.Duration(time.Hour) }, s)

			if st := pingVia(t, tp.addr, "lobby.com"); mc.DescriptionText(st.Description) != "open for business" || st.Players.Online != 3 {
				t.Fatalf("before maintenance: %q with %d online, want the backend's answer", mc.DescriptionText(st.Description), st.Players.Online)
			}
			if err := tp.SetMaintenance("lobby", true); err != nil {
				t.Fatal(err)
			}
			before := backendContacts(b)
			for range 3 {
				st := pingVia(t, tp.addr, "lobby.com")
				if got := mc.DescriptionText(st.Description); got != tc.text {
					t.Errorf("maintenance MOTD %q, want %q", got, tc.text)
				}
				if st.Version.Name != tc.version || st.Version.Protocol != closedProtocol {
					t.Errorf("maintenance version %q protocol %d, want %q protocol %d", st.Version.Name, st.Version.Protocol, tc.version, closedProtocol)
				}
				if st.Players.Max != tc.max || st.Players.Online != 0 || st.Favicon != tc.favicon {
					t.Errorf("maintenance players %d/%d favicon %q, want 0/%d %q", st.Players.Online, st.Players.Max, st.Favicon, tc.max, tc.favicon)
				}
				ls := legacyPingVia(t, tp.addr, "lobby.com")
				if ls.MOTD != tc.text || ls.Version != tc.version || ls.Protocol != closedProtocol || ls.Max != tc.max {
					t.Errorf("legacy maintenance reply %+v, want MOTD %q version %q protocol %d max %d", ls, tc.text, tc.version, closedProtocol, tc.max)
				}
			}
			if n := backendContacts(b) - before; n != 0 {
				t.Fatalf("the backend was asked %d times during maintenance; pings must not reach it", n)
			}

			b.SetOnline(7) // the backend changed while it was closed
			if err := tp.SetMaintenance("lobby", false); err != nil {
				t.Fatal(err)
			}
			st := pingVia(t, tp.addr, "lobby.com")
			if got := mc.DescriptionText(st.Description); got != "open for business" || st.Players.Online != 7 || st.Version.Protocol != 767 {
				t.Fatalf("after maintenance: %q, %d online, protocol %d; want the backend's fresh answer (7 online, protocol 767)",
					got, st.Players.Online, st.Version.Protocol)
			}
			if ls := legacyPingVia(t, tp.addr, "lobby.com"); ls.MOTD != "open for business" || ls.Online != 7 {
				t.Fatalf("legacy after maintenance: %+v, want the backend's answer", ls)
			}
		})
	}
}

// Only a change of maintenance throws the status cache away: taking a server
// out of maintenance that was not in it keeps its cached answer.
func TestMaintenanceOffWhenOffKeepsStatusCache(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "open"})
	tp := startProxy(t, func(c *config.Config) { c.StatusCache.TTL = config.Duration(time.Hour) },
		newServer("lobby", []string{"lobby.com"}, b.Addr()))
	pingVia(t, tp.addr, "lobby.com")
	if err := tp.SetMaintenance("lobby", false); err != nil {
		t.Fatal(err)
	}
	pingVia(t, tp.addr, "lobby.com")
	if n := b.StatusRequests.Load(); n != 1 {
		t.Fatalf("backend saw %d status requests, want 1: nothing changed, the cached answer stands", n)
	}
}

// Maintenance outranks a managed server's state: a sleeping server in
// maintenance shows the maintenance MOTD, not "join to wake it up" (a join would
// not get in).
func TestMaintenanceOutranksManagedMOTD(t *testing.T) {
	s, _ := managedServer(t, "sleepy", "sleepy.com")
	m := newFakeManager(map[string]string{"sleepy": "sleeping"}, nil)
	tp := startProxyOpts(t, nil, Options{Manager: m}, s)
	mustPing(t, tp.addr, direct, "sleepy.com", "§7Sleeping — join to wake it up")
	if err := tp.SetMaintenance("sleepy", true); err != nil {
		t.Fatal(err)
	}
	mustPing(t, tp.addr, direct, "sleepy.com", "§csleepy is under maintenance — please come back later")
	if n := m.ensured.Load(); n != 0 {
		t.Fatalf("pings called EnsureStarted %d times", n)
	}
}
