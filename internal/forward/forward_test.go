package forward

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(peerEnv) != "" {
		os.Exit(runPeer())
	}
	goleak.VerifyTestMain(m)
}

// impl is one forwarder under test.
type impl struct {
	name string
	new  func(t testing.TB) Forwarder
}

// impls lists every forwarder this platform has: the goroutine one everywhere, the
// epoll one on Linux (elsewhere TestEpollUnavailableElsewhere checks the refusal).
func impls() []impl {
	list := []impl{{"goroutine", func(testing.TB) Forwarder { return NewGoroutine() }}}
	if runtime.GOOS != "linux" {
		return list
	}
	// The epoll forwarder as it ships, and forced down each of its two byte paths.
	for _, m := range []struct {
		name string
		opts EpollOptions
	}{
		{"epoll", EpollOptions{}},
		{"epoll-buffer", EpollOptions{move: moveBuffer}},
		{"epoll-splice", EpollOptions{move: moveSplice}},
		{"epoll-1shard-2pipes", EpollOptions{Shards: 1, MaxPipes: 2}},
	} {
		list = append(list, impl{m.name, func(t testing.TB) Forwarder {
			f, err := NewEpoll(m.opts)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}})
	}
	return list
}

func eachImpl(t *testing.T, test func(t *testing.T, f Forwarder)) {
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			f := im.new(t)
			defer f.Close()
			test(t, f)
		})
	}
}

// pairer makes connected loopback TCP pairs from one listener.
type pairer struct {
	ln *net.TCPListener
}

func newPairer(t testing.TB) *pairer {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &pairer{ln: ln}
}

// pair returns both ends of a new connection: dialed, accepted.
func (p *pairer) pair(t testing.TB) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	d, err := net.DialTCP("tcp", nil, p.ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.ln.AcceptTCP()
	if err != nil {
		t.Fatal(err)
	}
	if a.RemoteAddr().String() != d.LocalAddr().String() {
		t.Fatalf("accepted %v, dialed from %v", a.RemoteAddr(), d.LocalAddr())
	}
	return d, a
}

// rig is one forwarded session: player ↔ [client | forwarder | backend] ↔ server.
type rig struct {
	player, server  *net.TCPConn
	client, backend *net.TCPConn // the forwarder's; tests only look at them
	res             chan Result
	calls           atomic.Int32
	end             func() // what Forward returned
}

// newRig forwards a fresh session; before runs first, while the forwarder does not
// have the conns yet.
func newRig(t testing.TB, f Forwarder, players, servers *pairer, before func(r *rig)) *rig {
	t.Helper()
	r := &rig{res: make(chan Result, 1)}
	r.player, r.client = players.pair(t)
	r.backend, r.server = servers.pair(t)
	t.Cleanup(func() { r.player.Close(); r.server.Close() })
	// A forwarder that loses a wakeup fails the test with a timeout, not a hang.
	r.player.SetDeadline(time.Now().Add(60 * time.Second))
	r.server.SetDeadline(time.Now().Add(60 * time.Second))
	if before != nil {
		before(r)
	}
	r.end = f.Forward(r.client, r.backend, r.done)
	return r
}

func (r *rig) done(res Result) {
	if r.calls.Add(1) == 1 {
		r.res <- res
	}
}

// wait returns the session's result; a session that never ends fails the test.
func (r *rig) wait(t testing.TB) Result {
	t.Helper()
	select {
	case res := <-r.res:
		if n := r.calls.Load(); n != 1 {
			t.Fatalf("done called %d times", n)
		}
		return res
	case <-time.After(30 * time.Second):
		t.Fatal("session never ended")
		return Result{}
	}
}

// stream writes n bytes of a pattern that differs at every 8-byte offset, so a lost,
// repeated or reordered chunk changes the hash.
type stream struct {
	block []byte
}

func newStream(seed uint64) *stream {
	b := make([]byte, 1<<16)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return &stream{block: b}
}

