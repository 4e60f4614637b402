package mc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Frame is one length-prefixed packet as it travelled on the wire, kept whole
// so the proxy can relay it to a backend unchanged.
type Frame struct {
	// ID is the packet id that starts the frame body.
	ID int32
	// Payload is the body after the packet id; it aliases Raw.
	Payload []byte
	// Raw is the whole frame as received, length prefix included.
	Raw []byte
}

// firstChunk caps the first allocation for a frame body so a peer that
// declares a large frame and sends nothing costs almost no memory.
const firstChunk = 4 << 10

// ReadFrame reads one uncompressed frame. max bounds the declared body length
// (packet id + payload); max <= 0 or above MaxFrameSize means MaxFrameSize.
// Memory grows only as bytes arrive. A clean close before the first byte
// returns an error matching io.EOF; a close inside the frame, io.ErrUnexpectedEOF.
func ReadFrame(r *bufio.Reader, max int) (Frame, error) {
	if max <= 0 || max > MaxFrameSize {
		max = MaxFrameSize
	}
	var prefix [maxVarIntLen]byte
	n, plen, err := readVarIntRaw(r, &prefix)
	if err != nil {
		return Frame{}, fmt.Errorf("mc: read frame length: %w", err)
	}
	if n <= 0 {
		return Frame{}, fmt.Errorf("mc: frame length %d: %w", n, ErrMalformed)
	}
	if int(n) > max {
		return Frame{}, fmt.Errorf("mc: frame of %d bytes exceeds limit %d: %w", n, max, ErrFrameTooLarge)
	}
	raw := make([]byte, plen, plen+min(int(n), firstChunk))
	copy(raw, prefix[:plen])
	raw, err = readAppend(r, raw, int(n))
	if err != nil {
		return Frame{}, fmt.Errorf("mc: read frame body (%d bytes declared): %w", n, err)
	}
	c := cursor{b: raw[plen:]}
	id, err := c.varInt()
	if err != nil {
		return Frame{}, fmt.Errorf("mc: read packet id: %w", err)
	}
	return Frame{ID: id, Payload: raw[plen+c.off:], Raw: raw}, nil
}

// readAppend appends exactly n bytes from r to dst, growing dst at most
// geometrically with what has actually been read, never from n alone.
func readAppend(r io.Reader, dst []byte, n int) ([]byte, error) {
	for n > 0 {
		step := min(n, max(firstChunk, len(dst)))
		if cap(dst)-len(dst) < step {
			grown := make([]byte, len(dst), len(dst)+step)
			copy(grown, dst)
			dst = grown
		}
		m, err := io.ReadFull(r, dst[len(dst):len(dst)+step])
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

// AppendFrame appends a frame (length, packet id, payload) so encoders build
// a whole packet in one buffer that goes out in one write.
func AppendFrame(dst []byte, id int32, payload []byte) []byte {
	dst = AppendVarInt(dst, int32(VarIntSize(id)+len(payload)))
	dst = AppendVarInt(dst, id)
	return append(dst, payload...)
}
