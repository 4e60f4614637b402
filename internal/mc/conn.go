package mc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Conn is one side of an intercepted session (the player, or a backend) in
// framed form: it reads frames as decrypt -> length -> decompress and writes
// them as compress -> length -> encrypt, with compression and encryption
// switched on mid-stream when the login reaches that point.
//
// One goroutine reads (ReadRaw, ReadFrame) and also makes the switches
// (SetCompression, EnableEncryption) during login; writes (WritePacket,
// WriteRaw) may come from any goroutine and are serialised. Conn never sets
// deadlines or closes anything: the caller owns the net.Conn.
type Conn struct {
	br *bufio.Reader
	z  *Zlib

	// Read side, owned by the reading goroutine.
	rThreshold int   // -1: frames are not in compressed form
	dec        *CFB8 // nil until EnableEncryption
	readLimit  int   // bound on a declared uncompressed size
	// lend, when on, makes br a buffer on loan from readerPool: given back
	// whenever everything in it has been read, taken again when bytes arrive,
	// so a waiting reader (an idle player) holds none. br is nil meanwhile.
	// Held in the Conn, not beside it: a relay event touches it every time.
	lend lender
	// plain is how many bytes at the front of br's buffer are decrypted
	// already: an encrypted stream is decrypted as far as it has arrived, so
	// a frame's length can be read ahead (FrameBuffered) and the buffer is
	// decrypted in one call instead of a VarInt byte at a time.
	plain int
	// part is the frame TryReadRelay began and could not finish: the next read
	// (try or not) goes on with it.
	part partFrame
	// short: TryReadRelay found the buffer holding the start of a frame's
	// length and nothing more arrived; Park then parks with those bytes held.
	short bool
	// sharedHeads: the frames read now reach every player alike (ShareHeads).
	sharedHeads bool

	wmu        sync.Mutex
	w          io.Writer
	tw         TryWriter // w, when it can write without waiting (TryWriteRelay); nil otherwise
	wThreshold int
	enc        *CFB8
	// pend holds relayed frames (already encrypted) not written yet, so a burst
	// leaves in one write instead of one per frame; it is pooled and only held
	// between WriteRelay calls with more set.
	pend *[]byte
}

// framePool holds the buffers relayed frames are read into and batched in, so
// a relay allocates nothing per frame and an idle session holds none of them.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, batchSize); return &b }}

// batchSize is how much a relay gathers before it writes even while more frames
// are waiting, and the size of a pooled frame buffer.
const batchSize = 32 << 10

// ReaderSize is the size of the pooled read buffers: 8 KiB holds a usual
// join's largest frames whole (a 1.20.4 registry data frame is about 4.6 KiB
// compressed), so the relay passes them from the buffer in one read. An idle
// session holds none (LendBuffers).
const ReaderSize = 8192

// readerPool holds the read buffers of lending Conns and of whoever else frames
// a connection for a moment (the proxy's handshake reader comes from here and
// becomes a Conn's).
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, ReaderSize) }}

// GetReader returns a pooled buffered reader on r.
func GetReader(r io.Reader) *bufio.Reader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// PutReader gives a reader back to the pool; nothing may use it afterwards.
func PutReader(br *bufio.Reader) {
	br.Reset(nil)
	readerPool.Put(br)
}

// FrameBuffered reports that a whole next frame has arrived already, so a relay
// can batch the frame in hand with it (it never holds a frame back waiting for
// bytes still on the way). It is part of the read side: an encrypted stream's
// buffered bytes are decrypted here.
func (c *Conn) FrameBuffered() bool {
	if c.br == nil {
		return false
	}
	n := c.br.Buffered()
	if n == 0 {
		return false
	}
	c.decryptAhead()
	b, _ := c.br.Peek(min(n, maxVarIntLen))
	var v uint32
	for i, x := range b {
		v |= uint32(x&0x7f) << (7 * i)
		if x&0x80 == 0 {
			return n >= i+1+int(v)
		}
	}
	return false
}

