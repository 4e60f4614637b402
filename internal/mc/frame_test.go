package mc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

func newReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

func TestReadFrame(t *testing.T) {
	big := bytes.Repeat([]byte{0xab}, 100_000)
	tests := []struct {
		name    string
		in      []byte
		max     int
		id      int32
		payload []byte
		raw     int // length of Raw; 0 means len(in)
		err     error
	}{
		{name: "empty payload", in: []byte{0x01, 0x00}, id: 0},
		{name: "ping", in: EncodePing(42), id: 1, payload: EncodePing(42)[2:]},
		{name: "large payload spans chunks", in: AppendFrame(nil, 0x22, big), id: 0x22, payload: big},
		{name: "non-canonical length kept raw", in: []byte{0x82, 0x00, 0x05, 0x07}, id: 5, payload: []byte{7}},
		{name: "next frame left unread", in: append(AppendFrame(nil, 3, []byte{9}), 0x01, 0x00), id: 3, payload: []byte{9}, raw: 3},
		{name: "clean eof", in: nil, err: io.EOF},
		{name: "eof in length", in: []byte{0x80}, err: io.ErrUnexpectedEOF},
		{name: "eof in body", in: []byte{0x05, 0x00, 0x01}, err: io.ErrUnexpectedEOF},
		{name: "zero length", in: []byte{0x00}, err: ErrMalformed},
		{name: "negative length", in: []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, err: ErrMalformed},
		{name: "length varint too long", in: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, err: ErrVarIntTooLong},
		{name: "over caller max", in: AppendFrame(nil, 0, make([]byte, 20)), max: 20, err: ErrFrameTooLarge},
		{name: "over MaxFrameSize", in: AppendVarInt(nil, MaxFrameSize+1), err: ErrFrameTooLarge},
		{name: "max above MaxFrameSize is clamped", in: AppendVarInt(nil, MaxFrameSize+1), max: 1 << 30, err: ErrFrameTooLarge},
		{name: "bad packet id", in: []byte{0x01, 0x80}, err: ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ReadFrame(newReader(tc.in), tc.max)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw := tc.raw
			if raw == 0 {
				raw = len(tc.in)
			}
			if f.ID != tc.id || !bytes.Equal(f.Payload, tc.payload) || !bytes.Equal(f.Raw, tc.in[:raw]) {
				t.Fatalf("got id %d payload %d bytes raw %x", f.ID, len(f.Payload), f.Raw)
			}
		})
	}
}

func TestAppendFrameRoundTrip(t *testing.T) {
	for _, id := range []int32{0, 1, 0x7f, 0x80, -1} {
		for _, n := range []int{0, 1, 126, 127, 128, 5000} {
			p := bytes.Repeat([]byte{byte(n)}, n)
			enc := AppendFrame([]byte{0xee}, id, p)[1:]
			f, err := ReadFrame(newReader(enc), 0)
			if err != nil || f.ID != id || !bytes.Equal(f.Payload, p) || !bytes.Equal(f.Raw, enc) {
				t.Fatalf("id %d n %d: got %d %d bytes, %v", id, n, f.ID, len(f.Payload), err)
			}
		}
	}
}

// A peer that declares a 2 MiB frame and then sends 3 bytes must not make us
// allocate 2 MiB.
func TestReadFrameDoesNotTrustDeclaredLength(t *testing.T) {
	in := append(AppendVarInt(nil, MaxFrameSize), 0x00, 0x01, 0x02)
	const runs = 50
	readers := make([]*bufio.Reader, runs)
	for i := range readers {
		readers[i] = newReader(in)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, r := range readers {
		if _, err := ReadFrame(r, MaxFrameSize); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
		}
	}
	runtime.ReadMemStats(&after)
	if perCall := (after.TotalAlloc - before.TotalAlloc) / runs; perCall > 16<<10 {
		t.Fatalf("allocated %d bytes per call for a 3-byte body", perCall)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0x01, 0x00})
	f.Add(EncodePing(7))
	f.Add(Handshake{ProtocolVersion: 767, ServerAddress: "mc.example.com", ServerPort: 25565, NextState: 2}.Encode())
	f.Add(append(AppendVarInt(nil, MaxFrameSize), 0, 1, 2))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{0x82, 0x00, 0x05, 0x07})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ReadFrame(newReader(b), 4096)
		if err != nil {
			return
		}
		if !bytes.Equal(fr.Raw, b[:len(fr.Raw)]) {
			t.Fatalf("raw %x is not a prefix of the input", fr.Raw)
		}
		again, err := ReadFrame(newReader(AppendFrame(nil, fr.ID, fr.Payload)), 0)
		if err != nil || again.ID != fr.ID || !bytes.Equal(again.Payload, fr.Payload) {
			t.Fatalf("re-encoded frame does not round trip: %v", err)
		}
	})
}
