package mc

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/aes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	gomcnet "github.com/Tnze/go-mc/net"
	gomccfb8 "github.com/Tnze/go-mc/net/CFB8"
	pk "github.com/Tnze/go-mc/net/packet"
)

var testSecret = []byte("0123456789abcdef")

func newTestZlib(t testing.TB) *Zlib {
	t.Helper()
	z, err := NewZlib(zlib.DefaultCompression)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// pipeConns returns a writer Conn and a reader Conn joined by a buffer.
func bufConns(t testing.TB) (w *Conn, r *Conn, buf *bytes.Buffer) {
	buf = new(bytes.Buffer)
	z := newTestZlib(t)
	return NewConn(bufio.NewReader(buf), buf, z), NewConn(bufio.NewReader(buf), io.Discard, z), buf
}

func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

type testPacket struct {
	id      int32
	payload []byte
}

func testPackets() []testPacket {
	return []testPacket{
		{0x00, nil},
		{0x26, []byte{1, 2, 3}},
		{0x7F, bytes.Repeat([]byte("a"), 254)}, // body 255: just under 256
		{0x80, bytes.Repeat([]byte("b"), 254)}, // two-byte id, body 256: at the threshold
		{0x18, bytes.Repeat([]byte("compressible "), 5000)},
		{0x19, randomBytes(1, 70_000)}, // incompressible
		{0x03, randomBytes(2, 1)},
	}
}

func TestConnRoundTrip(t *testing.T) {
	for _, mode := range []struct {
		name      string
		threshold int
		encrypt   bool
	}{
		{"plain", -1, false},
		{"compressed-256", 256, false},
		{"compressed-0", 0, false},
		{"encrypted", -1, true},
		{"encrypted+compressed", 256, true},
	} {
		t.Run(mode.name, func(t *testing.T) {
			w, r, _ := bufConns(t)
			for _, c := range []*Conn{w, r} {
				if err := c.SetCompression(mode.threshold); err != nil {
					t.Fatal(err)
				}
				if mode.encrypt {
					if err := c.EnableEncryption(testSecret); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, p := range testPackets() {
				if err := w.WritePacket(p.id, p.payload); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range testPackets() {
				f, err := r.ReadFrame()
				if err != nil {
					t.Fatalf("packet 0x%02X: %v", p.id, err)
				}
				if f.ID != p.id || !bytes.Equal(f.Payload, p.payload) {
					t.Fatalf("got 0x%02X (%d bytes), want 0x%02X (%d bytes)", f.ID, len(f.Payload), p.id, len(p.payload))
				}
				wantCompressed := mode.threshold >= 0 && VarIntSize(p.id)+len(p.payload) >= mode.threshold
				raw, _ := rawOf(t, f, mode.threshold)
				if raw.Compressed() != wantCompressed {
					t.Fatalf("packet 0x%02X compressed = %v, want %v", p.id, raw.Compressed(), wantCompressed)
				}
			}
			if _, err := r.ReadFrame(); !errors.Is(err, io.EOF) {
				t.Fatalf("after the last frame: %v, want io.EOF", err)
			}
		})
	}
}

// rawOf re-reads a frame's wire bytes as a RawFrame, to inspect its form.
func rawOf(t *testing.T, f Frame, threshold int) (RawFrame, error) {
	t.Helper()
	c := NewConn(bufio.NewReader(bytes.NewReader(f.Raw)), io.Discard, newTestZlib(t))
	if err := c.SetCompression(threshold); err != nil {
		t.Fatal(err)
	}
	raw, err := c.ReadRaw()
	if err != nil {
		t.Fatal(err)
	}
	return raw, nil
}

// The switch to encryption happens mid-stream, after the reader may already
// have buffered ciphertext; and compression after encryption, as in a login.
func TestConnSwitchesMidStream(t *testing.T) {
	var wire bytes.Buffer
	z := newTestZlib(t)
	w := NewConn(nil, &wire, z)
	if err := w.WritePacket(0x01, []byte("encryption response")); err != nil {
		t.Fatal(err)
	}
	if err := w.EnableEncryption(testSecret); err != nil {
		t.Fatal(err)
	}
	if err := w.WritePacket(0x03, SetCompression{Threshold: 64}.AppendPayload(nil)); err != nil {
		t.Fatal(err)
	}
	if err := w.SetCompression(64); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("login success "), 20)
	if err := w.WritePacket(0x02, big); err != nil {
		t.Fatal(err)
	}
	if err := w.WritePacket(0x02, []byte("small")); err != nil {
		t.Fatal(err)
	}

	// A bufio.Reader large enough to swallow the whole stream at the first read.
	r := NewConn(bufio.NewReaderSize(&wire, 64<<10), io.Discard, z)
	f, err := r.ReadFrame()
	if err != nil || f.ID != 0x01 || string(f.Payload) != "encryption response" {
		t.Fatalf("plaintext frame: %+v, %v", f, err)
	}
	if r.br.Buffered() == 0 {
		t.Fatal("test needs ciphertext already buffered before the switch")
	}
	if err := r.EnableEncryption(testSecret); err != nil {
		t.Fatal(err)
	}
	f, err = r.ReadFrame()
	if err != nil || f.ID != 0x03 {
		t.Fatalf("set compression: %+v, %v", f, err)
	}
	sc, err := DecodeSetCompression(f.Payload)
	if err != nil || sc.Threshold != 64 {
		t.Fatalf("threshold %+v, %v", sc, err)
	}
	if err := r.SetCompression(int(sc.Threshold)); err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]byte{big, []byte("small")} {
		f, err = r.ReadFrame()
		if err != nil || f.ID != 0x02 || !bytes.Equal(f.Payload, want) {
			t.Fatalf("after both switches: %+v, %v", f, err)
		}
	}
	if err := r.EnableEncryption(testSecret); err == nil {
		t.Fatal("encryption enabled twice")
	}
}

func TestConnRejectsBadSwitches(t *testing.T) {
	c := NewConn(bufio.NewReader(bytes.NewReader(nil)), io.Discard, nil)
	if err := c.SetCompression(256); err == nil {
		t.Fatal("compression without a Zlib was accepted")
	}
	if err := c.SetCompression(-5); err != nil || c.Threshold() != -1 {
		t.Fatalf("disabling: %v, threshold %d", err, c.Threshold())
	}
	if err := c.EnableEncryption(make([]byte, 8)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("short secret: %v", err)
	}
	if c.Encrypted() {
		t.Fatal("a failed EnableEncryption left encryption on")
	}
	if _, err := NewZlib(42); err == nil {
		t.Fatal("NewZlib accepted level 42")
	}
}

// compressedFrame builds a compressed-form frame by hand, for hostile inputs.
func compressedFrame(dataLen int32, content []byte) []byte {
	body := append(AppendVarInt(nil, dataLen), content...)
	return append(AppendVarInt(nil, int32(len(body))), body...)
}

func zlibBytes(t testing.TB, p []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	if _, err := zw.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestConnBoundedInflation(t *testing.T) {
	body := append([]byte{0x26}, bytes.Repeat([]byte{'x'}, 999)...) // 1000 bytes
	good := zlibBytes(t, body)
	badSum := append([]byte(nil), good...)
	badSum[len(badSum)-1] ^= 0xFF
	tests := []struct {
		name  string
		limit int
		frame []byte
		err   error
	}{
		{"valid", 0, compressedFrame(1000, good), nil},
		{"declared above the limit", 0, compressedFrame(MaxUncompressedSize+1, good), ErrFrameTooLarge},
		{"declared above a lowered limit", 500, compressedFrame(1000, good), ErrFrameTooLarge},
		{"declared below the threshold", 0, compressedFrame(100, zlibBytes(t, body[:100])), ErrMalformed},
		{"inflates past the declared size", 0, compressedFrame(999, good), ErrMalformed},
		{"inflates short of the declared size", 0, compressedFrame(1001, good), ErrMalformed},
		{"bad checksum", 0, compressedFrame(1000, badSum), ErrMalformed},
		{"not zlib", 0, compressedFrame(1000, bytes.Repeat([]byte{0x55}, 40)), ErrMalformed},
		{"truncated zlib", 0, compressedFrame(1000, good[:len(good)/2]), ErrMalformed},
		{"negative data length", 0, compressedFrame(-1, good), ErrMalformed},
		{"data length only", 0, compressedFrame(0, nil), ErrMalformed},
		{"plain content over a lowered limit", 300, compressedFrame(0, body[:400]), ErrFrameTooLarge},
		{"plain content", 0, compressedFrame(0, []byte{0x26, 1, 2}), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConn(bufio.NewReader(bytes.NewReader(tc.frame)), io.Discard, newTestZlib(t))
			if err := c.SetCompression(256); err != nil {
				t.Fatal(err)
			}
			c.SetReadLimit(tc.limit)
			f, err := c.ReadFrame()
			if tc.err == nil {
				if err != nil || f.ID != 0x26 {
					t.Fatalf("got %+v, %v", f, err)
				}
				return
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
		})
	}
}

// A peer that declares huge sizes and sends little must cost little memory:
// allocation follows the bytes that actually arrive or inflate.
func TestConnMemoryFollowsActualBytes(t *testing.T) {
	z := newTestZlib(t)
	// Frame declaring ~2 MiB, then 100 bytes and EOF.
	frame := append(AppendVarInt(nil, MaxFrameSize-1), make([]byte, 100)...)
	// Compressed frame declaring 8 MiB that inflates to 10 bytes.
	bomb := compressedFrame(MaxUncompressedSize, zlibBytes(t, make([]byte, 10)))
	for _, tc := range []struct {
		name      string
		in        []byte
		threshold int
		err       error
	}{
		{"declared frame", frame, -1, io.ErrUnexpectedEOF},
		{"declared inflation", bomb, 256, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConn(bufio.NewReader(bytes.NewReader(tc.in)), io.Discard, z)
			if err := c.SetCompression(tc.threshold); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := c.ReadFrame()
			runtime.ReadMemStats(&after)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			// An inflater is ~40 KiB when the pool is cold; the declared sizes are MiBs.
			if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
				t.Fatalf("allocated %d bytes for a frame that delivered ~100", got)
			}
		})
	}
}

func TestConnTruncatedAndOversized(t *testing.T) {
	var full bytes.Buffer
	w := NewConn(nil, &full, nil)
	if err := w.WritePacket(0x10, bytes.Repeat([]byte{7}, 300)); err != nil {
		t.Fatal(err)
	}
	whole := full.Bytes()
	for cut := 1; cut < len(whole); cut += 37 {
		c := NewConn(bufio.NewReader(bytes.NewReader(whole[:cut])), io.Discard, nil)
		if _, err := c.ReadRaw(); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: %v, want io.ErrUnexpectedEOF", cut, err)
		}
	}
	for name, in := range map[string][]byte{
		"over MaxFrameSize": AppendVarInt(nil, MaxFrameSize+1),
		"varint too long":   {0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	} {
		c := NewConn(bufio.NewReader(bytes.NewReader(in)), io.Discard, nil)
		_, err := c.ReadRaw()
		if !errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, ErrVarIntTooLong) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	c := NewConn(bufio.NewReader(bytes.NewReader(AppendVarInt(nil, 5000))), io.Discard, nil)
	c.SetReadLimit(1000)
	if _, err := c.ReadRaw(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("frame over the read limit: %v", err)
	}
	zero := NewConn(bufio.NewReader(bytes.NewReader([]byte{0x00})), io.Discard, nil)
	if _, err := zero.ReadRaw(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("zero-length frame: %v", err)
	}
	// Writing a packet no peer would accept fails before anything is sent.
	var out bytes.Buffer
	big := NewConn(nil, &out, nil)
	if err := big.WritePacket(1, make([]byte, MaxFrameSize)); !errors.Is(err, ErrFrameTooLarge) || out.Len() != 0 {
		t.Fatalf("oversized write: %v, %d bytes out", err, out.Len())
	}
}

// WriteRaw passes frames through byte for byte when thresholds match and
// re-frames them when they differ; PeekID reads ids without full inflation.
func TestConnWriteRaw(t *testing.T) {
	z := newTestZlib(t)
	for _, tc := range []struct {
		name     string
		src, dst int
	}{
		{"same threshold", 256, 256},
		{"both uncompressed", -1, -1},
		{"compressed to plain", 256, -1},
		{"plain to compressed", -1, 64},
		{"different thresholds", 256, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wire, relayed bytes.Buffer
			src := NewConn(nil, &wire, z)
			mustCompression(t, src, tc.src)
			for _, p := range testPackets() {
				if err := src.WritePacket(p.id, p.payload); err != nil {
					t.Fatal(err)
				}
			}
			in := NewConn(bufio.NewReader(&wire), io.Discard, z)
			mustCompression(t, in, tc.src)
			// A different level on the relaying side: recompressing would change bytes.
			fast, err := NewZlib(zlib.BestSpeed)
			if err != nil {
				t.Fatal(err)
			}
			out := NewConn(nil, &relayed, fast)
			mustCompression(t, out, tc.dst)
			if err := out.EnableEncryption(testSecret); err != nil {
				t.Fatal(err)
			}
			var raws [][]byte
			for _, p := range testPackets() {
				raw, err := in.ReadRaw()
				if err != nil {
					t.Fatal(err)
				}
				id, err := in.PeekID(raw)
				if err != nil || id != p.id {
					t.Fatalf("PeekID = 0x%02X, %v; want 0x%02X", id, err, p.id)
				}
				kept := append([]byte(nil), raw.Bytes...)
				if err := out.WriteRaw(raw); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(raw.Bytes, kept) {
					t.Fatal("WriteRaw changed the caller's bytes")
				}
				raws = append(raws, kept)
			}
			back := NewConn(bufio.NewReader(&relayed), io.Discard, z)
			mustCompression(t, back, tc.dst)
			if err := back.EnableEncryption(testSecret); err != nil {
				t.Fatal(err)
			}
			changed := 0
			for i, p := range testPackets() {
				f, err := back.ReadFrame()
				if err != nil || f.ID != p.id || !bytes.Equal(f.Payload, p.payload) {
					t.Fatalf("relayed packet %d: id 0x%02X, %v", i, f.ID, err)
				}
				if !bytes.Equal(f.Raw, raws[i]) {
					changed++
				}
			}
			// Same threshold: every frame byte for byte. Different: the frames
			// whose form differs between the sides were re-framed.
			if same := tc.src == tc.dst; same && changed != 0 || !same && changed == 0 {
				t.Fatalf("%d frames changed with thresholds %d -> %d", changed, tc.src, tc.dst)
			}
		})
	}
}