// NewConn frames a connection. br must be the reader that has consumed
// everything before this point (it may already hold bytes of later frames;
// they are decrypted as they are read once encryption is on). z may be nil
// for a side that never compresses; SetCompression then fails.
func NewConn(br *bufio.Reader, w io.Writer, z *Zlib) *Conn {
	tw, _ := w.(TryWriter) // asked once here, not on every relayed frame
	return &Conn{br: br, w: w, tw: tw, z: z, rThreshold: -1, wThreshold: -1, readLimit: MaxUncompressedSize}
}

// SetCompression switches on compressed framing with the given threshold
// (packets of at least threshold bytes are deflated), as Set Compression
// does; a negative threshold switches it off. It applies to the next frame in
// each direction, so call it right after writing or reading Set Compression.
func (c *Conn) SetCompression(threshold int) error {
	if threshold >= 0 && c.z == nil {
		return errors.New("mc: SetCompression needs a Zlib: pass one to NewConn")
	}
	if threshold < 0 {
		threshold = -1
	}
	c.rThreshold = threshold
	c.wmu.Lock()
	c.wThreshold = threshold
	c.wmu.Unlock()
	return nil
}

// Threshold is the compression threshold in force, -1 when off, so a relay
// can tell whether two sides can pass compressed frames through untouched.
func (c *Conn) Threshold() int { return c.rThreshold }

// EnableEncryption switches on AES/CFB8 in both directions with the shared
// secret as key and IV. It applies to the next byte read and written: the
// server side calls it after reading the encryption response, the client
// side after writing it.
func (c *Conn) EnableEncryption(secret []byte) error {
	if c.dec != nil {
		return errors.New("mc: encryption is already on")
	}
	enc, dec, err := NewCFB8Pair(secret)
	if err != nil {
		return err
	}
	c.dec = dec
	c.wmu.Lock()
	c.enc = enc
	c.wmu.Unlock()
	return nil
}

// Encrypted reports whether EnableEncryption has been called.
func (c *Conn) Encrypted() bool { return c.dec != nil }

// SetReadLimit bounds the size of packets read, declared uncompressed size
// included (default MaxUncompressedSize); frames on the wire stay bounded by
// MaxFrameSize too. A player's side can be held far below a backend's, which
// sends chunks.
func (c *Conn) SetReadLimit(n int) {
	if n <= 0 || n > MaxUncompressedSize {
		n = MaxUncompressedSize
	}
	c.readLimit = n
}

// RawFrame is one frame exactly as it crossed the wire, after decryption and
// before decompression, so a relay can forward it without inflating it.
type RawFrame struct {
	// Bytes is the whole frame, length prefix included; for a compressed
	// connection the content is still in compressed form.
	Bytes     []byte
	body      int     // offset of the packet content (after the prefix and data length)
	dataLen   int32   // declared uncompressed size; 0 when the content is plain
	threshold int     // threshold of the connection it was read on
	box       *[]byte // the frame pool's buffer Bytes was read into (ReadRelay); nil otherwise
}

// Compressed reports whether the frame's content is deflated.
func (f RawFrame) Compressed() bool { return f.dataLen > 0 }

// streamError is a read or write of the connection that failed, under the
// step's name (errors.Is and As see the cause). It is formatted only when
// printed: every session ends with one (the peer's close), and few are shown.
type streamError struct {
	step string
	err  error
}

func (e *streamError) Error() string { return "mc: " + e.step + ": " + e.err.Error() }
func (e *streamError) Unwrap() error { return e.err }

// cleanEnd is how every relay's read ends when its peer closes between frames:
// one value for all of them, not one allocated per session.
var cleanEnd error = &streamError{"read frame length", io.EOF}

// lengthError is a failed read of a frame's length.
func lengthError(err error) error {
	if err == io.EOF {
		return cleanEnd
	}
	return &streamError{"read frame length", err}
}