// send writes n bytes to w, hashing them; it returns the bytes written and the hash.
func (s *stream) send(w io.Writer, n int64) (int64, []byte, error) {
	h := sha256.New()
	chunk := make([]byte, len(s.block))
	var sent int64
	for i := uint64(0); sent < n; i++ {
		copy(chunk, s.block)
		binary.LittleEndian.PutUint64(chunk, i)
		c := chunk
		if rem := n - sent; rem < int64(len(c)) {
			c = c[:rem]
		}
		m, err := w.Write(c)
		h.Write(c[:m])
		sent += int64(m)
		if err != nil {
			return sent, h.Sum(nil), err
		}
	}
	return sent, h.Sum(nil), nil
}

// drain reads r to EOF, hashing.
func drain(r io.Reader) (int64, []byte, error) {
	h := sha256.New()
	n, err := io.Copy(h, struct{ io.Reader }{r})
	return n, h.Sum(nil), err
}

type transfer struct {
	n   int64
	sum []byte
	err error
}

func TestBulkBothWaysIsExact(t *testing.T) {
	const size = 64 << 20
	eachImpl(t, func(t *testing.T, f Forwarder) {
		r := newRig(t, f, newPairer(t), newPairer(t), nil)
		var wg sync.WaitGroup
		var upSent, downSent, upGot, downGot transfer
		wg.Add(4)
		go func() {
			defer wg.Done()
			upSent.n, upSent.sum, upSent.err = newStream(1).send(r.player, size)
			r.player.CloseWrite()
		}()
		go func() {
			defer wg.Done()
			downSent.n, downSent.sum, downSent.err = newStream(2).send(r.server, size)
			r.server.CloseWrite()
		}()
		go func() { defer wg.Done(); upGot.n, upGot.sum, upGot.err = drain(r.server) }()
		go func() { defer wg.Done(); downGot.n, downGot.sum, downGot.err = drain(r.player) }()
		wg.Wait()
		for _, c := range []struct {
			name      string
			sent, got transfer
		}{{"up", upSent, upGot}, {"down", downSent, downGot}} {
			if c.sent.err != nil || c.got.err != nil {
				t.Fatalf("%s: send %v, receive %v", c.name, c.sent.err, c.got.err)
			}
			if c.got.n != size || !bytes.Equal(c.sent.sum, c.got.sum) {
				t.Errorf("%s: received %d bytes with sha256 %x, sent %d with %x", c.name, c.got.n, c.got.sum, c.sent.n, c.sent.sum)
			}
		}
		res := r.wait(t)
		if res.Err != nil || res.Up != size || res.Down != size {
			t.Errorf("result %+v, want %d bytes each way and no error", res, size)
		}
	})
}

func TestHalfCloseKeepsTheOtherDirection(t *testing.T) {
	cases := []struct {
		name  string
		first func(r *rig) (closer, other *net.TCPConn)
	}{
		{"player closes first", func(r *rig) (*net.TCPConn, *net.TCPConn) { return r.player, r.server }},
		{"server closes first", func(r *rig) (*net.TCPConn, *net.TCPConn) { return r.server, r.player }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachImpl(t, func(t *testing.T, f Forwarder) {
				r := newRig(t, f, newPairer(t), newPairer(t), nil)
				closer, other := tc.first(r)
				if _, err := closer.Write([]byte("last words")); err != nil {
					t.Fatal(err)
				}
				if err := closer.CloseWrite(); err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(other) // ends only if the half-close came through
				if err != nil || string(got) != "last words" {
					t.Fatalf("other side read %q, %v; want the bytes then EOF", got, err)
				}
				// The other direction still works after the half-close, in bulk.
				const tail = 4 << 20
				sent := make(chan transfer, 1)
				go func() {
					var tr transfer
					tr.n, tr.sum, tr.err = newStream(3).send(other, tail)
					other.CloseWrite()
					sent <- tr
				}()
				n, sum, err := drain(closer)
				s := <-sent
				if err != nil || s.err != nil || n != tail || !bytes.Equal(sum, s.sum) {
					t.Fatalf("after the half-close: got %d bytes (%v), sent %d (%v), hashes equal %v", n, err, s.n, s.err, bytes.Equal(sum, s.sum))
				}
				res := r.wait(t)
				wantUp, wantDown := int64(len("last words")), int64(tail)
				if closer == r.server {
					wantUp, wantDown = wantDown, wantUp
				}
				if res.Err != nil || res.Up != wantUp || res.Down != wantDown {
					t.Errorf("result %+v, want up %d down %d and no error", res, wantUp, wantDown)
				}
			})
		})
	}
}

