package mc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// handshakeFrame builds a handshake with arbitrary fields, including invalid ones.
func handshakeFrame(id, proto int32, addr string, port uint16, next int32, trailing ...byte) []byte {
	p := AppendVarInt(nil, proto)
	p = AppendString(p, addr)
	p = binary.BigEndian.AppendUint16(p, port)
	p = AppendVarInt(p, next)
	return AppendFrame(nil, id, append(p, trailing...))
}

func TestReadHandshake(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want Handshake
		err  error
	}{
		{name: "login", in: handshakeFrame(0, 767, "mc.example.com", 25565, 2),
			want: Handshake{767, "mc.example.com", 25565, StateLogin}},
		{name: "status", in: handshakeFrame(0, 47, "play.example.net", 1, 1),
			want: Handshake{47, "play.example.net", 1, StateStatus}},
		{name: "transfer", in: handshakeFrame(0, 766, "a", 65535, 3),
			want: Handshake{766, "a", 65535, StateTransfer}},
		{name: "forge marker kept verbatim", in: handshakeFrame(0, 340, "mc.example.com\x00FML\x00", 25565, 2),
			want: Handshake{340, "mc.example.com\x00FML\x00", 25565, StateLogin}},
		{name: "255 characters", in: handshakeFrame(0, 767, strings.Repeat("a", 255), 25565, 2),
			want: Handshake{767, strings.Repeat("a", 255), 25565, StateLogin}},
		{name: "255 multibyte characters", in: handshakeFrame(0, 767, strings.Repeat("é", 255), 25565, 2),
			want: Handshake{767, strings.Repeat("é", 255), 25565, StateLogin}},
		{name: "256 characters", in: handshakeFrame(0, 767, strings.Repeat("a", 256), 25565, 2), err: ErrStringTooLong},
		{name: "256 multibyte characters", in: handshakeFrame(0, 767, strings.Repeat("é", 256), 25565, 2), err: ErrStringTooLong},
		{name: "huge address", in: handshakeFrame(0, 767, strings.Repeat("a", 5000), 25565, 2), err: ErrFrameTooLarge},
		{name: "wrong packet id", in: handshakeFrame(1, 767, "a", 1, 2), err: ErrMalformed},
		{name: "next state 0", in: handshakeFrame(0, 767, "a", 1, 0), err: ErrMalformed},
		{name: "next state 4", in: handshakeFrame(0, 767, "a", 1, 4), err: ErrMalformed},
		{name: "trailing bytes", in: handshakeFrame(0, 767, "a", 1, 2, 0x00), err: ErrMalformed},
		{name: "invalid utf-8", in: handshakeFrame(0, 767, "a\xffb", 1, 2), err: ErrMalformed},
		{name: "string longer than frame", in: AppendFrame(nil, 0, []byte{0x01, 0x10, 'a'}), err: ErrMalformed},
		{name: "negative string length", in: AppendFrame(nil, 0, []byte{0x01, 0xff, 0xff, 0xff, 0xff, 0x0f}), err: ErrMalformed},
		{name: "missing port", in: AppendFrame(nil, 0, []byte{0x01, 0x01, 'a'}), err: ErrMalformed},
		{name: "truncated stream", in: handshakeFrame(0, 767, "a", 1, 2)[:4], err: io.ErrUnexpectedEOF},
		{name: "empty stream", in: nil, err: io.EOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, raw, err := ReadHandshake(newReader(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || !bytes.Equal(raw, tc.in) {
				t.Fatalf("got %+v raw %x, want %+v", got, raw, tc.want)
			}
			if enc := got.Encode(); !bytes.Equal(enc, tc.in) {
				t.Fatalf("Encode = %x, want %x", enc, tc.in)
			}
		})
	}
}

func TestReadHandshakeLeavesFollowingBytes(t *testing.T) {
	hs := Handshake{767, "mc.example.com", 25565, StateStatus}
	r := newReader(append(hs.Encode(), EncodeStatusRequest()...))
	if _, _, err := ReadHandshake(r); err != nil {
		t.Fatal(err)
	}
	if err := ReadStatusRequest(r); err != nil {
		t.Fatalf("status request after handshake: %v", err)
	}
}

func FuzzReadHandshake(f *testing.F) {
	f.Add(handshakeFrame(0, 767, "mc.example.com", 25565, 2))
	f.Add(handshakeFrame(0, 47, "x\x00FML2\x00", 1, 1))
	f.Add(handshakeFrame(0, 767, strings.Repeat("a", 256), 25565, 2))
	f.Add(handshakeFrame(0, 767, "a", 1, 2, 0))
	f.Add([]byte{0xfe, 0x01, 0xfa})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, raw, err := ReadHandshake(newReader(b))
		if err != nil {
			return
		}
		if !bytes.Equal(raw, b[:len(raw)]) {
			t.Fatal("raw is not a prefix of the input")
		}
		if h.NextState < 1 || h.NextState > 3 || len([]rune(h.ServerAddress)) > MaxServerAddressLen {
			t.Fatalf("accepted invalid handshake %+v", h)
		}
		back, _, err := ReadHandshake(newReader(h.Encode()))
		if err != nil || back != h {
			t.Fatalf("round trip %+v -> %+v, %v", h, back, err)
		}
	})
}

func BenchmarkReadHandshake(b *testing.B) {
	enc := Handshake{767, "survival.mc.example.com", 25565, StateLogin}.Encode()
	br := bytes.NewReader(enc)
	r := newReader(nil)
	b.ReportAllocs()
	for b.Loop() {
		br.Reset(enc)
		r.Reset(br)
		if _, _, err := ReadHandshake(r); err != nil {
			b.Fatal(err)
		}
	}
}
