package ipfilter

import (
	"net/netip"
	"strings"
	"testing"
)

func TestAllowed(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []string
		ip          string
		want        bool
	}{
		{"no rules admit everyone", nil, nil, "203.0.113.7", true},
		{"no rules admit IPv6", nil, nil, "2001:db8::1", true},
		{"deny single IP", nil, []string{"203.0.113.7"}, "203.0.113.7", false},
		{"deny single IP leaves neighbours", nil, []string{"203.0.113.7"}, "203.0.113.8", true},
		{"deny CIDR", nil, []string{"203.0.113.0/24"}, "203.0.113.200", false},
		{"allow list admits its range", []string{"10.0.0.0/8"}, nil, "10.20.30.40", true},
		{"allow list rejects outsiders", []string{"10.0.0.0/8"}, nil, "11.0.0.1", false},
		{"allow list of v4 rejects v6", []string{"10.0.0.0/8"}, nil, "2001:db8::1", false},
		{"deny wins over allow", []string{"10.0.0.0/8"}, []string{"10.1.0.0/16"}, "10.1.2.3", false},
		{"deny wins over exact allow", []string{"10.1.2.3"}, []string{"10.0.0.0/8"}, "10.1.2.3", false},
		{"allow beside deny", []string{"10.0.0.0/8"}, []string{"10.1.0.0/16"}, "10.2.0.1", true},
		{"deny only does not imply allow list", nil, []string{"10.0.0.0/8"}, "192.0.2.1", true},
		{"v6 CIDR deny", nil, []string{"2001:db8::/32"}, "2001:db8:ffff::1", false},
		{"v6 CIDR allow", []string{"2001:db8::/32"}, nil, "2001:db9::1", false},
		{"v4-mapped client matches v4 deny", nil, []string{"203.0.113.0/24"}, "::ffff:203.0.113.9", false},
		{"v4-mapped client matches v4 allow", []string{"203.0.113.0/24"}, nil, "::ffff:203.0.113.9", true},
		{"v4-mapped deny entry matches v4 client", nil, []string{"::ffff:203.0.113.0/120"}, "203.0.113.9", false},
		{"v4-mapped single deny entry", nil, []string{"::ffff:203.0.113.9"}, "203.0.113.9", false},
		{"v4 entry does not match IPv4-compatible v6", nil, []string{"203.0.113.9"}, "::203.0.113.9", true},
		{"zoned client address", nil, []string{"fe80::/10"}, "fe80::1%eth0", false},
		{"host bits in CIDR are ignored", nil, []string{"10.1.2.3/8"}, "10.200.0.1", false},
		{"whitespace around entries", []string{" 10.0.0.1 "}, nil, "10.0.0.1", true},
		{"deny everything", nil, []string{"0.0.0.0/0", "::/0"}, "2001:db8::1", false},
		{"invalid client with allow list", []string{"0.0.0.0/0"}, nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(tt.allow, tt.deny)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			var ip netip.Addr
			if tt.ip != "" {
				ip = netip.MustParseAddr(tt.ip)
			}
			if got := f.Allowed(ip); got != tt.want {
				t.Fatalf("Allowed(%s) = %v, want %v", tt.ip, got, tt.want)
			}
		})
	}
}

func TestNilFilter(t *testing.T) {
	var f *Filter
	if !f.Allowed(netip.MustParseAddr("192.0.2.1")) || !f.Empty() {
		t.Fatal("nil filter must allow everyone and be empty")
	}
	g, err := New(nil, []string{"192.0.2.1"})
	if err != nil || g.Empty() {
		t.Fatalf("filter with a deny rule reported empty (err %v)", err)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []string
		wantInMsg   []string
	}{
		{"garbage", []string{"10.0.0.0/8", "not-an-ip"}, nil, []string{"allow list entry 2", `"not-an-ip"`}},
		{"bad CIDR length", nil, []string{"10.0.0.0/33"}, []string{"deny list entry 1", `"10.0.0.0/33"`, "CIDR"}},
		{"bad v6 CIDR", nil, []string{"2001:db8::/129"}, []string{"deny list entry 1", "2001:db8::/129"}},
		{"hostname", []string{"example.com"}, nil, []string{`"example.com"`}},
		{"empty entry", nil, []string{""}, []string{"deny list entry 1", "empty entry"}},
		{"zone", nil, []string{"fe80::1%eth0"}, []string{"zone"}},
		{"octet out of range", []string{"256.1.1.1"}, nil, []string{`"256.1.1.1"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(tt.allow, tt.deny)
			if err == nil {
				t.Fatalf("New accepted bad input, got %+v", f)
			}
			for _, w := range tt.wantInMsg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParsePrefixCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{"203.0.113.7", "203.0.113.7/32"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"::ffff:10.0.0.1", "10.0.0.1/32"},
		{"2001:DB8::1/64", "2001:db8::/64"},
		{"::ffff:0:0/80", "::/80"},
	}
	for _, tt := range tests {
		p, err := ParsePrefix(tt.in)
		if err != nil {
			t.Fatalf("ParsePrefix(%q): %v", tt.in, err)
		}
		if p.String() != tt.want {
			t.Errorf("ParsePrefix(%q) = %s, want %s", tt.in, p, tt.want)
		}
	}
}

func BenchmarkAllowed(b *testing.B) {
	f, err := New([]string{"10.0.0.0/8", "192.168.0.0/16", "2001:db8::/32"}, []string{"10.66.0.0/16", "203.0.113.0/24"})
	if err != nil {
		b.Fatal(err)
	}
	ip := netip.MustParseAddr("10.1.2.3")
	b.ReportAllocs()
	for b.Loop() {
		f.Allowed(ip)
	}
}
