package mc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf16"
)

// vanilla16Ping is what a 1.6.4 client sends to mc.example.com:25565.
func vanilla16Ping() []byte {
	host := "mc.example.com"
	b := []byte{0xfe, 0x01, 0xfa, 0x00, 0x0b}
	for _, r := range "MC|PingHost" {
		b = append(b, 0, byte(r))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(7+2*len(host)))
	b = append(b, 78)
	b = binary.BigEndian.AppendUint16(b, uint16(len(host)))
	for _, r := range host {
		b = append(b, 0, byte(r))
	}
	return binary.BigEndian.AppendUint32(b, 25565)
}

func TestIsLegacyFirstByte(t *testing.T) {
	for b := range 256 {
		want := b == 0xfe || b == 0x02
		if got := IsLegacyFirstByte(byte(b)); got != want {
			t.Errorf("IsLegacyFirstByte(0x%02x) = %v", b, got)
		}
	}
}

func TestReadLegacyPing(t *testing.T) {
	full := vanilla16Ping()
	tests := []struct {
		name    string
		in      []byte
		want    LegacyPing
		raw     int // bytes consumed; 0 means len(in)
		err     error
		errLike error
	}{
		{name: "beta", in: []byte{0xfe}, want: LegacyPing{Form: LegacyBeta}},
		{name: "beta with unrelated byte", in: []byte{0xfe, 0x05}, want: LegacyPing{Form: LegacyBeta}, raw: 1},
		{name: "1.4", in: []byte{0xfe, 0x01}, want: LegacyPing{Form: Legacy14}},
		{name: "1.4 with unrelated byte", in: []byte{0xfe, 0x01, 0x00}, want: LegacyPing{Form: Legacy14}, raw: 2},
		{name: "1.6 vanilla bytes", in: full, want: LegacyPing{Form: Legacy16, Protocol: 78, Host: "mc.example.com", Port: 25565}},
		{name: "1.6 encoder", in: EncodeLegacyPing(LegacyPing{Form: Legacy16, Protocol: 74, Host: "ünï.example", Port: -1}),
			want: LegacyPing{Form: Legacy16, Protocol: 74, Host: "ünï.example", Port: -1}},
		{name: "1.6 truncated", in: full[:len(full)-2], err: io.ErrUnexpectedEOF},
		{name: "1.6 wrong channel", in: bytes.Replace(full, []byte{0, 'H'}, []byte{0, 'X'}, 1), err: ErrMalformed},
		{name: "1.6 bad data length", in: append(append(full[:27:27], 0x00, 0x01), full[29:]...), err: ErrMalformed},
		{name: "1.6 host too long", in: EncodeLegacyPing(LegacyPing{Form: Legacy16})[:30], err: io.ErrUnexpectedEOF},
		{name: "not a ping", in: []byte{0x02}, err: ErrMalformed},
		{name: "empty", in: nil, err: io.EOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newReader(tc.in)
			if len(tc.in) > 0 {
				_, _ = r.Peek(len(tc.in)) // everything the client sent is buffered
			}
			got, raw, err := ReadLegacyPing(r)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := tc.raw
			if n == 0 {
				n = len(tc.in)
			}
			if got != tc.want || !bytes.Equal(raw, tc.in[:n]) || r.Buffered() != len(tc.in)-n {
				t.Fatalf("got %+v raw %x (%d left), want %+v", got, raw, r.Buffered(), tc.want)
			}
		})
	}
}

func TestReadLegacyPingHostTooLong(t *testing.T) {
	b := []byte{0xfe, 0x01, 0xfa, 0x00, 0x0b}
	b = append(b, bytes.Repeat([]byte{0}, 22)...)
	copy(b[5:], utf16BE("MC|PingHost"))
	b = append(b, 0x02, 0x0b, 78, 0x01, 0x00) // data length, protocol, host length 256
	r := newReader(b)
	_, _ = r.Peek(len(b))
	if _, _, err := ReadLegacyPing(r); !errors.Is(err, ErrStringTooLong) {
		t.Fatalf("err = %v, want ErrStringTooLong", err)
	}
}

// A Beta client sends 0xFE and waits: the reader must not block for more.
func TestReadLegacyPingDoesNotWaitForOptionalBytes(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte{0xfe}) }()
	r := bufio.NewReader(pr)
	if _, err := r.Peek(1); err != nil {
		t.Fatal(err)
	}
	got, raw, err := ReadLegacyPing(r)
	if err != nil || got.Form != LegacyBeta || !bytes.Equal(raw, []byte{0xfe}) {
		t.Fatalf("got %+v %x %v", got, raw, err)
	}
}

