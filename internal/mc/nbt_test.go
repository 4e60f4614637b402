package mc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	gomcnbt "github.com/Tnze/go-mc/nbt"
)

func jsonToNBT(t testing.TB, js string) []byte {
	t.Helper()
	b, err := componentJSONToNBT(nil, []byte(js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return b
}

func nbtToJSON(t testing.TB, b []byte) string {
	t.Helper()
	c := cursor{b: b}
	js, err := componentNBTToJSON(&c)
	if err != nil {
		t.Fatalf("%x: %v", b, err)
	}
	if c.rest() != 0 {
		t.Fatalf("%d bytes left after the component", c.rest())
	}
	return string(js)
}

func sameJSON(t testing.TB, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestComponentNBTRoundTrip(t *testing.T) {
	tests := []struct{ in, out string }{
		{`{"text":"hi"}`, `{"text":"hi"}`},
		{`"plain text"`, `"plain text"`},
		{`{"text":"a","bold":true,"italic":false,"color":"red"}`, `{"text":"a","bold":true,"italic":false,"color":"red"}`},
		{`{"text":"","extra":[{"text":"x"},{"text":"y","underlined":true}]}`, `{"text":"","extra":[{"text":"x"},{"text":"y","underlined":true}]}`},
		{`{"text":"","extra":["a","b"]}`, `{"text":"","extra":["a","b"]}`},
		{`{"text":"","extra":["a",{"text":"b"}]}`, `{"text":"","extra":[{"text":"a"},{"text":"b"}]}`},
		{`["a",{"text":"b"}]`, `{"text":"","extra":[{"text":"a"},{"text":"b"}]}`},
		{`{"translate":"chat.type.text","with":["Steve",{"text":"hello"},3]}`,
			`{"translate":"chat.type.text","with":[{"text":"Steve"},{"text":"hello"},{"text":"3"}]}`},
		{`{"text":"n","x":1,"big":5000000000,"f":1.5,"neg":-7}`, `{"text":"n","x":1,"big":5000000000,"f":1.5,"neg":-7}`},
		{`{"text":"skip","insertion":null}`, `{"text":"skip"}`},
		{`{"text":"","extra":[]}`, `{"text":"","extra":[]}`},
		{`{"text":"NUL\u0000 é € 😀 \"q\" \\ \n"}`, `{"text":"NUL\u0000 é € 😀 \"q\" \\ \n"}`},
		{`{"text":"a","extra":[["x","y"],"z"]}`, `{"text":"a","extra":[{"text":"","extra":["x","y"]},{"text":"z"}]}`},
	}
	for _, tc := range tests {
		got := nbtToJSON(t, jsonToNBT(t, tc.in))
		sameJSON(t, got, tc.out)
		// A second trip changes nothing more.
		sameJSON(t, nbtToJSON(t, jsonToNBT(t, got)), tc.out)
	}
}

func TestMUTF8(t *testing.T) {
	tests := []struct {
		s    string
		wire []byte
	}{
		{"abc", []byte("abc")},
		{"\x00", []byte{0xC0, 0x80}},
		{"é", []byte{0xC3, 0xA9}},
		{"€", []byte{0xE2, 0x82, 0xAC}},
		{"😀", []byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}},
	}
	for _, tc := range tests {
		got, err := appendMUTF8(nil, tc.s)
		want := append(binary.BigEndian.AppendUint16(nil, uint16(len(tc.wire))), tc.wire...)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%q: encoded %x, %v; want %x", tc.s, got, err, want)
		}
		c := cursor{b: want}
		if back, err := c.mutf8(); err != nil || back != tc.s {
			t.Errorf("%x: decoded %q, %v", want, back, err)
		}
	}
	c := cursor{b: []byte{0, 3, 0xED, 0xA0, 0xBD}} // a lone high surrogate
	if s, err := c.mutf8(); err != nil || s != "\uFFFD" {
		t.Errorf("lone surrogate: %q, %v", s, err)
	}
	if _, err := appendMUTF8(nil, strings.Repeat("€", 30000)); !errors.Is(err, ErrMalformed) {
		t.Errorf("string over 65535 bytes: %v", err)
	}
}

// go-mc's NBT codec is an independent implementation: it must read what we
// write and we must read what it writes.
func TestComponentNBTInteropWithGoMC(t *testing.T) {
	ours := jsonToNBT(t, `{"text":"hello","bold":true,"extra":[{"text":"w","color":"gold"}]}`)
	dec := gomcnbt.NewDecoder(bytes.NewReader(ours))
	dec.NetworkFormat(true)
	var got struct {
		Text  string `nbt:"text"`
		Bold  bool   `nbt:"bold"`
		Extra []struct {
			Text  string `nbt:"text"`
			Color string `nbt:"color"`
		} `nbt:"extra"`
	}
	if _, err := dec.Decode(&got); err != nil {
		t.Fatalf("go-mc cannot read our NBT: %v", err)
	}
	if got.Text != "hello" || !got.Bold || len(got.Extra) != 1 || got.Extra[0].Text != "w" || got.Extra[0].Color != "gold" {
		t.Fatalf("go-mc read %+v", got)
	}

	var buf bytes.Buffer
	enc := gomcnbt.NewEncoder(&buf)
	enc.NetworkFormat(true)
	type part struct {
		Text   string `nbt:"text"`
		Italic bool   `nbt:"italic"`
	}
	if err := enc.Encode(struct {
		Text  string `nbt:"text"`
		Color string `nbt:"color"`
		Extra []part `nbt:"extra"`
	}{"kicked", "red", []part{{"again", true}}}, ""); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, nbtToJSON(t, buf.Bytes()), `{"text":"kicked","color":"red","extra":[{"text":"again","italic":true}]}`)
}

