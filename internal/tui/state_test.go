package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// Every state the balancer reports has its own glyph, colour and sort rank, so
// no state is shown as another one (an unchecked address as healthy) or as "?".
func TestEveryStateHasItsOwnLook(t *testing.T) {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.ANSI)
	st := newStyles(r)
	symbols, colours, ranks := map[string]balance.State{}, map[string]balance.State{}, map[int]balance.State{}
	for _, s := range balance.States() {
		sym := stateSymbol(s)
		if sym == "?" {
			t.Errorf("%s shows as ?", s)
		}
		if other, dup := symbols[sym]; dup {
			t.Errorf("%s and %s share the glyph %s", s, other, sym)
		}
		symbols[sym] = s
		c := st.state(s).Render("x")
		if other, dup := colours[c]; dup {
			t.Errorf("%s and %s share the colour %q", s, other, c)
		}
		colours[c] = s
		rk := stateRank(s)
		if other, dup := ranks[rk]; dup || rk < 0 {
			t.Errorf("%s has rank %d (shared with %q)", s, rk, other)
		}
		ranks[rk] = s
	}
	if !(stateRank(balance.StateDraining) < stateRank(balance.StateUnknown) && stateRank(balance.StateUnknown) < stateRank(balance.StateHealthy)) {
		t.Error("unknown must sort after draining and before healthy (worst first)")
	}
}

func TestFmtHealthy(t *testing.T) {
	for _, tc := range []struct {
		s    admin.ServerInfo
		want string
	}{
		{admin.ServerInfo{AddressCount: 3, HealthyCount: 3}, "3/3"},
		{admin.ServerInfo{AddressCount: 1, HealthyCount: 0, UnknownCount: 1}, "0/1 ○1"},
		{admin.ServerInfo{AddressCount: 4, HealthyCount: 1, UnknownCount: 2}, "1/4 ○2"},
	} {
		if got := fmtHealthy(tc.s); got != tc.want {
			t.Errorf("fmtHealthy(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// The help screen explains every state's glyph, unknown included.
func TestHelpListsEveryState(t *testing.T) {
	h, _ := loaded(t)
	h.keys("?")
	v := h.m.View()
	for _, s := range balance.States() {
		if !strings.Contains(v, stateSymbol(s)+" "+string(s)) {
			t.Errorf("help lacks %s %s:\n%s", stateSymbol(s), s, v)
		}
	}
}
