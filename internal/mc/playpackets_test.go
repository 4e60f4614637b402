package mc

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestKeepAliveWire(t *testing.T) {
	tests := []struct {
		p    Protocol
		id   int64
		want []byte
	}{
		{V1_7_6, 0x01020304, []byte{1, 2, 3, 4}},
		{V1_8, 300, []byte{0xAC, 0x02}},
		{V1_12_1, 5, []byte{5}},
		{V1_12_2, 0x0102030405060708, []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{V1_20_2, -1, bytes.Repeat([]byte{0xFF}, 8)},
		{V26_3, 42, []byte{0, 0, 0, 0, 0, 0, 0, 42}},
	}
	for _, tc := range tests {
		if got := (KeepAlive{ID: tc.id}).AppendPayload(nil, tc.p); !bytes.Equal(got, tc.want) {
			t.Errorf("%v: encoded %x, want %x", tc.p, got, tc.want)
		}
		got, err := DecodeKeepAlive(tc.want, tc.p)
		if err != nil || got.ID != tc.id {
			t.Errorf("%v: decoded %d, %v", tc.p, got.ID, err)
		}
		if _, err := DecodeKeepAlive(append(tc.want, 0), tc.p); !errors.Is(err, ErrMalformed) {
			t.Errorf("%v: trailing byte: %v", tc.p, err)
		}
		if _, err := DecodeKeepAlive(tc.want[:len(tc.want)-1], tc.p); err == nil {
			t.Errorf("%v: truncated keep-alive accepted", tc.p)
		}
	}
}

func TestPluginMessageWire(t *testing.T) {
	m := PluginMessage{Channel: "MC|Brand", Data: []byte("vanilla")}
	want17 := cat(str("MC|Brand"), be16(7), []byte("vanilla"))
	want18 := cat(str("MC|Brand"), []byte("vanilla"))
	for _, tc := range []struct {
		p    Protocol
		want []byte
	}{{V1_7_2, want17}, {V1_7_6, want17}, {V1_8, want18}, {V1_21_4, want18}} {
		got, err := m.AppendPayload(nil, tc.p)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%v: encoded %x, %v", tc.p, got, err)
		}
		back, err := DecodePluginMessage(tc.want, tc.p)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Errorf("%v: decoded %+v, %v", tc.p, back, err)
		}
	}
	if _, err := (PluginMessage{Channel: "x", Data: make([]byte, 40000)}).AppendPayload(nil, V1_7_6); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("1.7 oversized data: %v", err)
	}
	if _, err := DecodePluginMessage(cat(str("MC|Brand"), be16(8), []byte("vanilla")), V1_7_6); !errors.Is(err, ErrMalformed) {
		t.Errorf("1.7 length past the end: %v", err)
	}
	if _, err := DecodePluginMessage(cat(str(strings.Repeat("c", 21)), be16(0)), V1_7_6); !errors.Is(err, ErrStringTooLong) {
		t.Errorf("1.7 channel over 20 characters: %v", err)
	}
	big := PluginMessage{Channel: "proxy:echo", Data: bytes.Repeat([]byte{1}, 300_000)}
	enc, err := big.AppendPayload(nil, V1_21_4)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := DecodePluginMessage(enc, V1_21_4); err != nil || !bytes.Equal(back.Data, big.Data) {
		t.Fatalf("large plugin message: %v", err)
	}
}

