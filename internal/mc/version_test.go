package mc

import (
	"slices"
	"testing"
)

func TestVersionTableIsOrderedAndUnique(t *testing.T) {
	ps := KnownProtocols()
	if ps[0] != OldestProtocol || ps[len(ps)-1] != NewestProtocol {
		t.Fatalf("table spans %v..%v, want %v..%v", ps[0], ps[len(ps)-1], OldestProtocol, NewestProtocol)
	}
	names := map[string]Protocol{}
	for i, p := range ps {
		if i > 0 && ps[i-1] >= p {
			t.Fatalf("protocol %d follows %d", p, ps[i-1])
		}
		for _, n := range p.Names() {
			if other, dup := names[n]; dup {
				t.Fatalf("%s names both %d and %d", n, other, p)
			}
			names[n] = p
			if back, ok := ParseVersion(n); !ok || back != p {
				t.Fatalf("ParseVersion(%q) = %d, %v; want %d", n, back, ok, p)
			}
		}
	}
}

func TestVersionFacts(t *testing.T) {
	// Each number is in minecraft-data's protocolVersions.json and Gate's
	// version table (26.3: minecraft-data's release tracker and the Void proxy).
	for name, want := range map[string]Protocol{
		"1.7.2": 4, "1.7.5": 4, "1.7.10": 5, "1.8.9": 47, "1.9.2": 109, "1.9.4": 110, "1.12.2": 340,
		"1.13.1": 401, "1.14.2": 485, "1.15.2": 578, "1.16.5": 754, "1.18.1": 757, "1.19.2": 760,
		"1.20.1": 763, "1.20.4": 765, "1.20.6": 766, "1.21.1": 767, "1.21.4": 769, "1.21.8": 772,
		"1.21.10": 773, "1.21.11": 774, "26.1": 775, "26.1.2": 775, "26.2": 776, "26.3": 777,
	} {
		if got, ok := ParseVersion(name); !ok || got != want {
			t.Errorf("ParseVersion(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, bad := range []string{"", "1.7", "1.7.1", "1.21.12", "26.4", "1.20.4.1", "x"} {
		if p, ok := ParseVersion(bad); ok {
			t.Errorf("ParseVersion(%q) = %d, want not found", bad, p)
		}
	}
	if p, ok := ParseVersion(" 1.20.4 "); !ok || p != V1_20_3 {
		t.Errorf("ParseVersion trims spaces: got %d, %v", p, ok)
	}
}

// node-minecraft-protocol 1.54.0 (the newest that runs on Node 20) supports
// these versions (src/version.js); the end-to-end tests can only use these.
func TestNodeMinecraftProtocolVersionsAreKnown(t *testing.T) {
	for _, n := range []string{"1.7.10", "1.8.8", "1.9.4", "1.10.2", "1.11.2", "1.12.2", "1.13.2", "1.14.4",
		"1.15.2", "1.16.5", "1.17.1", "1.18.2", "1.19", "1.19.2", "1.19.3", "1.19.4", "1.20", "1.20.1",
		"1.20.2", "1.20.4", "1.20.6", "1.21.1", "1.21.3", "1.21.4"} {
		p, ok := ParseVersion(n)
		if !ok || !p.Known() {
			t.Errorf("%s is not in the table", n)
		}
		if _, ok := RegistryFor(p); !ok {
			t.Errorf("%s has no registry", n)
		}
	}
}

func TestProtocolMethods(t *testing.T) {
	tests := []struct {
		p     Protocol
		str   string
		known bool
		names []string
	}{
		{V1_20_3, "1.20.3-1.20.4", true, []string{"1.20.3", "1.20.4"}},
		{V1_21_4, "1.21.4", true, []string{"1.21.4"}},
		{V1_7_2, "1.7.2-1.7.5", true, []string{"1.7.2", "1.7.3", "1.7.4", "1.7.5"}},
		{V26_1, "26.1-26.1.2", true, []string{"26.1", "26.1.1", "26.1.2"}},
		{766, "1.20.5-1.20.6", true, []string{"1.20.5", "1.20.6"}},
		{1234, "protocol 1234", false, nil},
		{-1, "protocol -1", false, nil},
	}
	for _, tc := range tests {
		if got := tc.p.String(); got != tc.str {
			t.Errorf("%d.String() = %q, want %q", tc.p, got, tc.str)
		}
		if tc.p.Known() != tc.known {
			t.Errorf("%d.Known() = %v", tc.p, !tc.known)
		}
		if got := tc.p.Names(); !slices.Equal(got, tc.names) {
			t.Errorf("%d.Names() = %v, want %v", tc.p, got, tc.names)
		}
	}
	// Names returns a copy the caller may change.
	n := V1_8.Names()
	n[0] = "changed"
	if V1_8.Names()[0] != "1.8" {
		t.Error("Names exposed the table")
	}
	if !V1_20_2.AtLeast(V1_20_2) || !V1_20_3.AtLeast(V1_20_2) || V1_20.AtLeast(V1_20_2) {
		t.Error("AtLeast is wrong")
	}
	if V1_20_2.Before(V1_20_2) || !V1_20.Before(V1_20_2) {
		t.Error("Before is wrong")
	}
}
