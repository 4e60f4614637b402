package mc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// fuzzFrames writes a few valid frames in compressed form, as seeds.
func fuzzFrames(f *testing.F, threshold int) []byte {
	var b bytes.Buffer
	w := NewConn(nil, &b, newTestZlib(f))
	if err := w.SetCompression(threshold); err != nil {
		f.Fatal(err)
	}
	for _, p := range testPackets()[:5] {
		if err := w.WritePacket(p.id, p.payload); err != nil {
			f.Fatal(err)
		}
	}
	return b.Bytes()
}

// readAll reads frames until an error and checks each one the way a relay
// uses it: PeekID agrees with Decode, and re-writing it reads back the same.
func readAll(t *testing.T, c *Conn, threshold int) (frames []Frame, err error) {
	for range 64 {
		raw, err := c.ReadRaw()
		if err != nil {
			return frames, err
		}
		if len(raw.Bytes) > MaxFrameSize+maxVarIntLen {
			t.Fatalf("frame of %d bytes accepted", len(raw.Bytes))
		}
		f, err := c.Decode(raw)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVarIntTooLong) {
				t.Fatalf("unclassified decode error: %v", err)
			}
			return frames, err
		}
		if id, err := c.PeekID(raw); err != nil || id != f.ID {
			t.Fatalf("PeekID = 0x%02X, %v; Decode says 0x%02X", id, err, f.ID)
		}
		var out bytes.Buffer
		w := NewConn(nil, &out, c.z)
		if err := w.SetCompression(threshold); err != nil {
			t.Fatal(err)
		}
		if err := w.WritePacket(f.ID, f.Payload); err != nil {
			t.Fatalf("re-writing a decoded frame: %v", err)
		}
		back, err := newConnWith(&out, c.z, threshold).ReadFrame()
		if err != nil || back.ID != f.ID || !bytes.Equal(back.Payload, f.Payload) {
			t.Fatalf("re-written frame reads back as 0x%02X, %v", back.ID, err)
		}
		frames = append(frames, f)
	}
	return frames, nil
}

// newConnWith returns a reading Conn over r with a threshold set.
func newConnWith(r io.Reader, z *Zlib, threshold int) *Conn {
	c := NewConn(bufio.NewReader(r), io.Discard, z)
	_ = c.SetCompression(threshold)
	return c
}

func FuzzConnReadCompressed(f *testing.F) {
	f.Add(fuzzFrames(f, 256), uint16(256))
	f.Add(fuzzFrames(f, 0), uint16(0))
	f.Add(compressedFrame(1000, zlibBytes(f, bytes.Repeat([]byte{1}, 1000))), uint16(256))
	f.Add(compressedFrame(MaxUncompressedSize, zlibBytes(f, []byte{1})), uint16(1))
	f.Add(compressedFrame(0, []byte{0x26, 1}), uint16(64))
	z := newTestZlib(f)
	f.Fuzz(func(t *testing.T, in []byte, threshold uint16) {
		c := newConnWith(bytes.NewReader(in), z, int(threshold))
		_, err := readAll(t, c, int(threshold))
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
			!errors.Is(err, ErrMalformed) && !errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, ErrVarIntTooLong) {
			t.Fatalf("unclassified error: %v", err)
		}
	})
}

// Reading through encryption must behave exactly like reading the plaintext:
// the fuzzer's bytes are the plaintext, encrypted before the read.
func FuzzConnReadEncryptedCompressed(f *testing.F) {
	f.Add(fuzzFrames(f, 256), uint16(256))
	f.Add(fuzzFrames(f, 16), uint16(16))
	f.Add(compressedFrame(1000, zlibBytes(f, bytes.Repeat([]byte{2}, 999))), uint16(256))
	z := newTestZlib(f)
	f.Fuzz(func(t *testing.T, plain []byte, threshold uint16) {
		enc, err := NewCFB8(testSecret, false)
		if err != nil {
			t.Fatal(err)
		}
		cipherText := make([]byte, len(plain))
		enc.XORKeyStream(cipherText, plain)

		c := newConnWith(bytes.NewReader(cipherText), z, int(threshold))
		if err := c.EnableEncryption(testSecret); err != nil {
			t.Fatal(err)
		}
		got, gotErr := readAll(t, c, int(threshold))
		want, wantErr := readAll(t, newConnWith(bytes.NewReader(plain), z, int(threshold)), int(threshold))
		if len(got) != len(want) || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("encrypted read %d frames (%v), plaintext %d (%v)", len(got), gotErr, len(want), wantErr)
		}
		for i := range got {
			if got[i].ID != want[i].ID || !bytes.Equal(got[i].Payload, want[i].Payload) || !bytes.Equal(got[i].Raw, want[i].Raw) {
				t.Fatalf("frame %d differs between encrypted and plaintext reads", i)
			}
		}
	})
}