// abort closes c with an RST instead of a FIN.
func abort(t testing.TB, c *net.TCPConn) {
	t.Helper()
	if err := c.SetLinger(0); err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func isResetOrPipe(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func TestResetTearsBothSidesDown(t *testing.T) {
	cases := []struct {
		name string
		busy bool // the other side is streaming towards the aborter
		// aborter and survivor
		pick func(r *rig) (*net.TCPConn, *net.TCPConn)
	}{
		{"player resets an idle session", false, func(r *rig) (*net.TCPConn, *net.TCPConn) { return r.player, r.server }},
		{"server resets an idle session", false, func(r *rig) (*net.TCPConn, *net.TCPConn) { return r.server, r.player }},
		{"player resets while the server streams", true, func(r *rig) (*net.TCPConn, *net.TCPConn) { return r.player, r.server }},
		{"server resets while the player streams", true, func(r *rig) (*net.TCPConn, *net.TCPConn) { return r.server, r.player }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachImpl(t, func(t *testing.T, f Forwarder) {
				r := newRig(t, f, newPairer(t), newPairer(t), nil)
				aborter, survivor := tc.pick(r)
				streamDone := make(chan error, 1)
				if tc.busy {
					// Prove bytes flow first, then keep writing until the teardown
					// makes the survivor's writes fail.
					go func() {
						_, _, err := newStream(4).send(survivor, 1<<40)
						streamDone <- err
					}()
					if _, err := io.ReadFull(aborter, make([]byte, 1<<20)); err != nil {
						t.Fatal(err)
					}
				}
				abort(t, aborter)
				res := r.wait(t)
				if !isResetOrPipe(res.Err) {
					t.Errorf("result error %v, want a connection reset or broken pipe", res.Err)
				}
				if tc.busy {
					if err := <-streamDone; err == nil {
						t.Error("the survivor could write forever after its peer reset")
					}
				} else {
					// The teardown closed the survivor's side: it reads EOF (or a reset).
					_ = survivor.SetReadDeadline(time.Now().Add(10 * time.Second))
					if n, err := survivor.Read(make([]byte, 1)); n != 0 || (err != io.EOF && !isResetOrPipe(err)) {
						t.Errorf("survivor read %d, %v; want EOF or reset", n, err)
					}
				}
			})
		})
	}
}

// TestSlowReaderBoundsBuffering stops the server from reading while the player writes
// as fast as it can: the player must block after the path's fixed buffers are full
// (sockets capped to 64 KiB each way, plus at most one pipe or buffer per direction in
// the forwarder), and every byte must still arrive once the server reads.
func TestSlowReaderBoundsBuffering(t *testing.T) {
	const sockBuf = 64 << 10
	eachImpl(t, func(t *testing.T, f Forwarder) {
		var bound int64
		r := newRig(t, f, newPairer(t), newPairer(t), func(r *rig) {
			for _, c := range []*net.TCPConn{r.player, r.client, r.backend, r.server} {
				if err := c.SetReadBuffer(sockBuf); err != nil {
					t.Fatal(err)
				}
				if err := c.SetWriteBuffer(sockBuf); err != nil {
					t.Fatal(err)
				}
				bound += sockBufs(t, c)
			}
		})
		// What the forwarder may hold: one 1 MiB pipe or one buffer, and slack for the
		// kernel's per-skb overshoot of a socket limit.
		bound += pipeSizeBound + 1<<20
		_ = r.player.SetWriteDeadline(time.Now().Add(2 * time.Second))
		sentN, sentSum, err := newStream(5).send(r.player, 64<<20)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("the player wrote %d bytes while nobody read (err %v): the forwarder buffers without bound", sentN, err)
		}
		if sentN > bound {
			t.Fatalf("the player wrote %d bytes while nobody read, more than the path can hold (%d)", sentN, bound)
		}
		t.Logf("writer blocked after %d bytes (bound %d)", sentN, bound)
		_ = r.player.SetWriteDeadline(time.Time{})
		r.player.CloseWrite()
		n, sum, err := drain(r.server)
		if err != nil || n != sentN || !bytes.Equal(sum, sentSum) {
			t.Fatalf("server got %d bytes (%v), want %d with the same sha256 (equal %v)", n, err, sentN, bytes.Equal(sum, sentSum))
		}
		r.server.CloseWrite()
		if _, err := io.ReadAll(r.player); err != nil {
			t.Fatal(err)
		}
		if res := r.wait(t); res.Err != nil || res.Up != sentN {
			t.Errorf("result %+v, want up %d", res, sentN)
		}
	})
}