// IsEOF reports errors.Is(err, io.EOF). A relay's reads end that way once a
// session, and the read's own wrap is told without errors.Is's walk of
// interface checks (a few microseconds on a cold cache, where the relay runs).
func IsEOF(err error) bool {
	if se, ok := err.(*streamError); ok && se.err == io.EOF {
		return true
	}
	return errors.Is(err, io.EOF)
}

// ReadRaw reads the next frame without inflating it. The wire length is
// bounded by MaxFrameSize and a declared uncompressed size by the read limit;
// a compressed frame declaring less than the threshold is refused, as vanilla
// refuses it. A clean close before the first byte matches io.EOF.
func (c *Conn) ReadRaw() (RawFrame, error) {
	return c.readRaw(false)
}

// ReadRelay is ReadRaw into a pooled buffer, taken once the frame's first bytes
// have arrived (an idle reader holds none). Pass the frame to Recycle once it
// has been written on.
func (c *Conn) ReadRelay() (RawFrame, error) {
	return c.readRaw(true)
}

// Recycle gives a ReadRelay frame's buffer back; f must not be used afterwards.
func Recycle(f RawFrame) {
	if f.box != nil && cap(f.Bytes) <= 4*batchSize {
		*f.box = f.Bytes[:0] // the box goes back with the buffer: a Put allocates nothing
		framePool.Put(f.box)
	}
}

func (c *Conn) readRaw(pooled bool) (RawFrame, error) {
	c.short = false
	if err := c.refill(); err != nil {
		return RawFrame{}, lengthError(err)
	}
	if c.part.raw == nil {
		if err := c.readHead(pooled); err != nil {
			return RawFrame{}, err
		}
	}
	p := c.part
	c.part = partFrame{}
	raw, err := c.readAppend(p.raw, p.rest)
	if err != nil {
		return RawFrame{}, fmt.Errorf("mc: read frame body (%d bytes declared): %w", len(p.raw)-p.plen+p.rest, err)
	}
	return c.frameOf(raw, p.plen, p.box)
}

// partFrame is a frame whose length has been read: raw holds its bytes so far
// (plen of them the length's VarInt), rest are still to come.
type partFrame struct {
	raw        []byte
	box        *[]byte // raw's pool box; nil when raw is the caller's own
	plen, rest int
}

// TryReadRelay is ReadRelay for a reader that must not wait (a relay run on
// an event loop): it reads only what has arrived. ok false and no
// error: the next frame is not all there yet, and what came of it is kept for
// the next read. Only a Conn lending its buffers can read without waiting;
// another gets errCannotTry (an ok false would have its caller try forever).
func (c *Conn) TryReadRelay() (f RawFrame, ok bool, err error) {
	if !c.lend.on {
		return RawFrame{}, false, errCannotTry
	}
	c.short = false
	c.lend.nowait = true
	defer func() { c.lend.nowait = false }()
	if got, err := c.fill(); !got {
		if err != nil {
			err = lengthError(err)
		}
		return RawFrame{}, false, err
	}
	if c.part.raw == nil {
		if !c.lengthArrived() {
			c.short = true
			return RawFrame{}, false, nil
		}
		if err := c.readHead(true); err != nil {
			return RawFrame{}, false, err
		}
	}
	p := &c.part
	raw, err := c.readAppend(p.raw, p.rest)
	p.rest -= len(raw) - len(p.raw)
	p.raw = raw
	switch {
	case errors.Is(err, errWouldBlock):
		return RawFrame{}, false, nil
	case err != nil:
		declared := len(p.raw) - p.plen + p.rest
		c.part = partFrame{}
		return RawFrame{}, false, fmt.Errorf("mc: read frame body (%d bytes declared): %w", declared, err)
	}
	whole := *p
	c.part = partFrame{}
	f, err = c.frameOf(whole.raw, whole.plen, whole.box)
	return f, err == nil, err
}

