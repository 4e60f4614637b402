package mc

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// Writing frames: one packet, a queued batch, a relayed frame as it came.

// WritePacket frames, compresses (when on and the packet reaches the
// threshold), encrypts (when on) and writes one packet in a single Write.
func (c *Conn) WritePacket(id int32, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	scratch := framePool.Get().(*[]byte) // framed in, written, given back
	defer putScratch(scratch)
	buf, err := c.appendFrameLocked((*scratch)[:0], id, payload)
	if err != nil {
		return err
	}
	*scratch = buf
	return c.writeLocked(buf, true)
}

// putScratch gives back a frame pool buffer a write framed its packets in, once
// the write is over (nothing keeps it: a batch copies what it takes).
func putScratch(b *[]byte) {
	if cap(*b) <= 4*batchSize {
		*b = (*b)[:0]
		framePool.Put(b)
	}
}

// QueuePacket frames a packet as WritePacket does but holds it back: it leaves
// with the next write (WritePacket, WriteRelay, Flush), in the same system call.
// A login's Set Compression goes with its Login Success this way, each framed
// for the compression in force when it is queued.
func (c *Conn) QueuePacket(id int32, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	scratch := framePool.Get().(*[]byte)
	defer putScratch(scratch)
	buf, err := c.appendFrameLocked((*scratch)[:0], id, payload)
	if err != nil {
		return err
	}
	*scratch = buf
	c.pendLocked(buf)
	return nil
}

// pendLocked appends a frame to the batch, encrypted when encryption is on (the
// batch's buffer comes from the frame pool).
func (c *Conn) pendLocked(frame []byte) {
	if c.pend == nil {
		c.pend = framePool.Get().(*[]byte)
	}
	start := len(*c.pend)
	*c.pend = append(*c.pend, frame...)
	if c.enc != nil {
		b := (*c.pend)[start:]
		c.enc.XORKeyStream(b, b)
	}
}

// appendFrameLocked appends one packet framed for this side's compression.
func (c *Conn) appendFrameLocked(dst []byte, id int32, payload []byte) ([]byte, error) {
	var idb [maxVarIntLen]byte
	head := AppendVarInt(idb[:0], id)
	bodyLen := len(head) + len(payload)

	var buf []byte
	switch {
	case c.wThreshold < 0:
		if bodyLen > MaxFrameSize {
			return nil, fmt.Errorf("mc: packet of %d bytes exceeds the frame limit %d: %w", bodyLen, MaxFrameSize, ErrFrameTooLarge)
		}
		buf = slices.Grow(dst, maxVarIntLen+bodyLen)
		buf = AppendVarInt(buf, int32(bodyLen))
		buf = append(append(buf, head...), payload...)
	case bodyLen < c.wThreshold:
		if bodyLen+1 > MaxFrameSize {
			return nil, fmt.Errorf("mc: packet of %d bytes exceeds the frame limit %d: %w", bodyLen, MaxFrameSize, ErrFrameTooLarge)
		}
		buf = slices.Grow(dst, maxVarIntLen+1+bodyLen)
		buf = AppendVarInt(buf, int32(bodyLen+1))
		buf = append(append(append(buf, 0), head...), payload...)
	default:
		if bodyLen > MaxUncompressedSize {
			return nil, fmt.Errorf("mc: packet of %d bytes exceeds %d: %w", bodyLen, MaxUncompressedSize, ErrFrameTooLarge)
		}
		// Deflate behind room for both prefixes, then write them right-aligned.
		// The id goes to the compressor from an array of this branch: what the
		// compressor is given escapes, and idb would then be allocated on every
		// write, compressed or not.
		const reserve = 2 * maxVarIntLen
		var zid [maxVarIntLen]byte
		buf = c.z.deflate(make([]byte, reserve, reserve+bodyLen/2+64), zid[:copy(zid[:], head)], payload)
		dlSize := VarIntSize(int32(bodyLen))
		frameLen := dlSize + len(buf) - reserve
		if frameLen > MaxFrameSize {
			return nil, fmt.Errorf("mc: packet deflates to %d bytes, over the frame limit %d: %w", frameLen, MaxFrameSize, ErrFrameTooLarge)
		}
		start := reserve - dlSize - VarIntSize(int32(frameLen))
		AppendVarInt(AppendVarInt(buf[start:start], int32(frameLen)), int32(bodyLen))
		buf = buf[start:]
		if dst != nil {
			buf = append(dst, buf...)
		}
	}
	return buf, nil
}

