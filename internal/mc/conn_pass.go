package mc

// Passing frames straight from the read buffer: the fast path of a relay on the
// event loop. A frame read with TryReadRelay is copied out of the read buffer into
// a pooled frame, and batched into another pooled buffer before it is written;
// between two sides that frame alike and encrypt neither (an offline session), the
// frames the buffer holds whole can leave from the buffer itself, one write for
// all of them, once the relay has seen each one's packet id.

// CanPassTo reports that frames c has read can be written to dst from c's read
// buffer as they are (PassTo): c lends its buffers and has no frame begun,
// neither side encrypts, both frame with one compression threshold, and dst can
// write without waiting.
func (c *Conn) CanPassTo(dst *Conn) bool {
	return c.lend.on && c.br != nil && c.part.raw == nil && c.dec == nil &&
		c.rThreshold == dst.wThreshold && dst.enc == nil && dst.tw != nil
}

// PassTo relays to dst, in one write from c's read buffer, the frames at its
// front that keep accepts: it walks them in order, giving keep each one's
// packet id and wire length (the relay's accounting), and stops at the first
// keep refuses, at one not all there, and at one that breaks a rule of the
// stream (left for TryReadRelay to refuse with its error). It returns how many
// bytes it passed; 0: nothing was done (none accepted, or dst's write side busy
// or holding a batch, which must go first). What dst's socket does not take at
// once stays in dst's batch: held says so, and someone who may wait must Flush
// it. Call it only when CanPassTo holds.
func (c *Conn) PassTo(dst *Conn, keep func(id int32, wire int) bool) (n int, held bool, err error) {
	if !dst.wmu.TryLock() {
		return 0, false, nil
	}
	defer dst.wmu.Unlock()
	if dst.pend != nil {
		return 0, false, nil
	}
	buf, _ := c.br.Peek(c.br.Buffered())
	for n < len(buf) {
		wire, id, ok := c.wholeFrame(buf[n:])
		if !ok || !keep(id, wire) {
			break
		}
		n += wire
	}
	if n == 0 {
		return 0, false, nil
	}
	buf = buf[:n]
	w, err := dst.tw.TryWrite(buf)
	if err == nil && w < n {
		dst.pendLocked(buf[w:])
		held = true
	}
	_, _ = c.br.Discard(n)
	if err != nil {
		return n, false, &streamError{"write frames", err}
	}
	return n, held, nil
}

// wholeFrame reads the frame at the front of b: its wire length and packet id,
// ok false when it is not all in b or breaks a rule readHead or frameOf enforces.
func (c *Conn) wholeFrame(b []byte) (wire int, id int32, ok bool) {
	cur := cursor{b: b}
	n, err := cur.varInt()
	if err != nil || n <= 0 || int(n) > c.wireLimit() || len(b)-cur.off < int(n) {
		return 0, 0, false
	}
	wire = cur.off + int(n)
	body := cursor{b: b[cur.off:wire]}
	dataLen := int32(0)
	if c.rThreshold >= 0 {
		if dataLen, err = body.varInt(); err != nil || c.dataLenError(dataLen) != nil {
			return 0, 0, false
		}
	}
	packet := body.b[body.off:]
	switch {
	case len(packet) == 0:
		return 0, 0, false
	case dataLen == 0:
		if len(packet) > c.readLimit {
			return 0, 0, false
		}
	default:
		var head [maxVarIntLen]byte
		k, err := c.inflateHead(head[:min(int(dataLen), len(head))], packet)
		if err != nil {
			return 0, 0, false
		}
		packet = head[:k]
	}
	pc := cursor{b: packet}
	if id, err = pc.varInt(); err != nil {
		return 0, 0, false
	}
	return wire, id, true
}