func mustCompression(t *testing.T, c *Conn, threshold int) {
	t.Helper()
	if err := c.SetCompression(threshold); err != nil {
		t.Fatal(err)
	}
}

// Writers on several goroutines must not interleave frames or cipher state.
func TestConnConcurrentWriters(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	z := newTestZlib(t)
	w := NewConn(nil, client, z)
	r := NewConn(bufio.NewReader(server), io.Discard, z)
	for _, c := range []*Conn{w, r} {
		mustCompression(t, c, 128)
		if err := c.EnableEncryption(testSecret); err != nil {
			t.Fatal(err)
		}
	}
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				payload := bytes.Repeat([]byte{byte(g)}, 10+i*7)
				if err := w.WritePacket(int32(g), payload); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	seen := make([]int, writers)
	for range writers * each {
		f, err := r.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		g := int(f.ID)
		if g >= writers || len(f.Payload) != 10+seen[g]*7 || !bytes.Equal(f.Payload, bytes.Repeat([]byte{byte(g)}, len(f.Payload))) {
			t.Fatalf("frame from writer %d is corrupt (%d bytes)", g, len(f.Payload))
		}
		seen[g]++
	}
	wg.Wait()
}

// go-mc is an independent implementation of framing, compression and CFB8;
// each side must read what the other writes, over real TCP.
func TestConnInteropWithGoMC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	ours, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer ours.Close()
	deadline := time.Now().Add(10 * time.Second)
	_ = ours.SetDeadline(deadline)
	_ = peer.SetDeadline(deadline)

	z := newTestZlib(t)
	c := NewConn(bufio.NewReader(ours), ours, z)
	g := gomcnet.WrapConn(peer)

	// Plaintext, then go-mc switches on encryption and compression the way a
	// client does after login, and so do we.
	if err := g.WritePacket(pk.Packet{ID: 0x01, Data: []byte("hello")}); err != nil {
		t.Fatal(err)
	}
	if f, err := c.ReadFrame(); err != nil || f.ID != 0x01 || string(f.Payload) != "hello" {
		t.Fatalf("plain from go-mc: %+v, %v", f, err)
	}
	block, _ := aes.NewCipher(testSecret)
	g.SetCipher(gomccfb8.NewCFB8Encrypt(block, testSecret), gomccfb8.NewCFB8Decrypt(block, testSecret))
	g.SetThreshold(256)
	if err := c.EnableEncryption(testSecret); err != nil {
		t.Fatal(err)
	}
	mustCompression(t, c, 256)

	done := make(chan error, 1)
	go func() {
		for _, p := range testPackets() {
			if len(p.payload) > pk.MaxDataLength-8 {
				continue
			}
			if err := g.WritePacket(pk.Packet{ID: p.id, Data: p.payload}); err != nil {
				done <- err
				return
			}
		}
		for _, p := range testPackets() {
			var got pk.Packet
			if err := g.ReadPacket(&got); err != nil {
				done <- fmt.Errorf("go-mc read 0x%02X: %w", p.id, err)
				return
			}
			if got.ID != p.id || !bytes.Equal(got.Data, p.payload) {
				done <- fmt.Errorf("go-mc read 0x%02X (%d bytes), want 0x%02X", got.ID, len(got.Data), p.id)
				return
			}
		}
		done <- nil
	}()
	for _, p := range testPackets() {
		f, err := c.ReadFrame()
		if err != nil || f.ID != p.id || !bytes.Equal(f.Payload, p.payload) {
			t.Fatalf("from go-mc: 0x%02X, %v; want 0x%02X", f.ID, err, p.id)
		}
	}
	for _, p := range testPackets() {
		if err := c.WritePacket(p.id, p.payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// An idle session must hold no zlib state: inflaters and deflaters go back to
// the shared Zlib after each frame. Each Conn here has compressed and
// encrypted traffic behind it; what it keeps afterwards is its two CFB8
// streams and little else (an inflater alone is tens of KiB, a deflater
// hundreds).
func TestIdleConnHoldsNoCompressionState(t *testing.T) {
	z := newTestZlib(t)
	var src bytes.Buffer
	w := NewConn(nil, &src, z)
	mustCompression(t, w, 64)
	if err := w.EnableEncryption(testSecret); err != nil {
		t.Fatal(err)
	}
	if err := w.WritePacket(0x10, bytes.Repeat([]byte("idle "), 200)); err != nil {
		t.Fatal(err)
	}
	wire := src.Bytes()

	const n = 200
	conns := make([]*Conn, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range conns {
		c := NewConn(bufio.NewReaderSize(bytes.NewReader(wire), 16), io.Discard, z)
		mustCompression(t, c, 64)
		if err := c.EnableEncryption(testSecret); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadFrame(); err != nil {
			t.Fatal(err)
		}
		if err := c.WritePacket(0x10, bytes.Repeat([]byte("idle "), 200)); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	perConn := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("an idle encrypted, compressed Conn retains about %d bytes", perConn)
	if perConn > 8<<10 {
		t.Fatalf("an idle Conn retains %d bytes: compression state is being held", perConn)
	}
	runtime.KeepAlive(conns)
}

// An encrypted stream is decrypted as far as it has arrived, so FrameBuffered
// sees whole frames ahead; whatever sizes the socket delivers in and however
// often FrameBuffered is asked between frames, every frame reads back whole
// and FrameBuffered is true exactly when the next frame is all in the buffer.
func TestConnEncryptedReadAhead(t *testing.T) {
	var wire bytes.Buffer
	w := NewConn(bufio.NewReader(bytes.NewReader(nil)), &wire, nil)
	if err := w.EnableEncryption(testSecret); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for i := range 400 {
		n := (i * 37) % 700
		if i%50 == 0 {
			n = 9000 // longer than the reader's buffer: read past it
		}
		sizes = append(sizes, n)
		if err := w.WritePacket(int32(i%100), bytes.Repeat([]byte{byte(i)}, n)); err != nil {
			t.Fatal(err)
		}
	}
	for _, chunk := range []int{1, 3, 64, 1000, 1 << 20} {
		r := NewConn(bufio.NewReaderSize(&chunkReader{b: wire.Bytes(), n: chunk}, 4096), io.Discard, nil)
		if err := r.EnableEncryption(testSecret); err != nil {
			t.Fatal(err)
		}
		buffered := 0
		for i, n := range sizes {
			if i%3 == 0 && r.FrameBuffered() {
				buffered++
			}
			f, err := r.ReadFrame()
			if err != nil {
				t.Fatalf("chunk %d, frame %d: %v", chunk, i, err)
			}
			if f.ID != int32(i%100) || !bytes.Equal(f.Payload, bytes.Repeat([]byte{byte(i)}, n)) {
				t.Fatalf("chunk %d, frame %d: id %d, %d bytes, want id %d, %d bytes", chunk, i, f.ID, len(f.Payload), i%100, n)
			}
		}
		if chunk >= 1000 && buffered == 0 {
			t.Errorf("chunk %d: FrameBuffered never saw a whole frame ahead", chunk)
		}
		if _, err := r.ReadFrame(); !errors.Is(err, io.EOF) {
			t.Fatalf("chunk %d: after the last frame: %v", chunk, err)
		}
	}
}

// chunkReader delivers b at most n bytes per Read, as a socket would.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p, c.b[:min(len(c.b), c.n)])
	c.b = c.b[k:]
	return k, nil
}

// IsEOF is errors.Is(err, io.EOF), fast path or not.
func TestIsEOF(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&streamError{"read frame length", io.EOF}, true},
		{fmt.Errorf("relay: %w", &streamError{"read frame length", io.EOF}), true},
		{io.EOF, true},
		{&streamError{"read frame length", io.ErrUnexpectedEOF}, false},
		{&streamError{"read frame length", os.ErrDeadlineExceeded}, false},
		{nil, false},
	} {
		if got := IsEOF(c.err); got != c.want {
			t.Errorf("IsEOF(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