func TestDisconnectForms(t *testing.T) {
	d := DisconnectText(`Server "lobby" is full`)
	if want := `{"text":"Server \"lobby\" is full"}`; string(d.Reason) != want {
		t.Fatalf("DisconnectText = %s, want %s", d.Reason, want)
	}
	nbt := []byte{tagCompound, tagString, 0, 4, 't', 'e', 'x', 't', 0, 2, 'h', 'i', tagEnd}
	jsonForm := str(`{"text":"hi"}`)
	tests := []struct {
		p    Protocol
		s    State
		wire []byte
	}{
		{V1_8, PlayState, jsonForm},
		{V1_20_2, ConfigState, jsonForm},
		{V1_20_2, PlayState, jsonForm},
		{V1_20_3, ConfigState, nbt},
		{V1_20_3, PlayState, nbt},
		{V1_20_3, LoginState, jsonForm}, // login stays JSON in every version
		{V26_3, LoginState, jsonForm},
		{V26_3, PlayState, nbt},
	}
	hi := Disconnect{Reason: json.RawMessage(`{"text":"hi"}`)}
	for _, tc := range tests {
		got, err := hi.AppendPayload(nil, tc.p, tc.s)
		if err != nil || !bytes.Equal(got, tc.wire) {
			t.Errorf("%v %s: encoded %x, %v; want %x", tc.p, tc.s, got, err, tc.wire)
		}
		back, err := DecodeDisconnect(tc.wire, tc.p, tc.s)
		if err != nil || string(back.Reason) != `{"text":"hi"}` || back.Text() != "hi" {
			t.Errorf("%v %s: decoded %s, %v", tc.p, tc.s, back.Reason, err)
		}
	}
	if _, err := DecodeDisconnect(str("not json"), V1_8, PlayState); !errors.Is(err, ErrMalformed) {
		t.Errorf("invalid JSON reason: %v", err)
	}
	if _, err := (Disconnect{Reason: json.RawMessage("{")}).AppendPayload(nil, V1_8, LoginState); !errors.Is(err, ErrMalformed) {
		t.Errorf("encoding invalid JSON: %v", err)
	}
	if _, err := (Disconnect{Reason: json.RawMessage("{")}).AppendPayload(nil, V1_21, PlayState); !errors.Is(err, ErrMalformed) {
		t.Errorf("encoding invalid JSON as NBT: %v", err)
	}
	if _, err := DecodeDisconnect(append(append([]byte(nil), nbt...), 0), V1_21, PlayState); !errors.Is(err, ErrMalformed) {
		t.Errorf("trailing byte after NBT: %v", err)
	}
}

func FuzzDecodeKeepAlive(f *testing.F) {
	for i, p := range KnownProtocols() {
		f.Add((KeepAlive{ID: int64(i) * 7919}).AppendPayload(nil, p), byte(i))
	}
	f.Fuzz(func(t *testing.T, b []byte, pb byte) {
		p := fuzzProtocol(pb)
		v, err := DecodeKeepAlive(b, p)
		if err != nil {
			return
		}
		if back, err := DecodeKeepAlive(v.AppendPayload(nil, p), p); err != nil || back != v {
			t.Fatalf("%v: %+v re-decoded as %+v, %v", p, v, back, err)
		}
	})
}

func FuzzDecodePluginMessage(f *testing.F) {
	for i, p := range KnownProtocols() {
		b, _ := PluginMessage{Channel: "minecraft:brand", Data: []byte{7, 'v', 'a', 'n', 'i', 'l', 'l', 'a'}}.AppendPayload(nil, p)
		f.Add(b, byte(i))
	}
	f.Fuzz(func(t *testing.T, b []byte, pb byte) {
		p := fuzzProtocol(pb)
		v, err := DecodePluginMessage(b, p)
		if err != nil {
			return
		}
		enc, err := v.AppendPayload(nil, p)
		if err != nil {
			t.Fatalf("%v: decoded %+v cannot be encoded: %v", p, v, err)
		}
		if back, err := DecodePluginMessage(enc, p); err != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("%v: %+v re-decoded as %+v, %v", p, v, back, err)
		}
	})
}

func FuzzDecodeDisconnect(f *testing.F) {
	reasons := []string{`{"text":"hi"}`, `"plain"`, `{"translate":"multiplayer.disconnect.server_full"}`,
		`{"text":"a","bold":true,"extra":[{"text":"b","color":"red"},"c"]}`, `["x",{"text":"y"}]`}
	for i, r := range reasons {
		for _, s := range []State{LoginState, ConfigState, PlayState} {
			p := []Protocol{V1_8, V1_20_2, V1_20_3, V1_21_4, V26_3}[i]
			if s == ConfigState && p.Before(V1_20_2) {
				continue
			}
			b, err := Disconnect{Reason: json.RawMessage(r)}.AppendPayload(nil, p, s)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, byte(p%255), byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, pb, sb byte) {
		p := fuzzProtocol(pb)
		s := []State{LoginState, ConfigState, PlayState}[int(sb)%3]
		v, err := DecodeDisconnect(b, p, s)
		if err != nil {
			return
		}
		if !json.Valid(v.Reason) {
			t.Fatalf("%v %s: decoded invalid JSON %q", p, s, v.Reason)
		}
		enc, err := v.AppendPayload(nil, p, s)
		if err != nil {
			if errors.Is(err, ErrStringTooLong) {
				return // NBT can hold more than vanilla's JSON limit
			}
			t.Fatalf("%v %s: decoded %s cannot be encoded: %v", p, s, v.Reason, err)
		}
		back, err := DecodeDisconnect(enc, p, s)
		if err != nil {
			t.Fatalf("%v %s: %s re-decoded: %v", p, s, v.Reason, err)
		}
		_ = back.Text()
	})
}