// WriteRaw relays a frame read by ReadRaw on another Conn. When both
// connections use the same compression threshold the bytes go out untouched
// (re-encrypted if this side is encrypted); otherwise the frame is decoded
// and re-framed for this side.
func (c *Conn) WriteRaw(f RawFrame) error {
	c.wmu.Lock()
	if f.threshold == c.wThreshold {
		defer c.wmu.Unlock()
		return c.writeLocked(f.Bytes, false)
	}
	c.wmu.Unlock()
	fr, err := c.Decode(f)
	if err != nil {
		return err
	}
	return c.WritePacket(fr.ID, fr.Payload)
}

// WriteRelay is WriteRaw for a relay loop: with more set (the source has a
// further frame waiting, see FrameBuffered) the frame joins a batch that the next
// call without more writes in one go, up to batchSize. Any other write on the
// Conn writes the batch first, so order is kept.
func (c *Conn) WriteRelay(f RawFrame, more bool) error {
	c.wmu.Lock()
	if f.threshold != c.wThreshold {
		c.wmu.Unlock()
		if err := c.flushBatch(); err != nil {
			return err
		}
		return c.WriteRaw(f)
	}
	defer c.wmu.Unlock()
	if c.pend == nil && !more {
		return c.writeLocked(f.Bytes, false)
	}
	c.pendLocked(f.Bytes)
	if more && len(*c.pend) < batchSize {
		return nil
	}
	return c.writePendLocked()
}

// RelaysAsIs reports that frames read from src leave c as they came (both use
// one compression threshold), not decoded and framed again. Both thresholds
// are set during the login, before a relay starts.
func (c *Conn) RelaysAsIs(src *Conn) bool { return src.rThreshold == c.wThreshold }

// A TryWriter is a connection that can write without waiting (rawtcp.Conn is
// one): TryWrite writes what the socket takes now, perhaps nothing.
type TryWriter interface {
	TryWrite(p []byte) (int, error)
}

// TryWriteRelay is WriteRelay for a writer that must not wait (a relay run on
// an event loop). taken false: nothing was done, because another
// write is under way, the frame must be re-framed, or c's writer cannot write
// without waiting; the caller writes it off the loop. Once taken, what the
// socket did not accept at once stays in c's batch: held says so, and someone
// who may wait must Flush it (any other write sends it first, so order holds).
func (c *Conn) TryWriteRelay(f RawFrame, more bool) (taken, held bool, err error) {
	tw := c.tw
	if tw == nil || !c.wmu.TryLock() {
		return false, false, nil
	}
	defer c.wmu.Unlock()
	if f.threshold != c.wThreshold {
		return false, false, nil
	}
	if c.pend == nil && !more && c.enc == nil {
		// The usual case, written from the frame's own buffer: only a tail the
		// socket refused is copied.
		n, err := tw.TryWrite(f.Bytes)
		if err != nil {
			return true, false, &streamError{"write frame", err}
		}
		if n < len(f.Bytes) {
			c.pend = framePool.Get().(*[]byte)
			*c.pend = append(*c.pend, f.Bytes[n:]...)
		}
		return true, c.pend != nil, nil
	}
	c.pendLocked(f.Bytes)
	if more && len(*c.pend) < batchSize {
		return true, false, nil
	}
	p := c.pend
	n, err := tw.TryWrite(*p)
	if err != nil || n == len(*p) {
		c.pend = nil
		putScratch(p)
		if err != nil {
			return true, false, &streamError{"write frames", err}
		}
		return true, false, nil
	}
	*p = (*p)[:copy(*p, (*p)[n:])] // the rest waits for a Flush
	return true, true, nil
}

