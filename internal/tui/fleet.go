package tui

import "fmt"

// fleetSegment is the header's word on the [fleet]: how many proxies and players
// the fleet has while this proxy reaches Redis, and that it is cut off (with the
// changes waiting to be published) while it does not. "" without [fleet].
func (m *Model) fleetSegment() string {
	f := m.snap.Fleet
	if !m.haveSnap || f == nil || !f.Enabled {
		return ""
	}
	st := m.st
	label := st.label.Render("fleet")
	if !f.Connected {
		text := "✖ cut off from Redis"
		if f.PendingChanges > 0 {
			text += fmt.Sprintf(", %d change(s) waiting", f.PendingChanges)
		}
		return label + " " + st.err.Render(text)
	}
	return label + " " + st.value.Render(fmt.Sprintf("%d proxies · %d players", f.LiveProxies, f.Players))
}
