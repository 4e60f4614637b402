package mc

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxUncompressedSize bounds the declared uncompressed size of a compressed
// packet: 2^23, the limit vanilla has applied since 1.17 (and Velocity
// applies); older vanilla used 2^21. Lower it per connection with
// Conn.SetReadLimit where a peer has no business sending large packets.
const MaxUncompressedSize = 8 << 20

// Zlib shares zlib inflaters and deflaters among every connection that uses
// it. A connection borrows one only for the duration of a single frame, so an
// idle session holds no compression state (a deflater is several hundred KiB,
// an inflater tens of KiB). Create one per process and pass it to NewConn.
type Zlib struct {
	level    int
	inflater sync.Pool // *inflater
	deflater sync.Pool // *deflater
}

type inflater struct {
	src bytes.Reader
	zr  io.ReadCloser // also a zlib.Resetter
}

type deflater struct {
	out appendWriter
	zw  *zlib.Writer
}

// appendWriter collects deflate output straight into the frame being built.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// NewZlib returns shared compression state that deflates at level
// (zlib.BestSpeed .. zlib.BestCompression, zlib.DefaultCompression, or
// zlib.HuffmanOnly); the level is the CPU-versus-bandwidth knob of the proxy.
func NewZlib(level int) (*Zlib, error) {
	if level < zlib.HuffmanOnly || level > zlib.BestCompression {
		return nil, fmt.Errorf("mc: zlib level %d outside %d..%d", level, zlib.HuffmanOnly, zlib.BestCompression)
	}
	return &Zlib{level: level}, nil
}

// Level is the deflate level this Zlib was built with.
func (z *Zlib) Level() int { return z.level }

// openInflater borrows an inflater positioned at the start of comp.
func (z *Zlib) openInflater(comp []byte) (*inflater, error) {
	if v, ok := z.inflater.Get().(*inflater); ok {
		v.src.Reset(comp)
		if err := v.zr.(zlib.Resetter).Reset(&v.src, nil); err != nil {
			z.inflater.Put(v)
			return nil, fmt.Errorf("mc: zlib header: %w: %w", ErrMalformed, err)
		}
		return v, nil
	}
	v := &inflater{}
	v.src.Reset(comp)
	zr, err := zlib.NewReader(&v.src)
	if err != nil {
		return nil, fmt.Errorf("mc: zlib header: %w: %w", ErrMalformed, err)
	}
	v.zr = zr
	return v, nil
}

func (z *Zlib) closeInflater(v *inflater) {
	v.src.Reset(nil)
	z.inflater.Put(v)
}

// inflate appends exactly size inflated bytes of comp to dst. Memory grows
// with the bytes actually produced, never from size alone; a stream that
// ends early, runs past size or fails its checksum matches ErrMalformed.
func (z *Zlib) inflate(dst, comp []byte, size int) ([]byte, error) {
	v, err := z.openInflater(comp)
	if err != nil {
		return dst, err
	}
	defer z.closeInflater(v)
	start := len(dst)
	dst, err = readAppend(v.zr, dst, size)
	if err != nil {
		return dst, fmt.Errorf("mc: inflated %d of %d declared bytes: %w: %w", len(dst)-start, size, ErrMalformed, err)
	}
	// The stream must end exactly here; reading on also verifies the checksum.
	var one [1]byte
	switch n, err := io.ReadFull(v.zr, one[:]); {
	case n > 0:
		return dst, fmt.Errorf("mc: packet inflates past its declared %d bytes: %w", size, ErrMalformed)
	case !errors.Is(err, io.EOF):
		return dst, fmt.Errorf("mc: zlib stream after %d bytes: %w: %w", size, ErrMalformed, err)
	}
	return dst, nil
}

// deflate appends the zlib stream of head followed by body to dst.
func (z *Zlib) deflate(dst, head, body []byte) []byte {
	v, ok := z.deflater.Get().(*deflater)
	if !ok {
		v = &deflater{}
		// The level was validated by NewZlib, so this cannot fail.
		v.zw, _ = zlib.NewWriterLevel(&v.out, z.level)
	}
	v.out.b = dst
	v.zw.Reset(&v.out)
	// Writes to an appendWriter cannot fail.
	_, _ = v.zw.Write(head)
	_, _ = v.zw.Write(body)
	_ = v.zw.Close()
	dst = v.out.b
	v.out.b = nil
	z.deflater.Put(v)
	return dst
}
