package mc

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

func zlibOf(t testing.TB, data []byte, level int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := zlib.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(data)
	_ = w.Close()
	return b.Bytes()
}

// goPrefix is what compress/zlib makes of the first k bytes of stream, whether
// it could make them, and whether the input ran out first (compress/flate then
// keeps back the bytes of the block it was in; inflateHead gives them).
func goPrefix(stream []byte, k int) (prefix []byte, ok, truncated bool) {
	zr, err := zlib.NewReader(bytes.NewReader(stream))
	if err != nil {
		return nil, false, false
	}
	out := make([]byte, k)
	n, err := io.ReadFull(zr, out)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, false, false
	}
	// ReadFull says ErrUnexpectedEOF for a short read too: ask the stream itself.
	if n < k {
		_, err = zr.Read(make([]byte, 1))
		truncated = errors.Is(err, io.ErrUnexpectedEOF)
	}
	return out[:n], true, truncated
}

// Every block type compress/flate writes (stored at level 0, fixed and dynamic
// Huffman, Huffman-only, matches that reach back into the first bytes) gives
// the same first bytes as a full inflate, for every prefix length up to 5 and
// payloads from empty to larger than a window.
func TestInflateHeadMatchesCompressFlate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 70000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	payloads := map[string][]byte{
		"empty":      {},
		"one byte":   {0x26},
		"id 0x80":    {0x80, 0x01, 0x80, 0x01, 0x80, 0x01}, // a two-byte id, then repeats
		"runs":       bytes.Repeat([]byte{0x9a}, 1000),     // a match at distance 1 right after the first literal
		"text":       []byte(`{"text":"hello hello hello hello","color":"gold"}`),
		"game 300":   gamePayload(300),
		"game 64KiB": gamePayload(64 << 10),
		"random":     random,
	}
	for name, data := range payloads {
		for _, level := range []int{zlib.NoCompression, zlib.HuffmanOnly, zlib.BestSpeed, zlib.DefaultCompression, zlib.BestCompression} {
			stream := zlibOf(t, data, level)
			for k := 0; k <= maxVarIntLen; k++ {
				buf := make([]byte, k)
				n, err := inflateHead(buf, stream)
				if err != nil {
					t.Fatalf("%s, level %d, %d bytes: %v", name, level, k, err)
				}
				want := data[:min(k, len(data))]
				if !bytes.Equal(buf[:n], want) {
					t.Fatalf("%s, level %d, %d bytes: got % x, want % x", name, level, k, buf[:n], want)
				}
			}
		}
	}
}

// A stored block split over several blocks, and a stream cut short, still give
// what they hold; a stream cut inside the header is an error.
func TestInflateHeadStoredBlocksAndTruncation(t *testing.T) {
	// Two stored blocks of 2 bytes each, the second final.
	stream := []byte{0x78, 0x01}
	for i, part := range [][]byte{{0x81, 0x02}, {0x03, 0x04}} {
		final := byte(0)
		if i == 1 {
			final = 1
		}
		stream = append(stream, final)
		stream = binary.LittleEndian.AppendUint16(stream, uint16(len(part)))
		stream = binary.LittleEndian.AppendUint16(stream, ^uint16(len(part)))
		stream = append(stream, part...)
	}
	buf := make([]byte, 5)
	if n, err := inflateHead(buf, stream); err != nil || !bytes.Equal(buf[:n], []byte{0x81, 0x02, 0x03, 0x04}) {
		t.Fatalf("two stored blocks: % x, %v", buf[:n], err)
	}
	full := zlibOf(t, gamePayload(1000), zlib.DefaultCompression)
	for cut := 2; cut < 12; cut++ {
		n, err := inflateHead(buf, full[:cut])
		if err != nil {
			t.Fatalf("cut at %d: %v (a short stream yields what it has)", cut, err)
		}
		if want, _, _ := goPrefix(full[:cut], 5); !bytes.HasPrefix(buf[:n], want) {
			t.Fatalf("cut at %d: % x, compress/zlib gives % x", cut, buf[:n], want)
		}
	}
	// The last asks for a preset dictionary, which a packet never has.
	for _, bad := range [][]byte{nil, {0x78}, {0x79, 0x01}, {0x78, 0x02}, {0x78, 0x20}} {
		if _, err := inflateHead(buf, bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("header % x: %v, want ErrMalformed", bad, err)
		}
	}
	// Block type 3, and a stored length whose complement disagrees.
	for _, bad := range [][]byte{{0x78, 0x01, 0x07}, {0x78, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0xaa, 0xbb}} {
		if _, err := inflateHead(buf, bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("stream % x: %v, want ErrMalformed", bad, err)
		}
	}
}