// Flush writes what WriteRelay batched: a relay that drops the frame it was
// batching for calls it, so the frames before it do not wait for the next one.
func (c *Conn) Flush() error { return c.flushBatch() }

func (c *Conn) flushBatch() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.pend == nil {
		return nil
	}
	return c.writePendLocked()
}

// writePendLocked writes the batch and gives its buffer back.
func (c *Conn) writePendLocked() error {
	p := c.pend
	c.pend = nil
	_, err := c.w.Write(*p)
	if cap(*p) <= 4*batchSize {
		*p = (*p)[:0]
		framePool.Put(p)
	}
	if err != nil {
		return &streamError{"write frames", err}
	}
	return nil
}

// writeLocked encrypts and writes one frame; owned says buf may be encrypted
// in place, otherwise it is copied first so the caller's bytes stay intact. A
// pending relay batch goes out first, in the same write.
func (c *Conn) writeLocked(buf []byte, owned bool) error {
	if c.pend != nil {
		c.pendLocked(buf)
		return c.writePendLocked()
	}
	if c.enc != nil {
		if !owned {
			buf = append([]byte(nil), buf...)
		}
		c.enc.XORKeyStream(buf, buf)
	}
	if _, err := c.w.Write(buf); err != nil {
		return &streamError{"write frame", err}
	}
	return nil
}

// decryptAhead decrypts, in br's buffer, the bytes that have arrived and are
// not decrypted yet; the stream's keystream stays in order because bytes are
// decrypted exactly once, front to back.
func (c *Conn) decryptAhead() {
	if c.dec == nil {
		return
	}
	if n := c.br.Buffered(); n > c.plain {
		b, _ := c.br.Peek(n) // the buffer itself: Peek does not copy
		c.dec.XORKeyStream(b[c.plain:], b[c.plain:])
		c.plain = n
	}
}

// readByte reads one decrypted byte.
func (c *Conn) readByte() (byte, error) {
	if c.dec != nil && c.plain == 0 {
		if _, err := c.br.Peek(1); err != nil {
			return 0, err
		}
		c.decryptAhead()
	}
	b, err := c.br.ReadByte()
	if err == nil && c.dec != nil {
		c.plain--
	}
	return b, err
}

// readVarInt reads a VarInt through decryption, keeping the bytes as received.
func (c *Conn) readVarInt(buf *[maxVarIntLen]byte) (int32, int, error) {
	var v uint32
	for i := range maxVarIntLen {
		b, err := c.readByte()
		if err != nil {
			if i > 0 && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, i, err
		}
		buf[i] = b
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return int32(v), i + 1, nil
		}
	}
	return 0, maxVarIntLen, ErrVarIntTooLong
}

// readAppend is the package's readAppend with decryption of each chunk.
func (c *Conn) readAppend(dst []byte, n int) ([]byte, error) {
	for n > 0 {
		step := min(n, max(firstChunk, len(dst)))
		if cap(dst)-len(dst) < step {
			grown := make([]byte, len(dst), len(dst)+step)
			copy(grown, dst)
			dst = grown
		}
		chunk := dst[len(dst) : len(dst)+step]
		m, err := io.ReadFull(c.br, chunk)
		if c.dec != nil {
			// The first bytes came from the decrypted front of the buffer;
			// the rest, from the buffer or the socket, are next in the stream.
			k := min(m, c.plain)
			c.plain -= k
			c.dec.XORKeyStream(chunk[k:m], chunk[k:m])
		}
		dst = dst[:len(dst)+m]
		n -= m
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return dst, err
		}
	}
	return dst, nil
}