func TestEncodeLegacyPing(t *testing.T) {
	if got := EncodeLegacyPing(LegacyPing{Form: LegacyBeta}); !bytes.Equal(got, []byte{0xfe}) {
		t.Fatalf("beta = %x", got)
	}
	if got := EncodeLegacyPing(LegacyPing{Form: Legacy14}); !bytes.Equal(got, []byte{0xfe, 0x01}) {
		t.Fatalf("1.4 = %x", got)
	}
	got := EncodeLegacyPing(LegacyPing{Form: Legacy16, Protocol: 78, Host: "mc.example.com", Port: 25565})
	if !bytes.Equal(got, vanilla16Ping()) {
		t.Fatalf("1.6 = %x\nwant %x", got, vanilla16Ping())
	}
}

func TestLegacyPingReplyRoundTrip(t *testing.T) {
	s := LegacyStatus{Protocol: 78, Version: "1.6.4", MOTD: "§aA Minecraft Server", Online: 3, Max: 20}
	tests := []struct {
		name string
		form LegacyForm
		want LegacyStatus
		text string
	}{
		{"beta", LegacyBeta, LegacyStatus{MOTD: "A Minecraft Server", Online: 3, Max: 20}, "A Minecraft Server§3§20"},
		{"1.4", Legacy14, s, "§1\x0078\x001.6.4\x00§aA Minecraft Server\x003\x0020"},
		{"1.6", Legacy16, s, "§1\x0078\x001.6.4\x00§aA Minecraft Server\x003\x0020"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := EncodeLegacyPingReply(tc.form, s)
			if want := append([]byte{0xff}, binary.BigEndian.AppendUint16(nil, uint16(len(utf16.Encode([]rune(tc.text)))))...); !bytes.Equal(b[:3], want) {
				t.Fatalf("header %x, want %x", b[:3], want)
			}
			if !bytes.Equal(b[3:], utf16BE(tc.text)) {
				t.Fatalf("body %q", decodeUTF16BE(b[3:]))
			}
			got, err := ParseLegacyPingReply(b)
			if err != nil || got != tc.want {
				t.Fatalf("parse = %+v, %v; want %+v", got, err, tc.want)
			}
			got, err = ReadLegacyPingReply(bytes.NewReader(b))
			if err != nil || got != tc.want {
				t.Fatalf("read = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseLegacyPingReplyErrors(t *testing.T) {
	kick := func(s string) []byte { return EncodeLegacyKick(s) }
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"not 0xff", []byte{0xfe, 0, 0}},
		{"length mismatch", append(kick("a§1§2"), 0)},
		{"short body", kick("a§1§2")[:5]},
		{"no separators", kick("hello")},
		{"one separator", kick("hello§1")},
		{"bad count", kick("hello§x§2")},
		{"1.4 too few fields", kick("§1\x0078\x001.6.4\x00motd\x003")},
		{"1.4 bad protocol", kick("§1\x00x\x001.6.4\x00motd\x003\x0020")},
		{"1.4 bad max", kick("§1\x0078\x001.6.4\x00motd\x003\x00x")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseLegacyPingReply(tc.in); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
	if _, err := ReadLegacyPingReply(bytes.NewReader(kick("a§1§2")[:6])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated read err = %v", err)
	}
}

func TestEncodeLegacyKick(t *testing.T) {
	got := EncodeLegacyKick("Bye 𝄞")
	want := append([]byte{0xff, 0x00, 0x06}, utf16BE("Bye 𝄞")...)
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	long := EncodeLegacyKick(strings.Repeat("a", 40000))
	if n := binary.BigEndian.Uint16(long[1:]); n != maxLegacyString || len(long) != 3+2*maxLegacyString {
		t.Fatalf("long kick declares %d units in %d bytes", n, len(long))
	}
	// A surrogate pair straddling the limit is dropped whole.
	edge := EncodeLegacyKick(strings.Repeat("a", maxLegacyString-1) + "𝄞")
	if n := binary.BigEndian.Uint16(edge[1:]); n != maxLegacyString-1 {
		t.Fatalf("edge kick declares %d units", n)
	}
}

func TestReadLegacyLogin(t *testing.T) {
	oldForm := func(s string) []byte { return appendString16([]byte{0x02}, utf16.Encode([]rune(s))) }
	modern := EncodeLegacyLogin(LegacyLogin{Protocol: 78, Username: "Notch", Host: "mc.example.com", Port: 25565})
	tests := []struct {
		name string
		in   []byte
		want LegacyLogin
		err  error
	}{
		{name: "1.6", in: modern, want: LegacyLogin{Protocol: 78, Username: "Notch", Host: "mc.example.com", Port: 25565}},
		{name: "1.2 user;host:port", in: oldForm("Notch;mc.example.com:25565"), want: LegacyLogin{Username: "Notch", Host: "mc.example.com", Port: 25565}},
		{name: "beta username only", in: oldForm("Notch"), want: LegacyLogin{Username: "Notch"}},
		{name: "old bad port", in: oldForm("Notch;host:x"), err: ErrMalformed},
		{name: "old empty user", in: oldForm(";host:1"), err: ErrMalformed},
		{name: "truncated after protocol", in: EncodeLegacyLogin(LegacyLogin{Protocol: 78, Username: "a", Host: "h"})[:2:2], err: io.ErrUnexpectedEOF},
		{name: "truncated", in: modern[:len(modern)-1], err: io.ErrUnexpectedEOF},
		{name: "only first byte", in: []byte{0x02}, err: io.ErrUnexpectedEOF},
		{name: "not a login", in: []byte{0xfe}, err: ErrMalformed},
		{name: "empty", in: nil, err: io.EOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, raw, err := ReadLegacyLogin(newReader(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || !bytes.Equal(raw, tc.in) {
				t.Fatalf("got %+v raw %x, %v; want %+v", got, raw, err, tc.want)
			}
		})
	}
	long := append([]byte{0x02, 78}, binary.BigEndian.AppendUint16(nil, 17)...)
	if _, _, err := ReadLegacyLogin(newReader(long)); !errors.Is(err, ErrStringTooLong) {
		t.Fatalf("17-char name err = %v", err)
	}
}

func TestLegacyFormString(t *testing.T) {
	for f, want := range map[LegacyForm]string{LegacyBeta: "beta", Legacy14: "1.4", Legacy16: "1.6", 9: "LegacyForm(9)"} {
		if got := f.String(); got != want {
			t.Errorf("%d.String() = %q", int(f), got)
		}
	}
}

func utf16BE(s string) []byte { return appendString16(nil, utf16.Encode([]rune(s)))[2:] }

func FuzzReadLegacyPing(f *testing.F) {
	f.Add([]byte{0xfe})
	f.Add([]byte{0xfe, 0x01})
	f.Add(vanilla16Ping())
	f.Add(vanilla16Ping()[:20])
	f.Add(EncodeLegacyLogin(LegacyLogin{Protocol: 78, Username: "Notch", Host: "h", Port: 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newReader(b)
		if len(b) > 0 {
			_, _ = r.Peek(len(b))
		}
		p, raw, err := ReadLegacyPing(r)
		if err == nil {
			if !bytes.Equal(raw, b[:len(raw)]) {
				t.Fatal("raw is not a prefix of the input")
			}
			back, _, err := ReadLegacyPing(bufio.NewReader(bytes.NewReader(EncodeLegacyPing(p))))
			if err != nil || (p.Form == Legacy16 && back != p) {
				t.Fatalf("round trip %+v -> %+v, %v", p, back, err)
			}
		}
		if ll, raw, err := ReadLegacyLogin(newReader(b)); err == nil && !bytes.Equal(raw, b[:len(raw)]) {
			t.Fatalf("legacy login %+v raw is not a prefix", ll)
		}
	})
}

func FuzzParseLegacyPingReply(f *testing.F) {
	f.Add(EncodeLegacyPingReply(LegacyBeta, LegacyStatus{MOTD: "hi", Online: 1, Max: 2}))
	f.Add(EncodeLegacyPingReply(Legacy14, LegacyStatus{Protocol: 78, Version: "1.6.4", MOTD: "§ahi", Online: 1, Max: 2}))
	f.Add(EncodeLegacyKick("§1\x00"))
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseLegacyPingReply(b)
		if err != nil {
			return
		}
		if _, err := ReadLegacyPingReply(bytes.NewReader(b)); err != nil {
			t.Fatalf("Parse accepted what Read rejects: %v", err)
		}
		if strings.ContainsRune(s.MOTD, 0) || strings.ContainsRune(s.Version, 0) {
			return // such fields cannot be re-encoded faithfully
		}
		back, err := ParseLegacyPingReply(EncodeLegacyPingReply(Legacy14, s))
		if err != nil || back != s {
			t.Fatalf("1.4 round trip %+v -> %+v, %v", s, back, err)
		}
	})
}
