package mc

import (
	"strconv"
	"strings"
)

// Protocol is a Minecraft Java protocol version number as sent in the
// handshake. Version-dependent encoders and the packet registry take it so a
// session decides every wire-format quirk from the one number the client sent.
type Protocol int32

// Release protocol numbers from 1.7.2 to the newest release. Each constant is
// named after the first release that speaks it; the releases sharing a number
// are listed in versionTable. Sources: minecraft-data's protocolVersions.json
// (to 26.2), Gate's and ViaVersion's version tables (to 26.2), and the release
// announcements of 26.3 (protocol 777, released 2026-09-15).
const (
	V1_7_2   Protocol = 4   // 1.7.2–1.7.5
	V1_7_6   Protocol = 5   // 1.7.6–1.7.10
	V1_8     Protocol = 47  // 1.8–1.8.9
	V1_9     Protocol = 107 // 1.9
	V1_9_1   Protocol = 108 // 1.9.1
	V1_9_2   Protocol = 109 // 1.9.2
	V1_9_3   Protocol = 110 // 1.9.3–1.9.4
	V1_10    Protocol = 210 // 1.10–1.10.2
	V1_11    Protocol = 315 // 1.11
	V1_11_1  Protocol = 316 // 1.11.1–1.11.2
	V1_12    Protocol = 335 // 1.12
	V1_12_1  Protocol = 338 // 1.12.1
	V1_12_2  Protocol = 340 // 1.12.2
	V1_13    Protocol = 393 // 1.13
	V1_13_1  Protocol = 401 // 1.13.1
	V1_13_2  Protocol = 404 // 1.13.2
	V1_14    Protocol = 477 // 1.14
	V1_14_1  Protocol = 480 // 1.14.1
	V1_14_2  Protocol = 485 // 1.14.2
	V1_14_3  Protocol = 490 // 1.14.3
	V1_14_4  Protocol = 498 // 1.14.4
	V1_15    Protocol = 573 // 1.15
	V1_15_1  Protocol = 575 // 1.15.1
	V1_15_2  Protocol = 578 // 1.15.2
	V1_16    Protocol = 735 // 1.16
	V1_16_1  Protocol = 736 // 1.16.1
	V1_16_2  Protocol = 751 // 1.16.2
	V1_16_3  Protocol = 753 // 1.16.3
	V1_16_4  Protocol = 754 // 1.16.4–1.16.5
	V1_17    Protocol = 755 // 1.17
	V1_17_1  Protocol = 756 // 1.17.1
	V1_18    Protocol = 757 // 1.18–1.18.1
	V1_18_2  Protocol = 758 // 1.18.2
	V1_19    Protocol = 759 // 1.19
	V1_19_1  Protocol = 760 // 1.19.1–1.19.2
	V1_19_3  Protocol = 761 // 1.19.3
	V1_19_4  Protocol = 762 // 1.19.4
	V1_20    Protocol = 763 // 1.20–1.20.1
	V1_20_2  Protocol = 764 // 1.20.2
	V1_20_3  Protocol = 765 // 1.20.3–1.20.4
	V1_20_5  Protocol = 766 // 1.20.5–1.20.6
	V1_21    Protocol = 767 // 1.21–1.21.1
	V1_21_2  Protocol = 768 // 1.21.2–1.21.3
	V1_21_4  Protocol = 769 // 1.21.4
	V1_21_5  Protocol = 770 // 1.21.5
	V1_21_6  Protocol = 771 // 1.21.6
	V1_21_7  Protocol = 772 // 1.21.7–1.21.8
	V1_21_9  Protocol = 773 // 1.21.9–1.21.10
	V1_21_11 Protocol = 774 // 1.21.11
	V26_1    Protocol = 775 // 26.1–26.1.2
	V26_2    Protocol = 776 // 26.2
	V26_3    Protocol = 777 // 26.3
)

// OldestProtocol and NewestProtocol bound the table, for "supported versions"
// messages and for tests that walk every version.
const (
	OldestProtocol = V1_7_2
	NewestProtocol = V26_3
)

