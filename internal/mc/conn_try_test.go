package mc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// TryReadRelay reads the frames ReadRelay reads, however the stream is cut:
// inside a length VarInt, inside a body, a frame larger than the read buffer,
// several frames at once; it never waits, keeps what it read of a frame for
// the next call, and a blocking read goes on with a frame it began.
func TestTryReadRelayMatchesReadRelay(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, 7))
			size := func(i int) int { return []int{0, 1, 127, 128, 3000, 9000, 40000}[(i*5+int(seed))%7] }
			frames := encodedFrames(t, 40, size, encrypted)
			wire := bytes.Join(frames, nil)

			r := NewConn(nil, io.Discard, nil)
			if encrypted {
				if err := r.EnableEncryption(testSecret); err != nil {
					t.Fatal(err)
				}
			}
			src := newPipeWaiter()
			src.conn = r
			r.LendBuffers(src)

			next := 0
			check := func(f RawFrame) {
				t.Helper()
				full, err := r.Decode(f)
				if err != nil {
					t.Fatalf("encrypted=%v seed %d frame %d: %v", encrypted, seed, next, err)
				}
				if full.ID != int32(next) || len(full.Payload) != size(next) || !bytes.Equal(full.Payload, bytes.Repeat([]byte{byte(next)}, size(next))) {
					t.Fatalf("encrypted=%v seed %d: frame %d read as id %d with %d bytes", encrypted, seed, next, full.ID, len(full.Payload))
				}
				Recycle(f)
				next++
			}
			for off := 0; off < len(wire); {
				n := min(len(wire)-off, 1+rng.IntN(6000))
				if rng.IntN(4) == 0 {
					n = min(len(wire)-off, 1+rng.IntN(3)) // a few bytes: cuts VarInts
				}
				src.send(wire[off : off+n])
				off += n
				for {
					f, ok, err := r.TryReadRelay()
					if err != nil {
						t.Fatalf("encrypted=%v seed %d frame %d: %v", encrypted, seed, next, err)
					}
					if !ok {
						break
					}
					check(f)
				}
				// Now and then a blocking read takes over mid-stream, as a relay
				// handed off its loop does: it must finish the frame begun.
				if off < len(wire) && rng.IntN(5) == 0 && r.part.raw != nil {
					rest := r.part.rest
					src.send(wire[off : off+rest])
					off += rest
					f, err := r.ReadRelay()
					if err != nil {
						t.Fatalf("encrypted=%v seed %d: a blocking read after a try: %v", encrypted, seed, err)
					}
					check(f)
				}
			}
			if next != len(frames) {
				t.Fatalf("encrypted=%v seed %d: read %d frames of %d", encrypted, seed, next, len(frames))
			}
			if _, ok, err := r.TryReadRelay(); ok || err != nil {
				t.Fatalf("encrypted=%v seed %d: a try on an empty stream = %v, %v", encrypted, seed, ok, err)
			}
			src.close()
			if _, _, err := r.TryReadRelay(); !errors.Is(err, io.EOF) {
				t.Fatalf("encrypted=%v seed %d: a try at the end = %v, want io.EOF", encrypted, seed, err)
			}
			if src.waits != 0 {
				t.Fatalf("encrypted=%v seed %d: TryReadRelay waited %d times", encrypted, seed, src.waits)
			}
		}
	}
}