// For any input: no panic, never more bytes than asked, and whenever
// compress/zlib can produce the first bytes, the same bytes. The seeds are
// real streams of every level; the fuzzer mutates them into broken ones.
func FuzzInflateHead(f *testing.F) {
	for _, level := range []int{zlib.NoCompression, zlib.HuffmanOnly, zlib.BestSpeed, zlib.DefaultCompression} {
		f.Add(zlibOf(f, gamePayload(400), level), uint8(5))
		f.Add(zlibOf(f, []byte{0x80, 0x01, 0x80, 0x01, 0x80}, level), uint8(2))
	}
	f.Add(zlibOf(f, bytes.Repeat([]byte{7}, 300), flate.BestCompression), uint8(4))
	f.Fuzz(func(t *testing.T, stream []byte, k uint8) {
		size := int(k) % (maxVarIntLen + 1)
		buf := make([]byte, size)
		n, err := inflateHead(buf, stream)
		if n > size {
			t.Fatalf("%d bytes for a buffer of %d", n, size)
		}
		// The shared heads (remembered, then answered) are inflateHead's too.
		for range 2 {
			shared := make([]byte, size)
			sn, serr := inflateHeadShared(shared, stream)
			if sn != n || (serr == nil) != (err == nil) || !bytes.Equal(shared[:sn], buf[:n]) {
				t.Fatalf("inflateHeadShared % x, %v; inflateHead % x, %v", shared[:sn], serr, buf[:n], err)
			}
		}
		want, ok, truncated := goPrefix(stream, size)
		switch {
		case !ok || len(want) == 0:
			// Broken for compress/zlib too (maybe only past our prefix), or nothing
			// to compare (it accepts a preset dictionary when it is the empty one).
			return
		case err != nil:
			t.Fatalf("compress/zlib reads % x; inflateHead: %v", want, err)
		case truncated && !bytes.HasPrefix(buf[:n], want):
			t.Fatalf("truncated stream: inflateHead % x, compress/zlib % x (must be its prefix)", buf[:n], want)
		case !truncated && !bytes.Equal(buf[:n], want):
			t.Fatalf("inflateHead % x, compress/zlib % x", buf[:n], want)
		}
	})
}

// BenchmarkInflateHead reads the first bytes of one packet: compress/flate
// (the baseline: what PeekID did before) against inflateHead, and against
// inflateHeadShared for a packet seen before.
func BenchmarkInflateHead(b *testing.B) {
	for _, sz := range benchSizes {
		stream := zlibOf(b, gamePayload(sz.n), zlib.DefaultCompression)
		z := benchZlib(b, zlib.DefaultCompression)
		b.Run("compress-flate/"+sz.name, func(b *testing.B) {
			b.ReportAllocs()
			var head [maxVarIntLen]byte
			for b.Loop() {
				v, err := z.openInflater(stream)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(v.zr, head[:]); err != nil {
					b.Fatal(err)
				}
				z.closeInflater(v)
			}
		})
		// shared: a stream every player receives alike, answered from the memo.
		for _, d := range []struct {
			name string
			head func(buf, stream []byte) (int, error)
		}{{"inflateHead", inflateHead}, {"shared", inflateHeadShared}} {
			head := d.head
			b.Run(d.name+"/"+sz.name, func(b *testing.B) {
				b.ReportAllocs()
				var buf [maxVarIntLen]byte
				for b.Loop() {
					if _, err := head(buf[:], stream); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
