package bungeechannel

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// u is a writeUTF of an ASCII string built by hand, independent of appendUTF.
func u(s string) string {
	for i := range len(s) {
		if s[i] == 0 || s[i] >= 0x80 {
			panic("u is for ASCII test strings only")
		}
	}
	return string([]byte{byte(len(s) >> 8), byte(len(s))}) + s
}

func TestModifiedUTF8(t *testing.T) {
	cases := []struct {
		name string
		s    string
		wire string // the length prefix and the bytes, as DataOutputStream writes them
	}{
		{"empty", "", "\x00\x00"},
		{"ascii", "lobby", "\x00\x05lobby"},
		{"NUL is two bytes", "a\x00b", "\x00\x04a\xC0\x80b"},
		{"two-byte", "é§", "\x00\x04\xC3\xA9\xC2\xA7"},
		{"three-byte", "€", "\x00\x03\xE2\x82\xAC"},
		{"past U+FFFF is a surrogate pair", "😀", "\x00\x06\xED\xA0\xBD\xED\xB8\x80"},
		{"last BMP char", "\uFFFF", "\x00\x03\xEF\xBF\xBF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := appendUTF([]byte("x"), c.s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "x"+c.wire {
				t.Fatalf("appendUTF(%q) = % x, want % x", c.s, got[1:], c.wire)
			}
			r := reader{b: []byte(c.wire + "tail")}
			back, err := r.utf("s")
			if err != nil {
				t.Fatal(err)
			}
			if back != c.s || r.off != len(c.wire) {
				t.Fatalf("read back %q at %d, want %q at %d", back, r.off, c.s, len(c.wire))
			}
		})
	}
}

// DataInputStream also accepts what writeUTF never writes: a raw 0 byte and overlong
// forms. A lone surrogate cannot live in a Go string and becomes U+FFFD.
func TestModifiedUTF8ReadsWhatJavaReads(t *testing.T) {
	cases := []struct{ wire, want string }{
		{"\x00\x01\x00", "\x00"},
		{"\x00\x02\xC1\x81", "A"},
		{"\x00\x03\xE0\x81\x81", "A"},
		{"\x00\x03\xED\xA0\xBD", "\uFFFD"},
		{"\x00\x04\xED\xA0\xBDx", "\uFFFDx"},
	}
	for _, c := range cases {
		r := reader{b: []byte(c.wire)}
		got, err := r.utf("s")
		if err != nil || got != c.want {
			t.Errorf("% x: got %q, %v; want %q", c.wire, got, err, c.want)
		}
	}
}

func TestModifiedUTF8Malformed(t *testing.T) {
	for _, wire := range []string{
		"",                         // no length
		"\x00",                     // half a length
		"\x00\x03ab",               // length past the end
		"\x00\x01\x80",             // a continuation byte first
		"\x00\x01\xC3",             // 2-byte sequence cut short
		"\x00\x02\xC3\x41",         // second byte not a continuation
		"\x00\x02\xE2\x82",         // 3-byte sequence cut short
		"\x00\x03\xE2\x41\xAC",     // 3-byte with a bad middle
		"\x00\x04\xF0\x9F\x98\x80", // standard UTF-8 4-byte form: Java refuses it
		"\xFF\xFFabc",              // 65535 announced, 3 there
	} {
		r := reader{b: []byte(wire)}
		if s, err := r.utf("s"); !errors.Is(err, ErrMalformed) {
			t.Errorf("% x: got %q, %v; want ErrMalformed", wire, s, err)
		}
	}
}

func TestAppendUTFBounds(t *testing.T) {
	longest := strings.Repeat("a", maxUTF)
	b, err := appendUTF(nil, longest)
	if err != nil || len(b) != maxUTF+2 || b[0] != 0xFF || b[1] != 0xFF {
		t.Fatalf("65535 ASCII bytes: len %d, %v", len(b), err)
	}
	for _, s := range []string{longest + "a", strings.Repeat("é", maxUTF/2+1), strings.Repeat("\x00", maxUTF/2+1)} {
		dst := []byte("keep")
		out, err := appendUTF(dst, s)
		if !errors.Is(err, ErrTooLong) || string(out) != "keep" {
			t.Errorf("%d-byte string: %q, %v; want ErrTooLong and dst untouched", len(s), truncate(string(out), 8), err)
		}
	}
	// Invalid UTF-8 in a Go string is written as U+FFFD, and the length agrees.
	out, err := appendUTF(nil, "a\xffb")
	if err != nil || !bytes.Equal(out, []byte("\x00\x05a\xEF\xBF\xBDb")) {
		t.Fatalf("invalid UTF-8: % x, %v", out, err)
	}
}

func TestTruncateKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", 40)
	if got := truncate(s, 63); !utf8.ValidString(got) || len(got) > 63+len("…") {
		t.Fatalf("truncate = %q", got)
	}
	if truncate("short", 64) != "short" {
		t.Fatal("a short string must be kept whole")
	}
}
