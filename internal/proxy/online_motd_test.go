package proxy

import (
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// [motd.online] is laid over the backend's answer while the backend answers: the
// text, version name, favicon and counts it sets replace the backend's, and what
// it leaves stays live (the player count moves with the backend, the protocol is
// the backend's). Modern and legacy pings alike; a backend that does not answer
// still shows the offline MOTD, never the online one.
func TestOnlineMOTDOverlaysTheBackendsAnswer(t *testing.T) {
	const favicon = "data:image/png;base64,iVBORw0KGgo="
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "backend text", Legacy: true, Online: 3, Max: 20})
	s := newServer("lobby", []string{"lobby.com"}, b.Addr())
	s.MOTD.Online = &config.MOTD{Text: "§aWelcome to the lobby", VersionName: "Lobby 1.21", MaxPlayers: 500, Favicon: favicon}
	s.MOTD.Offline = &config.MOTD{Text: "§cLobby is down"}
	s.ActiveHealth = &config.ActiveHealth{Enabled: false}
	tp := startProxy(t, func(c *config.Config) { c.StatusCache.TTL, c.StatusCache.MaxStale = 0, 0 }, s)

	st := pingVia(t, tp.addr, "lobby.com")
	if got := mc.DescriptionText(st.Description); got != "§aWelcome to the lobby" {
		t.Errorf("description %q, want the configured text", got)
	}
	if st.Version.Name != "Lobby 1.21" || st.Version.Protocol != 767 {
		t.Errorf("version %q protocol %d, want the configured name with the backend's protocol 767", st.Version.Name, st.Version.Protocol)
	}
	if st.Players.Online != 3 || st.Players.Max != 500 || st.Favicon != favicon {
		t.Errorf("players %d/%d favicon %q, want the backend's 3 online of the configured 500, the configured favicon", st.Players.Online, st.Players.Max, st.Favicon)
	}
	ls := legacyPingVia(t, tp.addr, "lobby.com")
	if ls.MOTD != "§aWelcome to the lobby" || ls.Version != "Lobby 1.21" || ls.Online != 3 || ls.Max != 500 {
		t.Errorf("legacy reply %+v, want the configured text, version and max over the backend's 3 online", ls)
	}

	b.SetOnline(9)
	if st := pingVia(t, tp.addr, "lobby.com"); st.Players.Online != 9 {
		t.Errorf("after the backend's count changed: %d online, want 9 (the count stays live)", st.Players.Online)
	}

	b.Close()
	if st := pingVia(t, tp.addr, "lobby.com"); mc.DescriptionText(st.Description) != "§cLobby is down" {
		t.Errorf("backend down: %q, want the offline MOTD", mc.DescriptionText(st.Description))
	}
}

// An [motd.online] that sets only the text leaves everything else the backend's.
func TestOnlineMOTDTextOnly(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "backend text", Online: 2, Max: 40})
	s := newServer("lobby", []string{"lobby.com"}, b.Addr())
	s.MOTD.Online = &config.MOTD{Text: "hello"}
	tp := startProxy(t, nil, s)
	st := pingVia(t, tp.addr, "lobby.com")
	if mc.DescriptionText(st.Description) != "hello" || st.Players.Online != 2 || st.Players.Max != 40 || st.Version.Name == "" || st.Version.Protocol != 767 {
		t.Fatalf("got %q %d/%d version %q/%d, want hello over the backend's 2/40 and its version", mc.DescriptionText(st.Description), st.Players.Online, st.Players.Max, st.Version.Name, st.Version.Protocol)
	}
}
