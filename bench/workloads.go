package bench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

const protocol = 767

// ioTimeout bounds every single client operation so a stuck peer cannot hang a run.
const ioTimeout = 10 * time.Second

var (
	statusPreamble = append(mc.Handshake{ProtocolVersion: protocol, ServerAddress: benchHost, ServerPort: 25565, NextState: mc.StateStatus}.Encode(), mc.EncodeStatusRequest()...)
	loginHandshake = mc.Handshake{ProtocolVersion: protocol, ServerAddress: benchHost, ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	// sessionSeq names each session's player apart: a proxy lets one player in once
	// (duplicate_login), as real traffic has one session per player.
	sessionSeq atomic.Uint64
)

// loginPreamble is a login's handshake and login start, for a player of its own.
func loginPreamble() []byte {
	name := "bench" + strconv.FormatUint(sessionSeq.Add(1), 10)
	return append(slices.Clip(loginHandshake), mc.LoginStart{Name: name}.Encode(protocol)...)
}

func dial(addr string) (*net.TCPConn, error) {
	c, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	_ = tc.SetNoDelay(true)
	return tc, nil
}

// openSession logs in (directly or through the proxy), reads the backend's first
// packet and sends cmd: from then on the bytes flow through the forwarder.
func openSession(addr string, cmd byte) (*net.TCPConn, error) {
	c, err := dial(addr)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(ioTimeout))
	if _, err := c.Write(loginPreamble()); err != nil {
		c.Close()
		return nil, err
	}
	first := make([]byte, len(firstLoginPacket))
	if _, err := io.ReadFull(c, first); err != nil {
		c.Close()
		return nil, fmt.Errorf("first login packet: %w", err)
	}
	if cmd != 0 {
		if _, err := c.Write([]byte{cmd}); err != nil {
			c.Close()
			return nil, err
		}
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// bulkUp streams for d on each of n sessions, half-closes and waits for the
// backend's byte count: the rate counts only bytes the backend really received.
func bulkUp(addr string, n int, d time.Duration) (measure, error) {
	return parallel(n, func() (int64, error) {
		c, err := openSession(addr, cmdSink)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		buf := make([]byte, chunk)
		end := time.Now().Add(d)
		_ = c.SetDeadline(end.Add(ioTimeout))
		for time.Now().Before(end) {
			if _, err := c.Write(buf); err != nil {
				return 0, err
			}
		}
		if err := c.CloseWrite(); err != nil {
			return 0, err
		}
		var got [8]byte
		if _, err := io.ReadFull(c, got[:]); err != nil {
			return 0, fmt.Errorf("sink count: %w", err)
		}
		return int64(binary.BigEndian.Uint64(got[:])), nil
	})
}

// bulkDown reads what the backend streams for d on each of n sessions.
func bulkDown(addr string, n int, d time.Duration) (measure, error) {
	return parallel(n, func() (int64, error) {
		c, err := openSession(addr, cmdSource)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		buf := make([]byte, chunk)
		var total int64
		end := time.Now().Add(d)
		_ = c.SetReadDeadline(end.Add(ioTimeout))
		for time.Now().Before(end) {
			m, err := c.Read(buf)
			total += int64(m)
			if err != nil {
				return total, err
			}
		}
		return total, nil
	})
}

// parallel runs f on n goroutines and returns the summed bytes and the time taken.
func parallel(n int, f func() (int64, error)) (measure, error) {
	var wg sync.WaitGroup
	var total atomic.Int64
	errs := make(chan error, n)
	start := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := f()
			total.Add(b)
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return measure{}, err
	}
	return measure{units: float64(total.Load()), seconds: el.Seconds()}, nil
}

// Latency holds round-trip percentiles in microseconds.
type Latency struct {
	P50, P99, P999 float64
	Samples        int
}

// rtt sends size-byte messages through an established echo session to each of
// addrs, one at a time and in turn (addrs[0], addrs[1], ..., addrs[0], ...), at
// most count round trips each and for at most d, after a short warm-up. Taking
// the samples in turn puts every address under the same machine load: on a
// shared box, measuring one address after another compares two different loads.
func rtt(addrs []string, size, count int, d time.Duration) ([]Latency, error) {
	conns := make([]*net.TCPConn, len(addrs))
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i, a := range addrs {
		c, err := openSession(a, cmdEcho)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		_ = c.SetDeadline(time.Now().Add(d + 2*ioTimeout))
		conns[i] = c
	}
	msg := make([]byte, size)
	in := make([]byte, size)
	one := func(c *net.TCPConn) (time.Duration, error) {
		t := time.Now()
		if _, err := c.Write(msg); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(c, in); err != nil {
			return 0, err
		}
		return time.Since(t), nil
	}
	for range min(count/10, 1000) {
		for _, c := range conns {
			if _, err := one(c); err != nil {
				return nil, err
			}
		}
	}
	samples := make([][]time.Duration, len(conns))
	end := time.Now().Add(d)
	for n := 0; n < count && time.Now().Before(end); n++ {
		for i, c := range conns {
			s, err := one(c)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", addrs[i], err)
			}
			samples[i] = append(samples[i], s)
		}
	}
	out := make([]Latency, len(conns))
	for i, ss := range samples {
		sort.Slice(ss, func(a, b int) bool { return ss[a] < ss[b] })
		pct := func(q float64) float64 {
			return float64(ss[int(q*float64(len(ss)-1))]) / float64(time.Microsecond)
		}
		out[i] = Latency{P50: pct(0.50), P99: pct(0.99), P999: pct(0.999), Samples: len(ss)}
	}
	return out, nil
}

