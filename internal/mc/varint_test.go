package mc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

var varIntVectors = []struct {
	v   int32
	enc []byte
}{
	{0, []byte{0x00}},
	{1, []byte{0x01}},
	{127, []byte{0x7f}},
	{128, []byte{0x80, 0x01}},
	{255, []byte{0xff, 0x01}},
	{25565, []byte{0xdd, 0xc7, 0x01}},
	{2097151, []byte{0xff, 0xff, 0x7f}},
	{2147483647, []byte{0xff, 0xff, 0xff, 0xff, 0x07}},
	{-1, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
	{-2147483648, []byte{0x80, 0x80, 0x80, 0x80, 0x08}},
}

func TestVarIntVectors(t *testing.T) {
	for _, tc := range varIntVectors {
		if got := AppendVarInt(nil, tc.v); !bytes.Equal(got, tc.enc) {
			t.Errorf("AppendVarInt(%d) = %x, want %x", tc.v, got, tc.enc)
		}
		if got := VarIntSize(tc.v); got != len(tc.enc) {
			t.Errorf("VarIntSize(%d) = %d, want %d", tc.v, got, len(tc.enc))
		}
		got, err := ReadVarInt(bytes.NewReader(tc.enc))
		if err != nil || got != tc.v {
			t.Errorf("ReadVarInt(%x) = %d, %v, want %d", tc.enc, got, err, tc.v)
		}
	}
}

func TestReadVarIntErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, io.EOF},
		{"truncated", []byte{0x80}, io.ErrUnexpectedEOF},
		{"truncated after four", []byte{0x80, 0x80, 0x80, 0x80}, io.ErrUnexpectedEOF},
		{"six bytes of garbage", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ErrVarIntTooLong},
		{"fifth byte continues", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, ErrVarIntTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := bytes.NewReader(tc.in)
			_, err := ReadVarInt(r)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if consumed := len(tc.in) - r.Len(); consumed > maxVarIntLen {
				t.Fatalf("consumed %d bytes, want at most 5", consumed)
			}
		})
	}
}

func TestReadVarIntNonCanonical(t *testing.T) {
	// Overlong encodings are accepted, as vanilla does.
	got, err := ReadVarInt(bytes.NewReader([]byte{0x81, 0x80, 0x00}))
	if err != nil || got != 1 {
		t.Fatalf("got %d, %v, want 1", got, err)
	}
}

func FuzzReadVarInt(f *testing.F) {
	for _, tc := range varIntVectors {
		f.Add(tc.enc)
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		v, err := ReadVarInt(r)
		consumed := len(b) - r.Len()
		if consumed > maxVarIntLen {
			t.Fatalf("consumed %d bytes", consumed)
		}
		if err != nil {
			return
		}
		// Re-encoding yields a canonical form that decodes to the same value.
		enc := AppendVarInt(nil, v)
		if len(enc) != VarIntSize(v) || len(enc) > consumed {
			t.Fatalf("canonical encoding %x longer than input %x", enc, b[:consumed])
		}
		back, err := ReadVarInt(bytes.NewReader(enc))
		if err != nil || back != v {
			t.Fatalf("round trip %d -> %x -> %d, %v", v, enc, back, err)
		}
	})
}

func BenchmarkReadVarInt(b *testing.B) {
	enc := AppendVarInt(nil, 2097151)
	br := bytes.NewReader(enc)
	r := bufio.NewReader(br)
	b.ReportAllocs()
	for b.Loop() {
		br.Reset(enc)
		r.Reset(br)
		if _, err := ReadVarInt(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendVarInt(b *testing.B) {
	buf := make([]byte, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendVarInt(buf[:0], 2097151)
	}
}