func TestManyConcurrentSessions(t *testing.T) {
	const sessions, workers, msg = 2000, 32, 1024
	eachImpl(t, func(t *testing.T, f Forwarder) {
		players, servers := newPairer(t), newPairer(t)
		rigs := make([]*rig, sessions)
		for i := range rigs {
			rigs[i] = newRig(t, f, players, servers, nil)
		}
		work := make(chan int)
		errs := make(chan error, sessions)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					errs <- exchange(rigs[i], i, msg)
				}
			}()
		}
		for i := range rigs {
			work <- i
		}
		close(work)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for i, r := range rigs {
			res := r.wait(t)
			if res.Err != nil || res.Up != msg || res.Down != msg {
				t.Fatalf("session %d: %+v, want %d bytes each way", i, res, msg)
			}
		}
	})
}

// exchange sends a numbered message each way, each followed by a half-close.
func exchange(r *rig, i, size int) error {
	deadline := time.Now().Add(30 * time.Second)
	r.player.SetDeadline(deadline)
	r.server.SetDeadline(deadline)
	up := bytes.Repeat([]byte(fmt.Sprintf("u%07d", i)), size/8)
	down := bytes.Repeat([]byte(fmt.Sprintf("d%07d", i)), size/8)
	if _, err := r.player.Write(up); err != nil {
		return err
	}
	r.player.CloseWrite()
	got, err := io.ReadAll(r.server)
	if err != nil || !bytes.Equal(got, up) {
		return fmt.Errorf("session %d: server got %d bytes (%v)", i, len(got), err)
	}
	if _, err := r.server.Write(down); err != nil {
		return err
	}
	r.server.CloseWrite()
	got, err = io.ReadAll(r.player)
	if err != nil || !bytes.Equal(got, down) {
		return fmt.Errorf("session %d: player got %d bytes (%v)", i, len(got), err)
	}
	return nil
}

func TestBytesQueuedBeforeForwardArrive(t *testing.T) {
	eachImpl(t, func(t *testing.T, f Forwarder) {
		r := newRig(t, f, newPairer(t), newPairer(t), func(r *rig) {
			// Both peers speak before the forwarder has the conns, and the player
			// even half-closes: nothing may be lost.
			r.player.Write([]byte("early up"))
			r.player.CloseWrite()
			r.server.Write([]byte("early down"))
			// Let the bytes reach the forwarder's sockets first.
			waitReadable(t, r.client)
			waitReadable(t, r.backend)
		})
		r.server.SetReadDeadline(time.Now().Add(10 * time.Second))
		if got, err := io.ReadAll(r.server); err != nil || string(got) != "early up" {
			t.Fatalf("server read %q, %v", got, err)
		}
		r.player.SetReadDeadline(time.Now().Add(10 * time.Second))
		if got, err := io.ReadFull(r.player, make([]byte, len("early down"))); err != nil {
			t.Fatalf("player read %d, %v", got, err)
		}
		r.server.CloseWrite()
		if res := r.wait(t); res.Err != nil || res.Up != 8 || res.Down != 10 {
			t.Errorf("result %+v", res)
		}
	})
}

// waitReadable blocks until c has bytes queued, without consuming them.
func waitReadable(t testing.TB, c *net.TCPConn) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 1)
	for {
		var n int
		var perr error
		if err := rc.Read(func(fd uintptr) bool {
			n, perr = peek(fd, buf)
			return !errors.Is(perr, syscall.EAGAIN)
		}); err != nil {
			t.Fatal(err)
		}
		if perr != nil || n > 0 {
			return
		}
	}
}