// storm runs cycle on clients goroutines for d (and, when limit > 0, until
// limit cycles have been tried) and returns the completed cycles and the time.
// Each goroutine passes its index, so it can keep an identity of its own.
func storm(clients int, d time.Duration, limit int64, cycle func(worker int, br *bufio.Reader) error) (measure, error) {
	var wg sync.WaitGroup
	var ok, failed, tried atomic.Int64
	var firstErr errOnce
	start := time.Now()
	end := start.Add(d)
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := bufio.NewReaderSize(nil, 4096)
			for time.Now().Before(end) && (limit <= 0 || tried.Add(1) <= limit) {
				if err := cycle(w, br); err != nil {
					failed.Add(1)
					firstErr.set(err)
					if failed.Load() > 1000 {
						return
					}
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if ok.Load() == 0 {
		err := firstErr.get()
		return measure{errors: failed.Load()}, fmt.Errorf("no cycle completed: %v", err)
	}
	return measure{units: float64(ok.Load()), seconds: el.Seconds(), errors: failed.Load()}, nil
}

// statusCycle is one server-list ping: connect, handshake, status, ping, close.
func statusCycle(addr string) func(int, *bufio.Reader) error {
	return func(_ int, br *bufio.Reader) error {
		c, err := dial(addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(ioTimeout))
		if _, err := c.Write(statusPreamble); err != nil {
			return err
		}
		br.Reset(c)
		if _, err := mc.ReadStatusResponse(br); err != nil {
			return fmt.Errorf("status response: %w", err)
		}
		if _, err := c.Write(mc.EncodePing(42)); err != nil {
			return err
		}
		if p, err := mc.ReadPing(br); err != nil || p != 42 {
			return fmt.Errorf("pong: %v %d", err, p)
		}
		return nil
	}
}

// loginCycle is one login: connect, handshake, login start, backend's first packet, close.
func loginCycle(addr string) func(int, *bufio.Reader) error {
	return func(int, *bufio.Reader) error {
		c, err := openSession(addr, 0)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

var errTooFewFDs = errors.New("not enough file descriptors")

// errOnce keeps the first error of many goroutines.
type errOnce struct {
	mu  sync.Mutex
	err error
}

func (e *errOnce) set(err error) {
	e.mu.Lock()
	if e.err == nil {
		e.err = err
	}
	e.mu.Unlock()
}

func (e *errOnce) get() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}