// versionTable lists every release protocol in ascending order with the
// release names that speak it.
var versionTable = []struct {
	p     Protocol
	names []string
}{
	{V1_7_2, []string{"1.7.2", "1.7.3", "1.7.4", "1.7.5"}},
	{V1_7_6, []string{"1.7.6", "1.7.7", "1.7.8", "1.7.9", "1.7.10"}},
	{V1_8, []string{"1.8", "1.8.1", "1.8.2", "1.8.3", "1.8.4", "1.8.5", "1.8.6", "1.8.7", "1.8.8", "1.8.9"}},
	{V1_9, []string{"1.9"}},
	{V1_9_1, []string{"1.9.1"}},
	{V1_9_2, []string{"1.9.2"}},
	{V1_9_3, []string{"1.9.3", "1.9.4"}},
	{V1_10, []string{"1.10", "1.10.1", "1.10.2"}},
	{V1_11, []string{"1.11"}},
	{V1_11_1, []string{"1.11.1", "1.11.2"}},
	{V1_12, []string{"1.12"}},
	{V1_12_1, []string{"1.12.1"}},
	{V1_12_2, []string{"1.12.2"}},
	{V1_13, []string{"1.13"}},
	{V1_13_1, []string{"1.13.1"}},
	{V1_13_2, []string{"1.13.2"}},
	{V1_14, []string{"1.14"}},
	{V1_14_1, []string{"1.14.1"}},
	{V1_14_2, []string{"1.14.2"}},
	{V1_14_3, []string{"1.14.3"}},
	{V1_14_4, []string{"1.14.4"}},
	{V1_15, []string{"1.15"}},
	{V1_15_1, []string{"1.15.1"}},
	{V1_15_2, []string{"1.15.2"}},
	{V1_16, []string{"1.16"}},
	{V1_16_1, []string{"1.16.1"}},
	{V1_16_2, []string{"1.16.2"}},
	{V1_16_3, []string{"1.16.3"}},
	{V1_16_4, []string{"1.16.4", "1.16.5"}},
	{V1_17, []string{"1.17"}},
	{V1_17_1, []string{"1.17.1"}},
	{V1_18, []string{"1.18", "1.18.1"}},
	{V1_18_2, []string{"1.18.2"}},
	{V1_19, []string{"1.19"}},
	{V1_19_1, []string{"1.19.1", "1.19.2"}},
	{V1_19_3, []string{"1.19.3"}},
	{V1_19_4, []string{"1.19.4"}},
	{V1_20, []string{"1.20", "1.20.1"}},
	{V1_20_2, []string{"1.20.2"}},
	{V1_20_3, []string{"1.20.3", "1.20.4"}},
	{V1_20_5, []string{"1.20.5", "1.20.6"}},
	{V1_21, []string{"1.21", "1.21.1"}},
	{V1_21_2, []string{"1.21.2", "1.21.3"}},
	{V1_21_4, []string{"1.21.4"}},
	{V1_21_5, []string{"1.21.5"}},
	{V1_21_6, []string{"1.21.6"}},
	{V1_21_7, []string{"1.21.7", "1.21.8"}},
	{V1_21_9, []string{"1.21.9", "1.21.10"}},
	{V1_21_11, []string{"1.21.11"}},
	{V26_1, []string{"26.1", "26.1.1", "26.1.2"}},
	{V26_2, []string{"26.2"}},
	{V26_3, []string{"26.3"}},
}

// KnownProtocols returns every release protocol from OldestProtocol to
// NewestProtocol in ascending order, for docs, tests and version pickers.
func KnownProtocols() []Protocol {
	out := make([]Protocol, len(versionTable))
	for i, v := range versionTable {
		out[i] = v.p
	}
	return out
}

func versionIndex(p Protocol) int {
	lo, hi := 0, len(versionTable)
	for lo < hi {
		m := (lo + hi) / 2
		if versionTable[m].p < p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(versionTable) && versionTable[lo].p == p {
		return lo
	}
	return -1
}

// Known reports whether p is a release protocol in the table; the intercepted
// modes refuse anything else because its packet ids are unknown.
func (p Protocol) Known() bool { return versionIndex(p) >= 0 }

// AtLeast reports whether p is q or newer, the one comparison version quirks need.
func (p Protocol) AtLeast(q Protocol) bool { return p >= q }

// Before reports whether p is older than q.
func (p Protocol) Before(q Protocol) bool { return p < q }

// Names returns the release names that speak p ("1.20.3", "1.20.4"), or nil
// for an unknown protocol.
func (p Protocol) Names() []string {
	i := versionIndex(p)
	if i < 0 {
		return nil
	}
	return append([]string(nil), versionTable[i].names...)
}

// String names p for logs and kick messages: "1.20.3-1.20.4", "1.21.4", or
// "protocol 1234" when p is not a known release.
func (p Protocol) String() string {
	i := versionIndex(p)
	if i < 0 {
		return "protocol " + strconv.Itoa(int(p))
	}
	n := versionTable[i].names
	if len(n) == 1 {
		return n[0]
	}
	return n[0] + "-" + n[len(n)-1]
}

// ParseVersion maps a release name ("1.20.4", " 26.1.2 ") to its protocol, so
// configuration and tests can name versions the way players do.
func ParseVersion(name string) (Protocol, bool) {
	name = strings.TrimSpace(name)
	for _, v := range versionTable {
		for _, n := range v.names {
			if n == name {
				return v.p, true
			}
		}
	}
	return 0, false
}
