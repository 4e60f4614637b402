package mc

import (
	"bufio"
	"errors"
	"io"
)

// Reading without a goroutine: a Conn that lends its buffers can be tried
// (a read that never waits), and says when it holds nothing to read (Idle),
// so that its owner may wait for the socket with no goroutine and no buffer
// (the relay parks on it: internal/session). mc knows nothing of event loops.

// Await blocks until the next frame's first byte has arrived, consuming
// nothing: a reader interrupted here (a deadline) loses no part of a frame.
func (c *Conn) Await() error {
	if err := c.refill(); err != nil {
		return err
	}
	_, err := c.br.Peek(1)
	return err
}

// A Waiter is a connection that can be read without waiting and waited on
// without reading (rawtcp.Conn is one): what lets a Conn hold no read buffer
// while nothing has arrived.
type Waiter interface {
	io.Reader
	// TryRead reads what has arrived; 0 and no error: nothing has.
	TryRead(p []byte) (int, error)
	// WaitReadable returns when bytes may have arrived (nil: read again), or
	// with the read deadline's or the connection's error.
	WaitReadable() error
}

// LendBuffers makes c's read buffer a loan from a pool shared by every Conn:
// given back whenever c has read all it holds and must wait for more, taken
// again when src has bytes, so an idle session holds no read buffer. src is
// what br reads from. From here c owns br: Release gives it back.
func (c *Conn) LendBuffers(src Waiter) {
	c.lend = lender{on: true, src: src}
}

// Release gives c's read buffer back to the pool; the owner calls it once
// nothing reads c any more.
func (c *Conn) Release() {
	if c.br != nil {
		PutReader(c.br)
		c.br = nil
	}
}

// lender is the source of a lent buffer: its first read after a loan does not
// wait, so a buffer is only ever held while bytes are there to read.
type lender struct {
	on    bool // LendBuffers was called
	src   Waiter
	first bool
	eof   bool // src has ended: no read is made again
	// nowait makes every read a TryRead (TryReadRelay): what has not arrived
	// is errWouldBlock, never a wait.
	nowait bool
	// blocked: a read since fill cleared it was errWouldBlock.
	blocked bool
}

// errCannotTry: TryReadRelay on a Conn that does not lend its buffers.
var errCannotTry = errors.New("mc: a read without waiting needs a Conn lending its buffers")

// errWouldBlock is a first read that found nothing: the buffer goes back.
var errWouldBlock = errors.New("mc: nothing to read yet")

func (l *lender) Read(p []byte) (int, error) {
	if !l.first && !l.nowait {
		return l.src.Read(p) // within a frame: wait for the rest, buffer held
	}
	l.first = false
	n, err := l.src.TryRead(p)
	if n == 0 && err == nil {
		l.blocked = true
		return 0, errWouldBlock
	}
	return n, err
}

// refill is called before a frame is read: with a lender, an empty buffer goes
// back to the pool and one is taken again once bytes have arrived.
func (c *Conn) refill() error {
	if !c.lend.on {
		return nil
	}
	for {
		if ok, err := c.fill(); ok || err != nil {
			return err
		}
		if err := c.lend.src.WaitReadable(); err != nil {
			return err
		}
	}
}

// fill makes c hold a buffer with bytes in it (true), or none when nothing has
// arrived (false, no error) or the read failed (false, its error). The buffer
// goes back on an error too, so a session's end leaves none to the collector;
// the end of the stream is remembered, so it costs one read(2), not one per call.
func (c *Conn) fill() (bool, error) {
	br := c.br
	switch {
	case br != nil && br.Buffered() > 0:
		return true, nil
	case c.lend.eof:
		c.Release()
		return false, io.EOF
	case br == nil:
		br = readerPool.Get().(*bufio.Reader)
	}
	// An empty buffer this Conn holds is read into again rather than given
	// back and taken from the pool anew: it goes back below if nothing came.
	c.br = nil
	c.lend.first, c.lend.blocked = true, false
	br.Reset(&c.lend)
	_, err := br.Peek(1)
	if err != nil { // nothing buffered: Peek(1) fails only short of a byte
		PutReader(br)
		if c.lend.blocked { // not err == errWouldBlock: no interface compare on every park
			return false, nil
		}
		c.lend.eof = err == io.EOF
		return false, err
	}
	c.br = br
	return true, nil
}

// Idle reports that c, lending its buffers, holds nothing to read: every byte
// that arrived is read, and what was held of a frame's length stays (c's
// buffer goes back to the pool otherwise). Its owner may then wait for the
// socket without a goroutine. false: read on (a frame or an error is there,
// or c does not lend its buffers).
func (c *Conn) Idle() bool {
	if !c.lend.on {
		return false
	}
	if !c.short {
		if ok, err := c.fill(); ok || err != nil {
			return false
		}
	}
	return true
}

// A Socket is a connection a relay can do everything with (rawtcp.Conn):
// write without waiting, be waited on without a read.
type Socket interface {
	io.Writer
	TryWriter
	Waiter
}

// NewSocketConn is NewConn for a Socket, and LendSocket is LendBuffers for
// one. They are generic so that each interface the Conn holds the socket as
// is made from the socket's own type where it is compiled: NewConn and
// LendBuffers convert one interface into another, which looks a table up at
// run time, a miss on a cold cache that every login paid several times.
func NewSocketConn[S Socket](br *bufio.Reader, s S, z *Zlib) *Conn {
	return &Conn{br: br, w: s, tw: s, z: z, rThreshold: -1, wThreshold: -1, readLimit: MaxUncompressedSize}
}

// LendSocket is LendBuffers for a Socket (see NewSocketConn).
func LendSocket[S Socket](c *Conn, s S) {
	c.lend = lender{on: true, src: s}
}