// A stream that ends inside a frame is an error for a try too, and a bad
// length is refused before anything is awaited.
func TestTryReadRelayRefusesBadStreams(t *testing.T) {
	for _, tc := range []struct {
		name string
		wire []byte
		want error
	}{
		{"cut body", []byte{5, 0, 1}, io.ErrUnexpectedEOF},
		{"zero length", []byte{0}, ErrMalformed},
		{"too long VarInt", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, ErrVarIntTooLong},
		{"over the limit", AppendVarInt(nil, MaxFrameSize+1), ErrFrameTooLarge},
	} {
		r := NewConn(nil, io.Discard, nil)
		src := newPipeWaiter()
		src.conn = r
		r.LendBuffers(src)
		src.send(tc.wire)
		src.close()
		var err error
		for range 3 {
			if _, _, err = r.TryReadRelay(); err != nil {
				break
			}
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// tryWriter accepts at most room bytes per TryWrite.
type tryWriter struct {
	bytes.Buffer
	room int
}

func (w *tryWriter) TryWrite(p []byte) (int, error) {
	n := min(len(p), w.room)
	w.Buffer.Write(p[:n])
	return n, nil
}

// TryWriteRelay never waits: what the writer refuses stays batched (held) and
// leaves first with the next write or Flush, so the stream equals WriteRelay's;
// a frame that must be re-framed is not taken.
func TestTryWriteRelayKeepsWhatTheSocketRefused(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		var want bytes.Buffer
		ref := NewConn(nil, &want, nil)
		w := &tryWriter{}
		c := NewConn(nil, w, nil)
		if encrypted {
			if err := ref.EnableEncryption(testSecret); err != nil {
				t.Fatal(err)
			}
			if err := c.EnableEncryption(testSecret); err != nil {
				t.Fatal(err)
			}
		}
		frames := encodedFrames(t, 30, func(i int) int { return (i * 331) % 2000 }, false)
		for i, b := range frames {
			f := RawFrame{Bytes: b, threshold: -1}
			more := i%3 == 0
			if err := ref.WriteRelay(f, more); err != nil {
				t.Fatal(err)
			}
			w.room = (i * 577) % 1500
			taken, held, err := c.TryWriteRelay(f, more)
			if !taken || err != nil {
				t.Fatalf("encrypted=%v frame %d: taken %v, %v", encrypted, i, taken, err)
			}
			if held != (c.pend != nil && !more) {
				t.Fatalf("encrypted=%v frame %d: held %v with %v pending", encrypted, i, held, c.pend != nil)
			}
			if held && i%2 == 0 {
				w.room = 1 << 30
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		w.room = 1 << 30
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.Bytes(), want.Bytes()) {
			t.Fatalf("encrypted=%v: %d bytes written, differ from WriteRelay's %d", encrypted, w.Len(), want.Len())
		}
	}
	c := NewConn(nil, &tryWriter{room: 1 << 20}, nil)
	if taken, _, _ := c.TryWriteRelay(RawFrame{Bytes: []byte{2, 0, 0}, threshold: 256}, false); taken {
		t.Fatal("a frame to re-frame was taken")
	}
	if taken, _, _ := NewConn(nil, io.Discard, nil).TryWriteRelay(RawFrame{Bytes: []byte{1, 0}, threshold: -1}, false); taken {
		t.Fatal("a writer that cannot try was written to")
	}
}

// A Conn that does not lend its buffers cannot read without waiting: a try
// says so with an error, never with "not yet", which its caller would retry forever.
func TestTryReadRelayRefusesAConnThatCannotTry(t *testing.T) {
	r := NewConn(bufio.NewReader(bytes.NewReader([]byte{1, 0})), io.Discard, nil)
	if _, ok, err := r.TryReadRelay(); ok || !errors.Is(err, errCannotTry) {
		t.Fatalf("TryReadRelay without a lender = %v, %v; want errCannotTry", ok, err)
	}
}

// A relay on the event loop reads with TryReadRelay and parks when it finds no
// whole frame: also when the buffer holds the first byte of a frame's length
// and nothing more came (Idle must not send it back to read again, forever).
func TestParkAfterATryThatFoundPartOfALength(t *testing.T) {
	frames := encodedFrames(t, 2, func(i int) int { return 300 }, false) // 2-byte lengths
	r := NewConn(nil, io.Discard, nil)
	src := &parkingPipe{pipeWaiter: newPipeWaiter(), parked: make(chan bool, 10)}
	src.conn = r
	r.LendBuffers(src)
	noop := func(bool) bool { return false }

	src.send(append(append([]byte(nil), frames[0]...), frames[1][0]))
	f, ok, err := r.TryReadRelay()
	if !ok || err != nil {
		t.Fatalf("the whole first frame: %v, %v", ok, err)
	}
	Recycle(f)
	if _, ok, err := r.TryReadRelay(); ok || err != nil {
		t.Fatalf("one byte of a length: %v, %v", ok, err)
	}
	if !r.Idle() || !src.OnReadable(noop) {
		t.Fatal("did not park on a length's first byte")
	}
	if held := <-src.parked; !held {
		t.Fatal("the length's first byte was not kept")
	}
	src.send(frames[1][1:])
	if f, ok, err = r.TryReadRelay(); !ok || err != nil {
		t.Fatalf("the second frame once whole: %v, %v", ok, err)
	}
	if full, _ := r.Decode(f); full.ID != 1 || len(full.Payload) != 300 {
		t.Fatalf("second frame: id %d, %d bytes", full.ID, len(full.Payload))
	}
}

// PeekString reads a plugin message's channel without decoding the packet,
// compressed (the channel inflated alone) or not, and says when the string is
// too long to peek at; a packet cut inside it is malformed.
func TestPeekString(t *testing.T) {
	z, err := NewZlib(-1)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("c", 65)
	for _, threshold := range []int{-1, 0, 64} {
		for _, tc := range []struct {
			channel string
			data    int
			ok      bool
		}{
			{"minecraft:brand", 10, true},
			{"bungeecord:main", 5000, true},
			{"", 3, true},
			{long, 10, false},
		} {
			payload, _ := PluginMessage{Channel: tc.channel, Data: bytes.Repeat([]byte{'d'}, tc.data)}.AppendPayload(nil, 767)
			var wire bytes.Buffer
			w := NewConn(nil, &wire, z)
			r := NewConn(bufio.NewReader(&wire), io.Discard, z)
			if threshold >= 0 {
				mustCompression(t, w, threshold)
				mustCompression(t, r, threshold)
			}
			if err := w.WritePacket(0x19, payload); err != nil {
				t.Fatal(err)
			}
			f, err := r.ReadRaw()
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := r.PeekString(f)
			if err != nil || ok != tc.ok || ok && got != tc.channel {
				t.Errorf("threshold %d, channel %.10q: PeekString = %q, %v, %v", threshold, tc.channel, got, ok, err)
			}
		}
	}
	cut := RawFrame{Bytes: []byte{4, 0x19, 10, 'a', 'b'}, body: 1, threshold: -1}
	if _, _, err := NewConn(nil, io.Discard, nil).PeekString(cut); !errors.Is(err, ErrMalformed) {
		t.Errorf("a string cut short: %v, want ErrMalformed", err)
	}
}