func TestComponentNBTRejectsHostileInput(t *testing.T) {
	deep := []byte{tagList}
	for range 600 {
		deep = append(deep, tagList, 0, 0, 0, 1)
	}
	tests := map[string][]byte{
		"empty":             {},
		"root end":          {tagEnd},
		"unknown tag":       {42},
		"too deep":          deep,
		"huge list":         {tagList, tagInt, 0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1},
		"negative list":     {tagList, tagInt, 0xFF, 0xFF, 0xFF, 0xFF},
		"list of end":       {tagList, tagEnd, 0, 0, 0, 5},
		"huge int array":    {tagIntArray, 0x10, 0, 0, 0, 1, 2, 3, 4},
		"unterminated":      {tagCompound, tagString, 0, 1, 'a', 0, 1, 'b'},
		"string past end":   {tagString, 0, 10, 'a'},
		"compound bad type": {tagCompound, 99, 0, 0},
	}
	for name, in := range tests {
		c := cursor{b: in}
		if js, err := componentNBTToJSON(&c); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %s, %v; want ErrMalformed", name, js, err)
		}
	}
	for _, js := range []string{``, `{`, `{"a":1}}`, `{"a":"b"} {"c":1}`, strings.Repeat("[", 600) + strings.Repeat("]", 600)} {
		if _, err := componentJSONToNBT(nil, []byte(js)); !errors.Is(err, ErrMalformed) {
			t.Errorf("JSON %.20q: %v", js, err)
		}
	}
}

func FuzzComponentNBT(f *testing.F) {
	for _, js := range []string{`{"text":"hi"}`, `"plain"`, `{"text":"a","bold":true,"extra":["b",{"text":"c"}]}`,
		`{"translate":"x","with":[1,2.5,true]}`, `{"text":"\u0000😀"}`} {
		b, err := componentJSONToNBT(nil, []byte(js))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{tagIntArray, 0, 0, 0, 2, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF})
	f.Add([]byte{tagCompound, tagByte, 0, 1, 'b', 7, tagDouble, 0, 1, 'd', 0x7F, 0xF8, 0, 0, 0, 0, 0, 0, tagEnd})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := cursor{b: b}
		js, err := componentNBTToJSON(&c)
		if err != nil {
			return
		}
		if !json.Valid(js) {
			t.Fatalf("invalid JSON %q from %x", js, b)
		}
		// Whatever we produce, we can write back, and a second trip is stable.
		once, err := componentJSONToNBT(nil, js)
		if err != nil {
			t.Fatalf("cannot re-encode %s: %v", js, err)
		}
		c = cursor{b: once}
		js1, err := componentNBTToJSON(&c)
		if err != nil {
			t.Fatalf("re-decode %s: %v", js, err)
		}
		twice, err := componentJSONToNBT(nil, js1)
		if err != nil {
			t.Fatal(err)
		}
		c = cursor{b: twice}
		js2, err := componentNBTToJSON(&c)
		if err != nil || !bytes.Equal(js1, js2) {
			t.Fatalf("unstable: %s then %s, %v", js1, js2, err)
		}
	})
}
