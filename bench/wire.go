package bench

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// packet is one play packet of the relay workloads: what a game sends, before
// framing, compression and encryption.
type packet struct {
	id      int32
	payload []byte
}

// size is the packet's uncompressed bytes (id + payload): the unit the relay
// workloads count, so compressed and uncompressed sides compare.
func (p packet) size() int { return mc.VarIntSize(p.id) + len(p.payload) }

// playMix is the traffic of the relay workloads, in both directions: per batch
// 24 small packets below the vanilla threshold (movement, entity updates), 6
// just above it and one 16 KiB chunk-like packet; every payload is drawn from a
// small alphabet so it deflates about as well as play traffic (2-3x).
var playMix = func() []packet {
	rng := rand.New(rand.NewPCG(19, 13))
	mk := func(id int32, n int) packet {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32() % 24)
		}
		return packet{id: id, payload: b}
	}
	var ps []packet
	for i := range 31 {
		switch {
		case i == 15:
			ps = append(ps, mk(0x27, 16<<10))
		case i%5 == 4:
			ps = append(ps, mk(0x2c, 300))
		default:
			ps = append(ps, mk(0x2e, 32))
		}
	}
	return ps
}()

// batch is playMix framed once for one side's compression threshold, so a
// workload writes pre-built bytes and the load generator spends its CPU on the
// socket, not on deflate.
type batch struct {
	wire        []byte // the frames as they cross the wire (before encryption)
	frames      int
	packetBytes int64
}

// clientZlib deflates like a vanilla client or server (default level).
var clientZlib = func() *mc.Zlib {
	z, err := mc.NewZlib(zlib.DefaultCompression)
	if err != nil {
		panic(err) // a constant, valid level
	}
	return z
}()

func buildBatch(threshold int) batch {
	var buf bytes.Buffer
	c := mc.NewConn(nil, &buf, clientZlib)
	_ = c.SetCompression(threshold) // never fails: clientZlib is set
	b := batch{frames: len(playMix)}
	for _, p := range playMix {
		if err := c.WritePacket(p.id, p.payload); err != nil {
			panic(fmt.Sprintf("bench: framing the play mix: %v", err)) // sizes are constants under every limit
		}
		b.packetBytes += int64(p.size())
	}
	b.wire = buf.Bytes()
	return b
}

// batches caches buildBatch for the thresholds of a run.
var (
	batchMu sync.Mutex
	batches = map[int]batch{}
)

func batchFor(threshold int) batch {
	batchMu.Lock()
	defer batchMu.Unlock()
	b, ok := batches[threshold]
	if !ok {
		b = buildBatch(threshold)
		batches[threshold] = b
	}
	return b
}

// skipFrame reads one frame's header and discards its body without inflating
// it: the cheap way a load generator counts what it received. It returns the
// packet's uncompressed size (the data length of a compressed frame) and its
// packet id when the frame is plain or its packet is tiny (-1 otherwise), so
// the end marker is seen at any threshold without inflating play packets.
func skipFrame(br *bufio.Reader, threshold int) (int, int32, error) {
	n, err := mc.ReadVarInt(br)
	if err != nil {
		return 0, -1, err
	}
	if n <= 0 || n > mc.MaxFrameSize {
		return 0, -1, fmt.Errorf("frame length %d", n)
	}
	size, rest := int(n), int(n)
	compressed := false
	if threshold >= 0 {
		dl, err := mc.ReadVarInt(br)
		if err != nil {
			return 0, -1, err
		}
		rest -= mc.VarIntSize(dl)
		if dl < 0 || rest < 1 {
			return 0, -1, fmt.Errorf("data length %d in a %d-byte frame", dl, n)
		}
		size = rest
		if dl > 0 {
			size, compressed = int(dl), true
		}
	}
	id := int32(-1)
	if compressed && size <= 8 {
		body := make([]byte, rest)
		if _, err := io.ReadFull(br, body); err != nil {
			return 0, -1, fmt.Errorf("frame body: %w", err)
		}
		zr, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			return 0, -1, fmt.Errorf("tiny compressed packet: %w", err)
		}
		defer zr.Close()
		var first [1]byte
		if _, err := io.ReadFull(zr, first[:]); err != nil {
			return 0, -1, fmt.Errorf("tiny compressed packet: %w", err)
		}
		if first[0] < 0x80 {
			id = int32(first[0])
		}
		return size, id, nil
	}
	if !compressed {
		first, err := br.Peek(1)
		if err != nil {
			return 0, -1, fmt.Errorf("frame body: %w", err)
		}
		if first[0] < 0x80 { // a one-byte VarInt id
			id = int32(first[0])
		}
	}
	if _, err := br.Discard(rest); err != nil {
		return 0, -1, fmt.Errorf("frame body: %w", err)
	}
	return size, id, nil
}

// checkPacket compares the i-th packet a peer received with what playMix sent.
func checkPacket(i int, id int32, payload []byte) bool {
	want := playMix[i%len(playMix)]
	return id == want.id && bytes.Equal(payload, want.payload)
}

