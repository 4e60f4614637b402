package mc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var testUUID = [16]byte{0x06, 0x9a, 0x79, 0xf4, 0x44, 0xe9, 0x47, 0x26, 0xa5, 0xbe, 0xfc, 0xa9, 0x0e, 0x38, 0xaa, 0xf5}

// testKey matches the sigData the tests below put on the wire.
var testKey = &PlayerKey{ExpiresAt: 1700000000000, PublicKey: []byte{1, 2, 3}, Signature: []byte{4, 5}}

func loginFrame(name string, tail ...byte) []byte {
	return AppendFrame(nil, 0, append(AppendString(nil, name), tail...))
}

func TestReadLoginStart(t *testing.T) {
	withUUID := append([]byte{1}, testUUID[:]...)
	sigData := binary.BigEndian.AppendUint64([]byte{1}, 1700000000000)
	sigData = append(AppendVarInt(sigData, 3), 1, 2, 3)
	sigData = append(AppendVarInt(sigData, 2), 4, 5)
	tests := []struct {
		name     string
		protocol int32
		in       []byte
		want     LoginStart
		err      error
	}{
		{name: "1.20.2 with uuid", protocol: 764, in: loginFrame("Notch", testUUID[:]...),
			want: LoginStart{Name: "Notch", UUID: testUUID, HasUUID: true}},
		{name: "1.21 with uuid", protocol: 767, in: loginFrame("jeb_", testUUID[:]...),
			want: LoginStart{Name: "jeb_", UUID: testUUID, HasUUID: true}},
		{name: "1.20.2 missing uuid", protocol: 764, in: loginFrame("Notch"), err: ErrMalformed},
		{name: "1.20.2 short uuid", protocol: 764, in: loginFrame("Notch", testUUID[:15]...), err: ErrMalformed},
		{name: "1.20.2 trailing", protocol: 764, in: loginFrame("Notch", append(testUUID[:], 0)...), err: ErrMalformed},
		{name: "1.20.1 optional uuid present", protocol: 763, in: loginFrame("Notch", withUUID...),
			want: LoginStart{Name: "Notch", UUID: testUUID, HasUUID: true}},
		{name: "1.20.1 optional uuid absent", protocol: 763, in: loginFrame("Notch", 0),
			want: LoginStart{Name: "Notch"}},
		{name: "1.20.1 name only is tolerated", protocol: 763, in: loginFrame("Notch"),
			want: LoginStart{Name: "Notch"}},
		{name: "1.20.1 garbage tail is ignored", protocol: 763, in: loginFrame("Notch", 7, 7, 7),
			want: LoginStart{Name: "Notch"}},
		{name: "1.19.1 sig data then uuid", protocol: 760, in: loginFrame("Notch", append(sigData, withUUID...)...),
			want: LoginStart{Name: "Notch", UUID: testUUID, HasUUID: true, Key: testKey}},
		{name: "1.19.1 sig data without uuid", protocol: 760, in: loginFrame("Notch", append(sigData, 0)...),
			want: LoginStart{Name: "Notch", Key: testKey}},
		{name: "1.19.1 truncated key is ignored", protocol: 760, in: loginFrame("Notch", sigData[:12]...),
			want: LoginStart{Name: "Notch"}},
		{name: "1.19.1 no sig data then uuid", protocol: 760, in: loginFrame("Notch", append([]byte{0}, withUUID...)...),
			want: LoginStart{Name: "Notch", UUID: testUUID, HasUUID: true}},
		{name: "1.19 sig data", protocol: 759, in: loginFrame("Notch", sigData...),
			want: LoginStart{Name: "Notch", Key: testKey}},
		{name: "1.19 no sig data", protocol: 759, in: loginFrame("Notch", 0),
			want: LoginStart{Name: "Notch"}},
		{name: "1.19 garbage after key is ignored", protocol: 759, in: loginFrame("Notch", append(sigData, 9)...),
			want: LoginStart{Name: "Notch"}},
		{name: "1.19 oversized key is ignored", protocol: 759,
			in:   loginFrame("Notch", append(binary.BigEndian.AppendUint64([]byte{1}, 1), AppendVarInt(nil, 600)...)...),
			want: LoginStart{Name: "Notch"}},
		{name: "1.8 name only", protocol: 47, in: loginFrame("Notch"), want: LoginStart{Name: "Notch"}},
		{name: "16 characters", protocol: 47, in: loginFrame(strings.Repeat("a", 16)), want: LoginStart{Name: strings.Repeat("a", 16)}},
		{name: "17 characters", protocol: 47, in: loginFrame(strings.Repeat("a", 17)), err: ErrStringTooLong},
		{name: "17 characters on 764", protocol: 764, in: loginFrame(strings.Repeat("a", 17), testUUID[:]...), err: ErrStringTooLong},
		{name: "empty name", protocol: 47, in: loginFrame(""), err: ErrMalformed},
		{name: "wrong id", protocol: 47, in: AppendFrame(nil, 1, AppendString(nil, "Notch")), err: ErrMalformed},
		{name: "oversized frame", protocol: 47, in: AppendFrame(nil, 0, make([]byte, 20000)), err: ErrFrameTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, raw, err := ReadLoginStart(newReader(tc.in), tc.protocol)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) || !bytes.Equal(raw, tc.in) {
				t.Fatalf("got %+v raw %x, want %+v", got, raw, tc.want)
			}
		})
	}
}

func TestLoginStartEncodeRoundTrip(t *testing.T) {
	for _, p := range KnownProtocols() {
		proto := int32(p)
		for _, l := range []LoginStart{
			{Name: "Notch", UUID: testUUID, HasUUID: true},
			{Name: "Steve"},
			{Name: "Alex", UUID: testUUID, HasUUID: true, Key: testKey},
		} {
			got, _, err := ReadLoginStart(newReader(l.Encode(proto)), proto)
			if err != nil {
				t.Fatalf("protocol %d %+v: %v", proto, l, err)
			}
			want := l
			if p.Before(V1_19) || p.AtLeast(V1_19_3) {
				want.Key = nil // only 1.19–1.19.2 carry the key
			}
			switch {
			case proto >= 764:
				want.HasUUID = true // always on the wire from 1.20.2
			case proto < 760:
				want.UUID, want.HasUUID = [16]byte{}, false // no UUID field on the wire
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("protocol %d: got %+v, want %+v", proto, got, want)
			}
		}
	}
}

func FuzzReadLoginStart(f *testing.F) {
	f.Add(loginFrame("Notch", testUUID[:]...), int32(764))
	f.Add(loginFrame("Notch", append([]byte{1}, testUUID[:]...)...), int32(763))
	f.Add(loginFrame("Notch", 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x07), int32(760))
	f.Add(loginFrame("Notch"), int32(47))
	f.Add(loginFrame(strings.Repeat("a", 17)), int32(47))
	f.Fuzz(func(t *testing.T, b []byte, proto int32) {
		l, raw, err := ReadLoginStart(newReader(b), proto)
		if err != nil {
			return
		}
		if !bytes.Equal(raw, b[:len(raw)]) {
			t.Fatal("raw is not a prefix of the input")
		}
		if l.Name == "" || len([]rune(l.Name)) > MaxPlayerNameLen {
			t.Fatalf("accepted invalid name %q", l.Name)
		}
		if proto >= 764 && !l.HasUUID {
			t.Fatal("1.20.2+ login start accepted without UUID")
		}
		back, _, err := ReadLoginStart(newReader(l.Encode(proto)), proto)
		if err != nil || back.Name != l.Name {
			t.Fatalf("round trip %+v -> %+v, %v", l, back, err)
		}
	})
}
