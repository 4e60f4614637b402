package mc

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// passFrames is a stream of n packets (id i, size(i) bytes of i) framed with
// threshold (-1: no compression), as each frame went out.
func passFrames(t *testing.T, z *Zlib, threshold, n int, size func(int) int) [][]byte {
	t.Helper()
	var wire bytes.Buffer
	w := NewConn(nil, &wire, z)
	if err := w.SetCompression(threshold); err != nil {
		t.Fatal(err)
	}
	return writtenFrames(t, w, &wire, n, size)
}

// A relay on the event loop that passes what keep accepts straight from the
// read buffer, and reads the rest frame by frame (TryReadRelay, TryWriteRelay),
// delivers the stream byte for byte, whatever the chunks it arrives in and
// whichever frames keep refuses; keep sees every passed frame's id and wire
// length, in order, and what the writer refuses waits in the batch (held).
func TestPassToRelaysTheStreamAsIs(t *testing.T) {
	z, err := NewZlib(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, threshold := range []int{-1, 0, 256} {
		for seed := range uint64(12) {
			rng := rand.New(rand.NewPCG(seed, 31))
			size := func(i int) int { return []int{0, 1, 40, 255, 256, 700, 3000, 9000}[(i*3+int(seed))%8] }
			frames := passFrames(t, z, threshold, 60, size)
			wire := bytes.Join(frames, nil)

			r := NewConn(nil, io.Discard, z)
			if err := r.SetCompression(threshold); err != nil {
				t.Fatal(err)
			}
			src := newPipeWaiter()
			src.conn = r
			r.LendBuffers(src)
			out := &tryWriter{}
			dst := NewConn(nil, out, z)
			if err := dst.SetCompression(threshold); err != nil {
				t.Fatal(err)
			}

			next := 0 // the id the next frame must carry, passed or read
			passed, read := 0, 0
			refuse := func(id int32) bool { return (int(id)+int(seed))%4 == 0 }
			keep := func(id int32, n int) bool {
				if refuse(id) {
					return false
				}
				if id != int32(next) || n != len(frames[next]) {
					t.Fatalf("threshold %d seed %d: keep saw id %d, %d bytes; want id %d, %d bytes", threshold, seed, id, n, next, len(frames[next]))
				}
				next++
				passed++
				return true
			}
			for off := 0; off < len(wire); {
				n := min(len(wire)-off, 1+rng.IntN(5000))
				if rng.IntN(4) == 0 {
					n = min(len(wire)-off, 1+rng.IntN(3)) // a few bytes: cuts VarInts
				}
				src.send(wire[off : off+n])
				off += n
				for {
					out.room = 1 + rng.IntN(8000) // the socket takes this much now
					if dst.pend != nil {
						if err := dst.Flush(); err != nil { // what an off-loop run does
							t.Fatal(err)
						}
					}
					if ok, err := r.fill(); err != nil || !ok {
						break
					}
					if r.CanPassTo(dst) { // not while a frame begun by a try is unfinished
						if passed, _, err := r.PassTo(dst, keep); err != nil {
							t.Fatal(err)
						} else if passed > 0 {
							continue
						}
					}
					f, ok, err := r.TryReadRelay()
					if err != nil {
						t.Fatalf("threshold %d seed %d frame %d: %v", threshold, seed, next, err)
					}
					if !ok {
						break
					}
					if id, err := r.PeekID(f); err != nil || id != int32(next) {
						t.Fatalf("threshold %d seed %d: read id %d (%v), want %d", threshold, seed, id, err, next)
					}
					next++
					read++
					if taken, _, err := dst.TryWriteRelay(f, false); !taken || err != nil {
						t.Fatalf("threshold %d seed %d: TryWriteRelay = %v, %v", threshold, seed, taken, err)
					}
					Recycle(f)
				}
			}
			if err := dst.Flush(); err != nil {
				t.Fatal(err)
			}
			if next != len(frames) {
				t.Fatalf("threshold %d seed %d: %d frames of %d relayed", threshold, seed, next, len(frames))
			}
			if !bytes.Equal(out.Bytes(), wire) {
				t.Fatalf("threshold %d seed %d: the relayed stream differs from the one sent (%d against %d bytes)", threshold, seed, out.Len(), len(wire))
			}
			if src.waits != 0 {
				t.Fatalf("threshold %d seed %d: the relay waited %d times", threshold, seed, src.waits)
			}
			if passed == 0 || read == 0 {
				t.Fatalf("threshold %d seed %d: %d frames passed and %d read; the test wants both paths", threshold, seed, passed, read)
			}
		}
	}
}

// PassTo passes nothing that breaks a rule of the stream (TryReadRelay refuses
// it with its error), nothing while the writer holds a batch that must go first,
// and it cannot be used on an encrypted side.
func TestPassToLeavesWhatItMustNotPass(t *testing.T) {
	z, err := NewZlib(1)
	if err != nil {
		t.Fatal(err)
	}
	accept := func(int32, int) bool { return true }
	for _, tc := range []struct {
		name string
		wire []byte
		want error
	}{
		{"zero length", []byte{0}, ErrMalformed},
		{"no packet id", []byte{1, 0}, ErrMalformed},
		{"compressed below the threshold", []byte{3, 10, 0x78, 0x9c}, ErrMalformed},
		{"over the frame limit", AppendVarInt(nil, MaxFrameSize+1), ErrFrameTooLarge},
	} {
		r := NewConn(nil, io.Discard, z)
		if err := r.SetCompression(256); err != nil {
			t.Fatal(err)
		}
		src := newPipeWaiter()
		src.conn = r
		r.LendBuffers(src)
		dst := NewConn(nil, &tryWriter{room: 1 << 20}, z)
		if err := dst.SetCompression(256); err != nil {
			t.Fatal(err)
		}
		src.send(tc.wire)
		src.close()
		if ok, err := r.fill(); !ok || err != nil {
			t.Fatalf("%s: fill = %v, %v", tc.name, ok, err)
		}
		if n, _, err := r.PassTo(dst, accept); n != 0 || err != nil {
			t.Errorf("%s: PassTo passed %d bytes (%v)", tc.name, n, err)
		}
		if _, _, err := r.TryReadRelay(); !errors.Is(err, tc.want) {
			t.Errorf("%s: TryReadRelay after PassTo: %v, want %v", tc.name, err, tc.want)
		}
	}

	// A batch held by the writer goes out before anything passed.
	r := NewConn(nil, io.Discard, nil)
	src := newPipeWaiter()
	src.conn = r
	r.LendBuffers(src)
	out := &tryWriter{room: 1}
	dst := NewConn(nil, out, nil)
	if taken, held, err := dst.TryWriteRelay(RawFrame{Bytes: []byte{2, 7, 7}, threshold: -1}, false); !taken || !held || err != nil {
		t.Fatalf("TryWriteRelay = %v, %v, %v; want a held batch", taken, held, err)
	}
	src.send([]byte{2, 9, 9})
	if ok, err := r.fill(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if n, _, _ := r.PassTo(dst, accept); n != 0 {
		t.Fatalf("PassTo passed %d bytes ahead of a held batch", n)
	}

	// Encryption on either side rules passing out.
	if err := dst.EnableEncryption(testSecret); err != nil {
		t.Fatal(err)
	}
	if r.CanPassTo(dst) {
		t.Fatal("CanPassTo toward an encrypted side")
	}
}