// lengthArrived reports that the next frame's length VarInt is all in the
// buffer (or is too long, for readVarInt to refuse), topping the buffer up
// with what has arrived; nothing is consumed.
func (c *Conn) lengthArrived() bool {
	if c.br.Buffered() < maxVarIntLen {
		_, _ = c.br.Peek(maxVarIntLen) // lend.nowait: takes only what is there
	}
	c.decryptAhead()
	b, _ := c.br.Peek(min(c.br.Buffered(), maxVarIntLen))
	for _, x := range b {
		if x&0x80 == 0 {
			return true
		}
	}
	return len(b) == maxVarIntLen
}

// readHead reads a frame's length and makes c.part the frame to fill.
func (c *Conn) readHead(pooled bool) error {
	var prefix [maxVarIntLen]byte
	n, plen, err := c.readVarInt(&prefix)
	if err != nil {
		return lengthError(err)
	}
	if n <= 0 {
		return fmt.Errorf("mc: frame length %d: %w", n, ErrMalformed)
	}
	if limit := c.wireLimit(); int(n) > limit {
		return fmt.Errorf("mc: frame of %d bytes exceeds limit %d: %w", n, limit, ErrFrameTooLarge)
	}
	// Size the buffer by what has arrived, never by the declared length alone.
	var raw []byte
	var box *[]byte
	if pooled {
		box = framePool.Get().(*[]byte)
		raw = (*box)[:plen]
	} else {
		raw = make([]byte, plen, plen+min(int(n), max(firstChunk, c.br.Buffered())))
	}
	copy(raw, prefix[:plen])
	c.part = partFrame{raw: raw, box: box, plen: plen, rest: int(n)}
	return nil
}

// frameOf checks a frame read whole and says where its packet starts.
func (c *Conn) frameOf(raw []byte, plen int, box *[]byte) (RawFrame, error) {
	f := RawFrame{Bytes: raw, body: plen, threshold: c.rThreshold, box: box}
	if c.rThreshold >= 0 {
		cur := cursor{b: raw[plen:]}
		dl, err := cur.varInt()
		if err != nil {
			return RawFrame{}, fmt.Errorf("mc: data length: %w", err)
		}
		f.body += cur.off
		if err := c.dataLenError(dl); err != nil {
			return RawFrame{}, err
		}
		f.dataLen = dl
	}
	if f.body >= len(raw) {
		return RawFrame{}, fmt.Errorf("mc: frame without a packet id: %w", ErrMalformed)
	}
	if f.dataLen == 0 && len(raw)-f.body > c.readLimit {
		return RawFrame{}, fmt.Errorf("mc: packet of %d bytes exceeds limit %d: %w", len(raw)-f.body, c.readLimit, ErrFrameTooLarge)
	}
	return f, nil
}

// dataLenError is the rule a compressed frame's declared uncompressed size dl
// breaks, if any (0: the packet is not compressed).
func (c *Conn) dataLenError(dl int32) error {
	switch {
	case dl < 0:
		return fmt.Errorf("mc: data length %d: %w", dl, ErrMalformed)
	case dl > 0 && int(dl) < c.rThreshold:
		return fmt.Errorf("mc: compressed packet of %d bytes is below the threshold %d: %w", dl, c.rThreshold, ErrMalformed)
	case int(dl) > c.readLimit:
		return fmt.Errorf("mc: packet inflates to %d bytes, limit %d: %w", dl, c.readLimit, ErrFrameTooLarge)
	}
	return nil
}

// wireLimit bounds a frame's wire length before any of it is read: the frame
// limit, or less when the read limit is lower (zlib adds at most 5 bytes per
// 16 KiB block plus 6, so limit + limit/4096 + 64 covers any valid frame).
func (c *Conn) wireLimit() int {
	return min(MaxFrameSize, c.readLimit+c.readLimit>>12+64)
}

