package auth

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// directTransport is the session client's HTTP/1.1 transport when the proxy
// dials for it (SessionConfig.Dial): each call writes its request and reads
// the answer on the caller's own goroutine, over connections kept between
// logins. net/http's Transport gives every connection a reading and a writing
// goroutine and hands each request and answer across them: three or four
// wake-ups of a quiet proxy per hasJoined instead of one (docs/benchmarks.md).
// It talks to one host only, plain or over TLS; a session server behind an
// HTTP(S) proxy from the environment still goes through net/http.
type directTransport struct {
	dial   func(ctx context.Context, network, address string) (net.Conn, error)
	addr   string      // host:port
	tls    *tls.Config // nil: plain HTTP
	mu     sync.Mutex
	idle   []*directConn // most recently used last
	closed bool
}

// directConn is one kept connection and its buffers.
type directConn struct {
	net.Conn
	br    *bufio.Reader
	bw    *bufio.Writer
	quota *quotaReader
	since time.Time // when it went idle
}

// directIdleTimeout drops a connection idle this long instead of reusing it,
// as net/http's DefaultTransport does: the server has likely closed it.
const directIdleTimeout = 90 * time.Second

// directAnswerQuota bounds what one answer may send, headers included (a
// hasJoined answer is a few KiB; HasJoined reads at most MaxResponseBytes of
// the body): a server that never stops is cut off, not buffered.
const directAnswerQuota = 1<<20 + MaxResponseBytes

var errAnswerTooLarge = errors.New("the answer is over its quota")

// maxInformational bounds the 1xx answers skipped before the real one, as
// net/http's five.
const maxInformational = 5

// isInformational is a 1xx status other than 101 (which no GET asks for, and
// which is then an error answer like any other).
func isInformational(status int) bool {
	return status >= 100 && status < 200 && status != http.StatusSwitchingProtocols
}

func newDirectTransport(dial func(ctx context.Context, network, address string) (net.Conn, error), host, port string, useTLS bool, tlsConf *tls.Config) *directTransport {
	t := &directTransport{dial: dial, addr: net.JoinHostPort(host, port)}
	if useTLS {
		if tlsConf == nil {
			tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
		} else {
			tlsConf = tlsConf.Clone()
		}
		if tlsConf.ServerName == "" {
			tlsConf.ServerName = host
		}
		if tlsConf.ClientSessionCache == nil {
			// A reconnect resumes the TLS session: one round trip, no key exchange.
			tlsConf.ClientSessionCache = tls.NewLRUClientSessionCache(LoginBurst)
		}
		t.tls = tlsConf
	}
	return t
}

// RoundTrip sends req and reads its answer's head; the body is read by the
// caller and the connection kept when it has been read to its end.
func (t *directTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for retried := false; ; retried = true {
		c, reused, err := t.get(ctx)
		if err != nil {
			return nil, err
		}
		resp, err := t.exchange(ctx, c, req)
		if err == nil {
			return resp, nil
		}
		_ = c.Close()
		// A kept connection the server closed while it was idle fails at
		// once: the GET is asked again, once, on a new one (as net/http does).
		if !reused || retried || ctx.Err() != nil {
			return nil, err
		}
	}
}

// exchange writes req on c and reads the answer's head. A canceled or timed
// out ctx closes c, which ends whichever read or write is waiting.
func (t *directTransport) exchange(ctx context.Context, c *directConn, req *http.Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	c.quota.left = directAnswerQuota
	err := req.Write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	var resp *http.Response
	// Informational answers (103 Early Hints) come before the real one and
	// have no body: skipped, as net/http does, or the real one would be left
	// on the kept connection for the next call to read as its own.
	for informational := 0; err == nil && informational <= maxInformational; informational++ {
		if resp, err = http.ReadResponse(c.br, req); err == nil && !isInformational(resp.StatusCode) {
			break
		}
	}
	if err == nil && isInformational(resp.StatusCode) {
		err = fmt.Errorf("more than %d informational answers", maxInformational)
	}
	if err != nil {
		stop()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	resp.Body = &directBody{body: resp.Body, t: t, c: c, stop: stop, keep: !resp.Close}
	return resp, nil
}

// get takes a kept connection, or dials a new one.
func (t *directTransport) get(ctx context.Context) (c *directConn, reused bool, err error) {
	now := time.Now()
	t.mu.Lock()
	for len(t.idle) > 0 {
		c = t.idle[len(t.idle)-1]
		t.idle = t.idle[:len(t.idle)-1]
		if now.Sub(c.since) < directIdleTimeout {
			t.mu.Unlock()
			return c, true, nil
		}
		_ = c.Close()
	}
	t.mu.Unlock()
	conn, err := t.dial(ctx, "tcp", t.addr)
	if err != nil {
		return nil, false, err
	}
	if t.tls != nil {
		tc := tls.Client(conn, t.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, false, err
		}
		conn = tc
	}
	q := &quotaReader{r: conn}
	return &directConn{Conn: conn, br: bufio.NewReader(q), bw: bufio.NewWriterSize(conn, 1024), quota: q}, false, nil
}

// put keeps c for the next call, up to LoginBurst connections.
func (t *directTransport) put(c *directConn) {
	c.since = time.Now()
	t.mu.Lock()
	if !t.closed && len(t.idle) < LoginBurst {
		t.idle = append(t.idle, c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// CloseIdleConnections closes the kept connections.
func (t *directTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		_ = c.Close()
	}
}

// close closes the kept connections and keeps none from now on.
func (t *directTransport) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.CloseIdleConnections()
}

// directBody is an answer's body; read to its end, it gives the connection
// back to be kept.
type directBody struct {
	body io.ReadCloser
	t    *directTransport
	c    *directConn
	stop func() bool // stops the cancellation's close; false if it ran
	keep bool        // the server keeps the connection open
	done bool
}

func (b *directBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.body.Read(p)
	if err != nil {
		b.finish(err == io.EOF)
	}
	return n, err
}

func (b *directBody) Close() error {
	if !b.done {
		b.finish(false) // unread bytes would be the next answer's start
	}
	return nil
}

func (b *directBody) finish(atEnd bool) {
	b.done = true
	if b.stop() && atEnd && b.keep && b.c.br.Buffered() == 0 {
		b.t.put(b.c)
		return
	}
	_ = b.c.Close()
}

// quotaReader fails a read once an answer has sent more than its quota.
type quotaReader struct {
	r    io.Reader
	left int64
}

func (q *quotaReader) Read(p []byte) (int, error) {
	if q.left <= 0 {
		return 0, errAnswerTooLarge
	}
	if int64(len(p)) > q.left {
		p = p[:q.left]
	}
	n, err := q.r.Read(p)
	q.left -= int64(n)
	return n, err
}