// cryptReader decrypts what it reads once dec is set: the client's side of
// encryption, below the bufio.Reader, so framing code sees plain bytes.
type cryptReader struct {
	r   io.Reader
	dec *mc.CFB8
}

func (c *cryptReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.dec != nil && n > 0 {
		c.dec.XORKeyStream(p[:n], p[:n])
	}
	return n, err
}

// cryptWriter encrypts what it writes once enc is set, into its own buffer so
// a pre-built batch can be written again and again.
type cryptWriter struct {
	w   io.Writer
	enc *mc.CFB8
	buf []byte
}

func (c *cryptWriter) Write(p []byte) (int, error) {
	if c.enc == nil {
		return c.w.Write(p)
	}
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	out := c.buf[:len(p)]
	c.enc.XORKeyStream(out, p)
	return c.w.Write(out)
}

// countPayload is the backend's answer to a sink: frames, packet bytes and
// packets that did not match playMix (checked only when verifying).
func countPayload(frames, bytes, bad int64) []byte {
	var b [24]byte
	binary.BigEndian.PutUint64(b[0:], uint64(frames))
	binary.BigEndian.PutUint64(b[8:], uint64(bytes))
	binary.BigEndian.PutUint64(b[16:], uint64(bad))
	return b[:]
}

func parseCount(p []byte) (frames, bytes, bad int64, err error) {
	if len(p) != 24 {
		return 0, 0, 0, fmt.Errorf("count packet of %d bytes, want 24", len(p))
	}
	return int64(binary.BigEndian.Uint64(p)), int64(binary.BigEndian.Uint64(p[8:])), int64(binary.BigEndian.Uint64(p[16:])), nil
}

// maxBurst bounds how many batches a paced sender writes at once.
const maxBurst = 64

// pacer spreads a relay workload's sender over time at rate MiB/s of
// packets, in bursts: every write carries all the batches due by then (one
// write, however the sender encrypts), and the sender sleeps once it is a
// millisecond ahead, as a game server's tick does. So every mode sees one
// arrival pattern; without a rate the sender writes one batch per write as
// fast as it can.
type pacer struct {
	start time.Time
	rate  float64 // MiB/s; 0: unpaced
	per   int64   // packet bytes per batch
	sent  int64   // batches written
}

// next is how many batches the next write carries.
func (p *pacer) next() int {
	if p.rate <= 0 {
		return 1
	}
	due := int64(time.Since(p.start).Seconds() * p.rate * (1 << 20) / float64(p.per))
	return int(min(max(due-p.sent, 1), maxBurst))
}

// wrote counts k batches written and sleeps while the sender is ahead.
func (p *pacer) wrote(k int) {
	p.sent += int64(k)
	if p.rate <= 0 {
		return
	}
	due := p.start.Add(time.Duration(float64(p.sent*p.per) / (p.rate * (1 << 20)) * float64(time.Second)))
	if d := time.Until(due); d >= time.Millisecond {
		time.Sleep(d)
	}
}

// burst is maxBurst copies of a batch's wire bytes, so any number of batches
// up to it is one slice.
func (b batch) burst() []byte { return bytes.Repeat(b.wire, maxBurst) }

// cfb8Limits sets, on every client_only relay row, the proxy CPU it cannot go
// below here: the same workload's offline row (the relay without
// encryption) plus one CFB8 pass over the wire bytes at this machine's AES-NI
// limit — block latency for what the proxy encrypts (down), throughput for
// what it decrypts (up). The wire is the play mix framed at the backend's
// threshold, so a GiB of packets is fewer bytes of ciphertext.
func cfb8Limits(rows []Row, logf func(string, ...any)) {
	lat, thr, ok := mc.AESLimit()
	if !ok {
		return
	}
	b := batchFor(backendThreshold)
	wirePerPacket := float64(len(b.wire)) / float64(b.packetBytes)
	logf("CFB8 limit: AES-128 block latency %.2f ns, throughput %.2f ns/block; %.3f wire bytes per packet byte", lat, thr, wirePerPacket)
	for i := range rows {
		r := &rows[i]
		mode, ok := strings.CutPrefix(r.Name, "relay-")
		// A peer's rows (Gate's) are references, not ours held to the limit.
		if !ok || r.ProxyCPU == 0 || !strings.Contains(mode, " "+modeClientOnly) || r.Peer {
			continue
		}
		up := strings.HasPrefix(mode, "up-")
		offName := strings.Replace(r.Name, modeClientOnly, modeOffline, 1)
		for _, off := range rows {
			if off.Name != offName || off.Target != r.Target || off.ProxyCPU == 0 {
				continue
			}
			ns := lat // the proxy encrypts what goes down to the player
			if up {
				ns = thr // and decrypts what comes up
			}
			r.CPULimit = off.ProxyCPU + wirePerPacket*ns*(1<<30)/1e6 // ms per GiB
			logf("%-32s proxy CPU %.0f %s, limit %.0f (%.2f×)", r.Name, r.ProxyCPU, r.CPUUnit, r.CPULimit, r.ProxyCPU/r.CPULimit)
		}
	}
}