// ReadFrame reads and fully decodes the next frame; Frame.Raw is the frame as
// on the wire (compressed when the connection is).
func (c *Conn) ReadFrame() (Frame, error) {
	f, err := c.ReadRaw()
	if err != nil {
		return Frame{}, err
	}
	return c.Decode(f)
}

// Decode inflates a raw frame into its packet id and payload.
func (c *Conn) Decode(f RawFrame) (Frame, error) {
	body := f.Bytes[f.body:]
	if f.dataLen > 0 {
		if c.z == nil {
			return Frame{}, errors.New("mc: compressed frame on a Conn without a Zlib")
		}
		// Start from what the compressed bytes plausibly inflate to (bombs
		// grow the buffer only as they actually inflate).
		dst := make([]byte, 0, min(int(f.dataLen), max(firstChunk, 4*len(body))))
		var err error
		if body, err = c.z.inflate(dst, body, int(f.dataLen)); err != nil {
			return Frame{}, err
		}
	}
	cur := cursor{b: body}
	id, err := cur.varInt()
	if err != nil {
		return Frame{}, fmt.Errorf("mc: packet id: %w", err)
	}
	return Frame{ID: id, Payload: body[cur.off:], Raw: f.Bytes}, nil
}

// PeekID returns a raw frame's packet id, inflating only its first bytes,
// so a relay can spot the few packets it must act on and pass the rest.
func (c *Conn) PeekID(f RawFrame) (int32, error) {
	var head [maxVarIntLen]byte
	body, err := c.peek(f, head[:])
	if err != nil {
		return 0, err
	}
	cur := cursor{b: body}
	id, err := cur.varInt()
	if err != nil {
		return 0, fmt.Errorf("mc: packet id: %w", err)
	}
	return id, nil
}

// peek returns the first bytes of f's packet (its id first): the frame's own
// when it is not compressed, else up to len(buf) of them inflated into buf.
func (c *Conn) peek(f RawFrame, buf []byte) ([]byte, error) {
	body := f.Bytes[f.body:]
	if f.dataLen == 0 {
		return body, nil
	}
	if c.z == nil {
		return nil, errors.New("mc: compressed frame on a Conn without a Zlib")
	}
	n, err := c.inflateHead(buf[:min(int(f.dataLen), len(buf))], body)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// ShareHeads says whether the frames this side reads from now on are the
// same for every player (a backend's configuration phase: registries, tags),
// so the ids of compressed ones are looked up among those other players
// received before their Huffman headers are decoded again. Only the reading
// goroutine calls it.
func (c *Conn) ShareHeads(on bool) { c.sharedHeads = on }

func (c *Conn) inflateHead(buf, stream []byte) (int, error) {
	if c.sharedHeads {
		return inflateHeadShared(buf, stream)
	}
	return inflateHead(buf, stream)
}

// maxPeekString bounds what PeekString reads: enough for any plugin channel in use.
const maxPeekString = 64

// PeekString reads the string that opens f's packet after its id (a plugin
// message's channel) without decoding the rest: of a compressed frame only
// that much is inflated. ok false: the string is longer than 64 bytes.
func (c *Conn) PeekString(f RawFrame) (s string, ok bool, err error) {
	var head [2*maxVarIntLen + maxPeekString]byte
	body, err := c.peek(f, head[:])
	if err != nil {
		return "", false, err
	}
	cur := cursor{b: body}
	if _, err := cur.varInt(); err != nil {
		return "", false, fmt.Errorf("mc: packet id: %w", err)
	}
	n, err := cur.varInt()
	switch {
	case err != nil:
		return "", false, fmt.Errorf("mc: string length: %w", err)
	case n < 0:
		return "", false, fmt.Errorf("mc: string length %d: %w", n, ErrMalformed)
	case n > maxPeekString:
		return "", false, nil
	}
	b, err := cur.take(int(n))
	if err != nil {
		return "", false, fmt.Errorf("mc: string: %w", err)
	}
	return string(b), true, nil
}
