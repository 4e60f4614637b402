package seal

import (
	"errors"
	"strings"
	"testing"
)

func TestSealOpens(t *testing.T) {
	s := New([]byte("0123456789abcdef-secret"))
	for _, v := range []string{`{"kind":"drain","v":{"ts":1,"proxy":"a"}}`, `{}`, "1733572800000", "", "p1 0a0b"} {
		sealed := s.Seal("state|drain|lobby|a", v)
		got, err := s.Open("state|drain|lobby|a", sealed)
		if err != nil || got != v {
			t.Fatalf("Open(Seal(%q)) = %q, %v", v, got, err)
		}
		if isObject(v) && v != "{}" && (!strings.HasPrefix(sealed, v[:len(v)-1]) || !strings.HasSuffix(sealed, `"}`)) {
			t.Fatalf("a sealed object must stay JSON with its fields first: %s", sealed)
		}
	}
}

// A forged, changed, moved or unsigned value does not open; a nil Sealer
// (no secret) opens everything as it is.
func TestSealRefuses(t *testing.T) {
	s := New([]byte("0123456789abcdef-secret"))
	other := New([]byte("another-secret-0123456789"))
	sealed := s.Seal("auth:sessions:victim|203.0.113.7", "1733572800000")
	for name, tc := range map[string]struct {
		place, value string
		want         error
	}{
		"unsigned":       {"auth:sessions:victim|203.0.113.7", "1733572800000", ErrUnsealed},
		"changed":        {"auth:sessions:victim|203.0.113.7", strings.Replace(sealed, "1733", "9733", 1), ErrBadSeal},
		"moved":          {"auth:sessions:victim|198.51.100.1", sealed, ErrBadSeal},
		"other secret":   {"auth:sessions:victim|203.0.113.7", other.Seal("auth:sessions:victim|203.0.113.7", "1733572800000"), ErrBadSeal},
		"object changed": {"state|x", strings.Replace(s.Seal("state|x", `{"on":false}`), "false", "true", 1), ErrBadSeal},
		"object bare":    {"state|x", `{"on":true}`, ErrUnsealed},
	} {
		if _, err := s.Open(tc.place, tc.value); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	var none *Sealer
	if v, err := none.Open("x", "anything"); err != nil || v != "anything" || none.Seal("x", "v") != "v" || none.On() {
		t.Fatal("a nil Sealer must pass values through")
	}
	if New(nil) != nil {
		t.Fatal("no secret: no Sealer")
	}
}

func FuzzOpen(f *testing.F) {
	s := New([]byte("0123456789abcdef-secret"))
	f.Add("x", s.Seal("x", `{"a":1}`))
	f.Add("x", "v~seal:abc")
	f.Fuzz(func(t *testing.T, place, v string) {
		if got, err := s.Open(place, v); err == nil && s.Seal(place, got) != v {
			t.Fatalf("opened %q to %q, which seals differently", v, got)
		}
	})
}
