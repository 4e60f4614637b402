package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/infrarust-go/infrarust/internal/admin"
)

func TestHeaderShowsTheFleet(t *testing.T) {
	h, _ := loaded(t)
	if strings.Contains(ansi.Strip(h.m.View()), "fleet") {
		t.Fatal("the header mentions a fleet the proxy is not in")
	}
	snap := fixture()
	snap.Fleet = &admin.FleetStatus{Enabled: true, ID: "a", Connected: true, LiveProxies: 3, Players: 57}
	h.send(snapshotMsg{snap: snap})
	if v := ansi.Strip(h.m.View()); !strings.Contains(v, "fleet 3 proxies · 57 players") {
		t.Fatalf("connected fleet not in the header:\n%s", v)
	}
	snap.Fleet = &admin.FleetStatus{Enabled: true, ID: "a", PendingChanges: 2}
	h.send(snapshotMsg{snap: snap})
	if v := ansi.Strip(h.m.View()); !strings.Contains(v, "fleet ✖ cut off from Redis, 2 change(s) waiting") {
		t.Fatalf("disconnected fleet not in the header:\n%s", v)
	}
}
