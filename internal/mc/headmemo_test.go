package mc

import (
	"bytes"
	"compress/zlib"
	"math/rand/v2"
	"sync"
	"testing"
)

func clearHeadMemos() {
	for i := range headMemos {
		m := &headMemos[i]
		m.mu.Lock()
		m.used, m.recent = 0, false
		m.mu.Unlock()
	}
}

// sharedStreams are zlib streams of every level, some with a dynamic block.
func sharedStreams(t testing.TB) [][]byte {
	var out [][]byte
	for _, n := range []int{0, 1, 300, 4000, 40000} {
		for _, level := range []int{zlib.NoCompression, zlib.HuffmanOnly, zlib.BestSpeed, zlib.DefaultCompression} {
			out = append(out, zlibOf(t, gamePayload(n), level))
		}
	}
	return out
}

// Whether from the memo or not, a stream's first bytes are inflateHead's, the
// first time and every time after, for every length asked.
func TestSharedHeadsGiveWhatInflateHeadGives(t *testing.T) {
	clearHeadMemos()
	for round := range 3 {
		for i, stream := range sharedStreams(t) {
			for k := 0; k <= maxVarIntLen; k++ {
				want := make([]byte, k)
				wn, werr := inflateHead(want, stream)
				got := make([]byte, k)
				gn, gerr := inflateHeadShared(got, stream)
				if gn != wn || (gerr == nil) != (werr == nil) || !bytes.Equal(got[:gn], want[:wn]) {
					t.Fatalf("round %d, stream %d, %d bytes: % x, %v; inflateHead % x, %v", round, i, k, got[:gn], gerr, want[:wn], werr)
				}
			}
		}
	}
}

// storedEntry is the memo entry holding stream, nil when there is none.
func storedEntry(stream []byte) *headMemo {
	m := headMemoFor(stream)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used == 0 || !bytes.HasPrefix(stream, m.prefix[:m.used]) {
		return nil
	}
	return m
}

// A dynamic block's head is remembered as the bytes the decoder read, and
// those alone answer the next stream that starts with them: what follows them
// is never looked at, and a stream differing inside them is decoded anew.
func TestSharedHeadsAreTheirPrefix(t *testing.T) {
	clearHeadMemos()
	stream := zlibOf(t, gamePayload(4000), zlib.DefaultCompression)
	var buf [maxVarIntLen]byte
	if _, err := inflateHeadShared(buf[:], stream); err != nil {
		t.Fatal(err)
	}
	m := storedEntry(stream)
	if m == nil {
		t.Fatal("a dynamic block's head was not remembered")
	}
	_, used, dynamic, _ := inflateHeadRead(buf[:], stream)
	if !dynamic || m.used != used || used >= len(stream) {
		t.Fatalf("entry of %d bytes; the decoder read %d of %d (dynamic %v)", m.used, used, len(stream), dynamic)
	}
	// The entry answers: altered here, its answer is what comes back.
	m.mu.Lock()
	m.out[0] ^= 0xff
	poisoned := m.out
	m.mu.Unlock()
	other := append(bytes.Clone(stream[:used]), bytes.Repeat([]byte{0x5a}, 64)...)
	if n, err := inflateHeadShared(buf[:], other); err != nil || n != maxVarIntLen || buf != poisoned {
		t.Fatalf("a stream with the entry's prefix: % x, %v; the entry holds % x", buf[:n], err, poisoned)
	}
	// A stream differing inside the prefix is decoded, not answered.
	changed := bytes.Clone(stream)
	changed[used-1] ^= 0x01
	var want [maxVarIntLen]byte
	wn, werr := inflateHead(want[:], changed)
	n, err := inflateHeadShared(buf[:], changed)
	if n != wn || (err == nil) != (werr == nil) || !bytes.Equal(buf[:n], want[:wn]) {
		t.Fatalf("a stream differing at byte %d: % x, %v; inflateHead % x, %v", used-1, buf[:n], err, want[:wn], werr)
	}
}

// A stream the decoder ran out of, and one without a dynamic block, are not
// remembered: the first might read on in a longer stream, the second is cheap.
func TestSharedHeadsSkipCutAndPlainStreams(t *testing.T) {
	clearHeadMemos()
	full := zlibOf(t, gamePayload(4000), zlib.DefaultCompression)
	var buf [maxVarIntLen]byte
	_, used, _, _ := inflateHeadRead(buf[:], full)
	cut := full[:used-1]
	if _, err := inflateHeadShared(buf[:], cut); err != nil {
		t.Fatal(err)
	}
	if storedEntry(cut) != nil {
		t.Fatal("a stream cut inside its head was remembered")
	}
	stored := zlibOf(t, gamePayload(4000), zlib.NoCompression)
	if _, err := inflateHeadShared(buf[:], stored); err != nil {
		t.Fatal(err)
	}
	if storedEntry(stored) != nil {
		t.Fatal("a stored block's head was remembered")
	}
}

// An entry that answered keeps its slot against one stream that does not
// repeat, and gives it up to the next.
func TestSharedHeadsSecondChance(t *testing.T) {
	clearHeadMemos()
	first := zlibOf(t, gamePayload(4000), zlib.DefaultCompression)
	slot := headMemoFor(first)
	rng := rand.New(rand.NewPCG(3, 4))
	var others [][]byte
	for len(others) < 2 {
		p := gamePayload(1000 + rng.IntN(3000))
		for i := range 20 {
			p[rng.IntN(len(p))] = byte(i) // vary the block's code lengths
		}
		if s := zlibOf(t, p, zlib.DefaultCompression); headMemoFor(s) == slot && !bytes.Equal(s[:20], first[:20]) {
			others = append(others, s)
		}
	}
	var buf [maxVarIntLen]byte
	for range 2 { // stored, then answered
		if _, err := inflateHeadShared(buf[:], first); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := inflateHeadShared(buf[:], others[0]); err != nil {
		t.Fatal(err)
	}
	if storedEntry(first) == nil {
		t.Fatal("one passing stream evicted an entry that had answered")
	}
	if _, err := inflateHeadShared(buf[:], others[1]); err != nil {
		t.Fatal(err)
	}
	if storedEntry(first) != nil || storedEntry(others[1]) == nil {
		t.Fatal("the second passing stream did not take the slot")
	}
}

// Relays on many goroutines share the memo: every answer is the stream's own
// (run with -race).
func TestSharedHeadsConcurrently(t *testing.T) {
	clearHeadMemos()
	streams := sharedStreams(t)
	want := make([][maxVarIntLen + 1]byte, len(streams))
	for i, s := range streams {
		n, _ := inflateHead(want[i][:maxVarIntLen], s)
		want[i][maxVarIntLen] = byte(n)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for r := range 200 {
				i := (g + r) % len(streams)
				var buf [maxVarIntLen]byte
				n, err := inflateHeadShared(buf[:], streams[i])
				if err != nil || n != int(want[i][maxVarIntLen]) || !bytes.Equal(buf[:n], want[i][:n]) {
					t.Errorf("stream %d: % x, %v", i, buf[:n], err)
					return
				}
			}
		})
	}
	wg.Wait()
}
