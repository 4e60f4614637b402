package proxy

import (
	"sync/atomic"
	"testing"

	"github.com/infrarust-go/infrarust/internal/fakemc"
)

// fleetCount is the other proxies' players as a fleet would report them.
type fleetCount struct{ n atomic.Int64 }

func (f *fleetCount) RemoteOnline(string) int { return int(f.n.Load()) }

// fleet_player_count answers the server list with the players on every proxy of
// the fleet, per answer (the cached frame keeps the backend's count); a server
// without it keeps the backend's own count.
func TestFleetPlayerCountInStatus(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "b", MOTD: "hello", Online: 3, Max: 100})
	counted := newServer("counted", []string{"counted.test"}, b.Addr())
	counted.FleetPlayerCount = true
	plain := newServer("plain", []string{"plain.test"}, b.Addr())
	netA := newServer("net-a", []string{"net-a.test"}, b.Addr())
	netA.Network, netA.MOTD.PlayerCount = "a", "network"
	netB := newServer("net-b", []string{"net-b.test"}, b.Addr())
	netB.Network = "a"
	all := newServer("all", []string{"all.test"}, b.Addr())
	all.Network, all.MOTD.PlayerCount = "b", "fleet"
	fleet := &fleetCount{}
	fleet.n.Store(41)
	tp := startProxyOpts(t, nil, Options{Fleet: fleet}, counted, plain, netA, netB, all)
	// [motd] player_count: network counts the servers of net-a's network
	// (net-a, net-b: 41 each elsewhere), fleet counts every server (5).
	if st := pingVia(t, tp.addr, "net-a.test"); st.Players.Online != 82 {
		t.Errorf("network count: %d, want 82", st.Players.Online)
	}
	if st := pingVia(t, tp.addr, "all.test"); st.Players.Online != 5*41 {
		t.Errorf("fleet count: %d, want %d", st.Players.Online, 5*41)
	}

	st := pingVia(t, tp.addr, "counted.test")
	if st.Players.Online != 41 || st.Players.Max != 100 {
		t.Fatalf("counted: players %+v, want 41 online (0 here + 41 elsewhere) of the backend's 100", st.Players)
	}
	fleet.n.Store(7) // the next answer, from the same cached frame, counts again
	if st := pingVia(t, tp.addr, "counted.test"); st.Players.Online != 7 {
		t.Fatalf("second answer: %d online, want 7", st.Players.Online)
	}
	if st := pingVia(t, tp.addr, "plain.test"); st.Players.Online != 3 {
		t.Fatalf("plain: %d online, want the backend's 3", st.Players.Online)
	}
}
