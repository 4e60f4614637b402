package forwarding

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/auth"
)

func TestBungeeCordHostBytes(t *testing.T) {
	ip := netip.MustParseAddr("192.168.1.42")
	textures := auth.Property{Name: "textures", Value: "eyJ0aW1lc3RhbXAi=", Signature: "Yp4ql3MT+/=="}
	for _, tc := range []struct {
		name string
		host string
		addr netip.Addr
		p    auth.Profile
		want string
	}{
		{
			"online profile",
			"mc.example.com", ip, auth.Profile{ID: notchID, Name: "Notch", Properties: []auth.Property{textures}},
			"mc.example.com\x00192.168.1.42\x00069a79f444e94726a5befca90e38aaf5\x00" +
				`[{"name":"textures","value":"eyJ0aW1lc3RhbXAi=","signature":"Yp4ql3MT+/=="}]`,
		},
		{
			"offline profile: no properties part",
			"mc.example.com", ip, auth.Profile{ID: notchID, Name: "Notch"},
			"mc.example.com\x00192.168.1.42\x00069a79f444e94726a5befca90e38aaf5",
		},
		{
			"unsigned property leaves the signature out",
			"a", ip, auth.Profile{ID: notchID, Properties: []auth.Property{{Name: "k", Value: `<"quoted"&\>`}}},
			"a\x00192.168.1.42\x00069a79f444e94726a5befca90e38aaf5\x00" + `[{"name":"k","value":"<\"quoted\"&\\>"}]`,
		},
		{
			"forge marker cut from the host",
			"mc.example.com\x00FML2\x00", ip, auth.Profile{ID: notchID},
			"mc.example.com\x00192.168.1.42\x00069a79f444e94726a5befca90e38aaf5",
		},
		{
			"IPv6 and mapped addresses as Java prints them",
			"h", netip.MustParseAddr("::ffff:10.0.0.1"), auth.Profile{ID: notchID},
			"h\x0010.0.0.1\x00069a79f444e94726a5befca90e38aaf5",
		},
		{
			"IPv6 without its zone",
			"h", netip.MustParseAddr("2001:db8::1%eth0"), auth.Profile{ID: notchID},
			"h\x002001:db8::1\x00069a79f444e94726a5befca90e38aaf5",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BungeeCordHost(tc.host, tc.addr, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestBungeeGuardHostBytes(t *testing.T) {
	ip := netip.MustParseAddr("10.0.0.1")
	got, err := BungeeGuardHost("mc.example.com", ip, auth.Profile{ID: notchID}, "tok3n")
	if err != nil {
		t.Fatal(err)
	}
	want := "mc.example.com\x0010.0.0.1\x00069a79f444e94726a5befca90e38aaf5\x00" +
		`[{"name":"bungeeguard-token","value":"tok3n"}]`
	if got != want {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
	p := auth.Profile{ID: notchID, Properties: []auth.Property{{Name: "textures", Value: "v", Signature: "s"}}}
	got, err = BungeeGuardHost("mc.example.com", ip, p, "tok3n")
	if err != nil {
		t.Fatal(err)
	}
	want = "mc.example.com\x0010.0.0.1\x00069a79f444e94726a5befca90e38aaf5\x00" +
		`[{"name":"textures","value":"v","signature":"s"},{"name":"bungeeguard-token","value":"tok3n"}]`
	if got != want {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
	if len(p.Properties) != 1 {
		t.Fatal("the caller's profile was modified")
	}
	f, err := ParseBungeeHost(got)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := f.BungeeGuardToken(); err != nil || tok != "tok3n" {
		t.Fatalf("token = %q, %v", tok, err)
	}
}

func TestBungeeEncodeErrors(t *testing.T) {
	ip := netip.MustParseAddr("10.0.0.1")
	if _, err := BungeeGuardHost("h", ip, auth.Profile{ID: notchID}, ""); !errors.Is(err, ErrEmptySecret) {
		t.Errorf("empty token: %v", err)
	}
	if _, err := BungeeCordHost("h", netip.Addr{}, auth.Profile{ID: notchID}); err == nil {
		t.Error("unknown address accepted")
	}
	huge := auth.Profile{ID: notchID, Properties: []auth.Property{{Name: "textures", Value: strings.Repeat("A", MaxBungeeHostLen)}}}
	if _, err := BungeeCordHost("h", ip, huge); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("oversized address: %v", err)
	}
}

func TestParseBungeeHost(t *testing.T) {
	ok := "mc.example.com\x00192.168.1.42\x00069a79f444e94726a5befca90e38aaf5\x00" +
		`[{"name":"textures","value":"v","signature":"s"}]`
	f, err := ParseBungeeHost(ok)
	if err != nil {
		t.Fatal(err)
	}
	want := BungeeForward{
		Host: "mc.example.com", Addr: netip.MustParseAddr("192.168.1.42"), ID: notchID,
		Properties: []auth.Property{{Name: "textures", Value: "v", Signature: "s"}}, HasProperties: true,
	}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("\n got %+v\nwant %+v", f, want)
	}
	if _, err := f.BungeeGuardToken(); !errors.Is(err, ErrNoBungeeGuardToken) {
		t.Fatalf("no token: %v", err)
	}
	three, err := ParseBungeeHost("h\x00::1\x00069a79f444e94726a5befca90e38aaf5")
	if err != nil || three.HasProperties || three.Properties != nil || three.Addr != netip.IPv6Loopback() {
		t.Fatalf("three parts: %+v, %v", three, err)
	}
	two := "h\x00::1\x00069a79f444e94726a5befca90e38aaf5\x00" +
		`[{"name":"bungeeguard-token","value":"a"},{"name":"bungeeguard-token","value":"b"}]`
	if f, err := ParseBungeeHost(two); err != nil {
		t.Fatal(err)
	} else if _, err := f.BungeeGuardToken(); !errors.Is(err, ErrNoBungeeGuardToken) {
		t.Fatalf("two tokens: %v", err)
	}

	for name, bad := range map[string]string{
		"plain host":      "mc.example.com",
		"two parts":       "h\x001.2.3.4",
		"five parts":      "h\x001.2.3.4\x00069a79f444e94726a5befca90e38aaf5\x00[]\x00x",
		"not an IP":       "h\x00example.com\x00069a79f444e94726a5befca90e38aaf5",
		"dashed UUID":     "h\x001.2.3.4\x00069a79f4-44e9-4726-a5be-fca90e38aaf5",
		"short UUID":      "h\x001.2.3.4\x00069a79f4",
		"bad JSON":        "h\x001.2.3.4\x00069a79f444e94726a5befca90e38aaf5\x00[{",
		"object not list": "h\x001.2.3.4\x00069a79f444e94726a5befca90e38aaf5\x00{}",
		"nameless":        "h\x001.2.3.4\x00069a79f444e94726a5befca90e38aaf5\x00" + `[{"value":"v"}]`,
		"too long":        strings.Repeat("h", MaxBungeeHostLen) + "\x001.2.3.4\x00069a79f444e94726a5befca90e38aaf5",
	} {
		if _, err := ParseBungeeHost(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzParseBungeeHost(f *testing.F) {
	ip := netip.MustParseAddr("192.168.1.42")
	seed, _ := BungeeGuardHost("mc.example.com", ip, auth.Profile{ID: notchID, Properties: []auth.Property{{Name: "textures", Value: "v", Signature: "s"}}}, "t")
	f.Add(seed)
	seed, _ = BungeeCordHost("mc.example.com", ip, auth.Profile{ID: notchID})
	f.Add(seed)
	f.Add("h\x00::1\x00069a79f444e94726a5befca90e38aaf5\x00null")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseBungeeHost(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		again, err := BungeeCordHost(got.Host, got.Addr, auth.Profile{ID: got.ID, Properties: got.Properties})
		if err != nil {
			// Re-encoding normalises the JSON, which may grow it past the limit.
			if strings.Contains(err.Error(), "too large") {
				return
			}
			t.Fatalf("re-encode of %+v: %v", got, err)
		}
		back, err := ParseBungeeHost(again)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", again, err)
		}
		want := got
		want.Addr = want.Addr.Unmap().WithZone("")
		if len(want.Properties) == 0 { // an empty list is left out on the way back
			want.Properties, want.HasProperties = nil, false
		}
		if !reflect.DeepEqual(back, want) {
			t.Fatalf("round trip changed\n got %+v\nwant %+v", back, want)
		}
	})
}
