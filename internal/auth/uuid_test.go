package auth

import (
	"errors"
	"testing"
)

// Offline UUIDs as Java's UUID.nameUUIDFromBytes computes them; the values are
// the ones servers log for these names in offline mode.
func TestOfflineUUIDKnownValues(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"Notch", "b50ad385-829d-3141-a216-7e7d7539ba7f"},
		{"Steve", "5627dd98-e6be-3c21-b8a8-e92344183641"},
		{"Alex", "36532b5e-c442-3dbb-a24c-c7e55d0f979a"},
		{"Dinnerbone", "4d258a81-2358-3084-8166-05b9faccad80"},
	} {
		if got := OfflineUUID(tc.name).String(); got != tc.want {
			t.Errorf("OfflineUUID(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
	// Case matters: offline servers treat "notch" as another player.
	if OfflineUUID("notch") == OfflineUUID("Notch") {
		t.Error("OfflineUUID ignores case; vanilla does not")
	}
}

func TestParseUUID(t *testing.T) {
	want := UUID{0x06, 0x9a, 0x79, 0xf4, 0x44, 0xe9, 0x47, 0x26, 0xa5, 0xbe, 0xfc, 0xa9, 0x0e, 0x38, 0xaa, 0xf5}
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"069a79f444e94726a5befca90e38aaf5", true},
		{"069a79f4-44e9-4726-a5be-fca90e38aaf5", true},
		{"069A79F4-44E9-4726-A5BE-FCA90E38AAF5", true},
		{"", false},
		{"069a79f444e94726a5befca90e38aaf", false},        // 31 digits
		{"069a79f4-44e94726-a5be-fca90e38aaf5-", false},   // dashes misplaced
		{"069a79f444e94726a5befca90e38aafz", false},       // not hex
		{"069a79f4-44e9-4726-a5be-fca90e38aaf5 ", false},  // trailing space
		{"{069a79f4-44e9-4726-a5be-fca90e38aaf5}", false}, // braces
		{"069a79f4+44e9+4726+a5be+fca90e38aaf5", false},   // wrong separators
		{"069a79f4-44e9-4726-a5be-fca90e38aa-5", false},   // dash where a digit belongs
		{"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", false},
	} {
		got, err := ParseUUID(tc.in)
		if tc.ok {
			if err != nil || got != want {
				t.Errorf("ParseUUID(%q) = %v, %v; want %v", tc.in, got, err, want)
			}
			continue
		}
		if !errors.Is(err, ErrBadUUID) {
			t.Errorf("ParseUUID(%q) error = %v, want ErrBadUUID", tc.in, err)
		}
	}
	if s := want.String(); s != "069a79f4-44e9-4726-a5be-fca90e38aaf5" {
		t.Errorf("String() = %s", s)
	}
	if s := want.Undashed(); s != "069a79f444e94726a5befca90e38aaf5" {
		t.Errorf("Undashed() = %s", s)
	}
	if want.IsZero() || !(UUID{}).IsZero() {
		t.Error("IsZero is wrong")
	}
}

func TestUUIDText(t *testing.T) {
	u := OfflineUUID("Notch")
	b, _ := u.MarshalText()
	var back UUID
	if err := back.UnmarshalText(b); err != nil || back != u {
		t.Fatalf("text round trip: %v, %v", back, err)
	}
	if err := back.UnmarshalText([]byte("nope")); !errors.Is(err, ErrBadUUID) {
		t.Fatalf("UnmarshalText(nope) = %v", err)
	}
}

func FuzzParseUUID(f *testing.F) {
	f.Add("069a79f444e94726a5befca90e38aaf5")
	f.Add("069a79f4-44e9-4726-a5be-fca90e38aaf5")
	f.Add("069a79f4-44e9-4726-a5be-fca90e38aaZ5")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseUUID(s)
		if err != nil {
			if !errors.Is(err, ErrBadUUID) {
				t.Fatalf("error %v does not wrap ErrBadUUID", err)
			}
			return
		}
		if back, err := ParseUUID(u.String()); err != nil || back != u {
			t.Fatalf("dashed round trip of %q: %v, %v", s, back, err)
		}
		if back, err := ParseUUID(u.Undashed()); err != nil || back != u {
			t.Fatalf("undashed round trip of %q: %v, %v", s, back, err)
		}
	})
}
