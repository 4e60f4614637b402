package mc

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"io"
	"math/rand/v2"
	"testing"

	pk "github.com/Tnze/go-mc/net/packet"
)

// gamePayload is data that compresses about as well as real play traffic
// (bytes drawn from a small alphabet, ~2-3x with zlib).
func gamePayload(n int) []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32() % 24)
	}
	return b
}

var benchSizes = []struct {
	name string
	n    int
}{{"256B", 256}, {"64KiB", 64 << 10}}

func benchZlib(b *testing.B, level int) *Zlib {
	z, err := NewZlib(level)
	if err != nil {
		b.Fatal(err)
	}
	return z
}

// BenchmarkCompressedWrite: our compressed framing against go-mc's (baseline)
// at the vanilla threshold of 256, default zlib level, into io.Discard.
func BenchmarkCompressedWrite(b *testing.B) {
	for _, sz := range benchSizes {
		payload := gamePayload(sz.n)
		b.Run("ours/"+sz.name, func(b *testing.B) {
			c := NewConn(nil, io.Discard, benchZlib(b, zlib.DefaultCompression))
			_ = c.SetCompression(256)
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.WritePacket(0x26, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ours-bestspeed/"+sz.name, func(b *testing.B) {
			c := NewConn(nil, io.Discard, benchZlib(b, zlib.BestSpeed))
			_ = c.SetCompression(256)
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.WritePacket(0x26, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("gomc/"+sz.name, func(b *testing.B) {
			p := pk.Packet{ID: 0x26, Data: payload}
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Pack(io.Discard, 256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// loopReader replays the same bytes forever, so reads never hit EOF.
type loopReader struct {
	b   []byte
	off int
}

func (r *loopReader) Read(p []byte) (int, error) {
	if r.off == len(r.b) {
		r.off = 0
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

// BenchmarkCompressedRead: reading and inflating one compressed frame, ours
// against go-mc's UnPack (baseline).
func BenchmarkCompressedRead(b *testing.B) {
	for _, sz := range benchSizes {
		var frame bytes.Buffer
		w := NewConn(nil, &frame, benchZlib(b, zlib.DefaultCompression))
		_ = w.SetCompression(256)
		if err := w.WritePacket(0x26, gamePayload(sz.n)); err != nil {
			b.Fatal(err)
		}
		wire := frame.Bytes()
		b.Run("ours/"+sz.name, func(b *testing.B) {
			c := NewConn(bufio.NewReader(&loopReader{b: wire}), io.Discard, benchZlib(b, zlib.DefaultCompression))
			_ = c.SetCompression(256)
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.ReadFrame(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ours-peek-only/"+sz.name, func(b *testing.B) {
			c := NewConn(bufio.NewReader(&loopReader{b: wire}), io.Discard, benchZlib(b, zlib.DefaultCompression))
			_ = c.SetCompression(256)
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				raw, err := c.ReadRaw()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.PeekID(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("gomc/"+sz.name, func(b *testing.B) {
			r := bufio.NewReader(&loopReader{b: wire})
			var p pk.Packet
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				if err := p.UnPack(r, 256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConnRoundTrip writes one packet and reads it back through a
// framed connection in each mode; "plain" is the baseline.
func BenchmarkConnRoundTrip(b *testing.B) {
	for _, mode := range []struct {
		name      string
		threshold int
		encrypt   bool
	}{
		{"plain", -1, false},
		{"compressed", 256, false},
		{"encrypted", -1, true},
		{"encrypted+compressed", 256, true},
	} {
		for _, sz := range benchSizes {
			payload := gamePayload(sz.n)
			b.Run(mode.name+"/"+sz.name, func(b *testing.B) {
				var pipe bytes.Buffer
				z := benchZlib(b, zlib.DefaultCompression)
				w := NewConn(nil, &pipe, z)
				r := NewConn(bufio.NewReader(&pipe), io.Discard, z)
				for _, c := range []*Conn{w, r} {
					_ = c.SetCompression(mode.threshold)
					if mode.encrypt {
						_ = c.EnableEncryption(testSecret)
					}
				}
				b.SetBytes(int64(sz.n))
				b.ReportAllocs()
				for b.Loop() {
					if err := w.WritePacket(0x26, payload); err != nil {
						b.Fatal(err)
					}
					if _, err := r.ReadFrame(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRelay forwards a compressed frame between two sides with the same
// threshold: raw pass-through against inflate + re-deflate (baseline).
func BenchmarkRelay(b *testing.B) {
	for _, sz := range benchSizes {
		var frame bytes.Buffer
		z := benchZlib(b, zlib.DefaultCompression)
		w := NewConn(nil, &frame, z)
		_ = w.SetCompression(256)
		if err := w.WritePacket(0x26, gamePayload(sz.n)); err != nil {
			b.Fatal(err)
		}
		wire := frame.Bytes()
		for _, passthrough := range []bool{true, false} {
			name := "reencode/"
			if passthrough {
				name = "passthrough/"
			}
			b.Run(name+sz.name, func(b *testing.B) {
				in := NewConn(bufio.NewReader(&loopReader{b: wire}), io.Discard, z)
				out := NewConn(nil, io.Discard, z)
				_ = in.SetCompression(256)
				_ = out.SetCompression(256)
				b.SetBytes(int64(sz.n))
				b.ReportAllocs()
				for b.Loop() {
					raw, err := in.ReadRaw()
					if err != nil {
						b.Fatal(err)
					}
					if _, err := in.PeekID(raw); err != nil {
						b.Fatal(err)
					}
					if passthrough {
						err = out.WriteRaw(raw)
					} else {
						var f Frame
						if f, err = in.Decode(raw); err == nil {
							err = out.WritePacket(f.ID, f.Payload)
						}
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
