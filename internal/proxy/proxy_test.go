package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil"

	"go.uber.org/goleak"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/proxy/health"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testProxy runs a proxy on 127.0.0.1:0 with the given servers.
type testProxy struct {
	*Proxy
	addr string
	bus  *events.Bus
}

func newServer(id string, domains []string, addrs ...string) *config.Server {
	s := &config.Server{
		ID: id, File: id + ".toml", Domains: domains, Balance: "first_available", SlowStartAggression: 1,
		ProxyMode: "passthrough", DomainRewrite: config.DomainRewrite{Mode: config.RewriteNone},
		DisconnectMessage: "unreachable", FullKickPatterns: config.DefaultFullKickPatterns,
	}
	for _, a := range addrs {
		s.Addresses = append(s.Addresses, config.Address{Address: a, Weight: 1})
	}
	return s
}

func startProxy(t testing.TB, mutate func(*config.Config), servers ...*config.Server) *testProxy {
	t.Helper()
	return startProxyOpts(t, mutate, Options{}, servers...)
}

// startProxyOpts runs a proxy on 127.0.0.1:0 with the given servers; opts carries what a
// test injects (Now, Bans, Manager, Bus). Everything is shut down at cleanup.
func startProxyOpts(t testing.TB, mutate func(*config.Config), opts Options, servers ...*config.Server) *testProxy {
	t.Helper()
	cfg := config.Default()
	cfg.Bind = "127.0.0.1:0"
	cfg.ConnectTimeout = config.Duration(time.Second)
	cfg.ServersPath = t.TempDir()
	cfg.Servers = servers
	if mutate != nil {
		mutate(cfg)
	}
	if opts.Bus == nil {
		opts.Bus = events.NewBus()
	}
	level := slog.LevelWarn
	if os.Getenv("INFRARUST_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	opts.Config = cfg
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", cfg.Bind) // 127.0.0.1:0 unless mutate chose another
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	bgDone := make(chan struct{})
	go func() { defer close(bgDone); runBackground(ctx, p) }()
	serveDone := make(chan struct{})
	go func() { defer close(serveDone); _ = p.Serve(ctx, ln) }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer scancel()
		_ = p.Shutdown(sctx)
		cancel()
		<-serveDone
		<-bgDone
	})
	return &testProxy{Proxy: p, addr: ln.Addr().String(), bus: opts.Bus}
}

// runBackground is what the composition root runs beside a proxy: the prober on
// the proxy's targets and the limiter's sweep.
func runBackground(ctx context.Context, p *Proxy) {
	prober := health.New(p.Probe, p.Config().ActiveHealth.MaxConcurrent, p.ProberClock())
	prober.SetTargets(p.HealthTargets())
	done := make(chan struct{})
	go func() { defer close(done); prober.Run(ctx) }()
	p.RunMaintenance(ctx)
	<-done
}

func startBackend(t *testing.T, opts fakemc.Options) *fakemc.Server {
	t.Helper()
	b, err := fakemc.Start("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// deadAddress is a loopback port nothing listens on.
// deadAddress refuses connections for the whole test (see testutil.RefusedAddr).
func deadAddress(t *testing.T) string { return testutil.RefusedAddr(t) }

// laterAddress is a free loopback port a test listens on itself later (a replica
// that "comes back"); until then nothing listens there.
func laterAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func pingVia(t *testing.T, proxyAddr, host string) mc.StatusResponse {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxyAddr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	body, _, err := mc.QueryStatus(c, host, 25565, 767)
	if err != nil {
		t.Fatalf("status via proxy for %q: %v", host, err)
	}
	var st mc.StatusResponse
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// login sends a handshake + login start and returns the connection and the first frame.
func login(t *testing.T, proxyAddr, host, name string) (net.Conn, *bufio.Reader, mc.Frame, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxyAddr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	out := mc.Handshake{ProtocolVersion: 767, ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	out = append(out, mc.LoginStart{Name: name, HasUUID: true}.Encode(767)...)
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	f, err := mc.ReadFrame(br, mc.MaxFrameSize)
	return c, br, f, err
}

func disconnectText(t *testing.T, f mc.Frame) string {
	t.Helper()
	text, ok := mc.ParseLoginDisconnect(f)
	if !ok {
		t.Fatalf("expected a Login Disconnect, got packet 0x%02x", f.ID)
	}
	return text
}

func TestStatusRelayAndCache(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "lobby", MOTD: "hello from lobby", StatusDelay: 50 * time.Millisecond})
	tp := startProxy(t, nil, newServer("lobby", []string{"play.example.com"}, b.Addr()))

	var wg sync.WaitGroup
	errs := make(chan string, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := pingVia(t, tp.addr, "Play.Example.com")
			if got := mc.DescriptionText(st.Description); got != "hello from lobby" {
				errs <- got
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("MOTD = %q", e)
	}
	if n := b.StatusRequests.Load(); n != 1 {
		t.Fatalf("backend saw %d status requests for 50 concurrent pings; want 1", n)
	}
}

func TestOfflineMOTDWhenEveryAddressIsDown(t *testing.T) {
	s := newServer("lobby", []string{"play.example.com"}, deadAddress(t), deadAddress(t))
	s.MOTD.Offline = &config.MOTD{Text: "down for maintenance", MaxPlayers: 7}
	tp := startProxy(t, nil, s)
	st := pingVia(t, tp.addr, "play.example.com")
	if got := mc.DescriptionText(st.Description); got != "down for maintenance" || st.Players.Max != 7 {
		t.Fatalf("got %q max %d", got, st.Players.Max)
	}
	// And a login gets the disconnect message, never a silent close.
	c, _, f, err := login(t, tp.addr, "play.example.com", "Steve")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := disconnectText(t, f); got != "unreachable" {
		t.Fatalf("disconnect %q", got)
	}
}

func TestStatusFailsOverToSecondAddress(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "second", MOTD: "second answers"})
	tp := startProxy(t, nil, newServer("lobby", []string{"a.com"}, deadAddress(t), b.Addr()))
	if got := mc.DescriptionText(pingVia(t, tp.addr, "a.com").Description); got != "second answers" {
		t.Fatalf("got %q", got)
	}
}

func TestUnknownDomain(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "x"})
	t.Run("default_motd", func(t *testing.T) {
		tp := startProxy(t, func(c *config.Config) { c.DefaultMOTD.Text = "who are you" }, newServer("x", []string{"x.com"}, b.Addr()))
		if got := mc.DescriptionText(pingVia(t, tp.addr, "nope.com").Description); got != "who are you" {
			t.Fatalf("MOTD %q", got)
		}
		c, _, f, err := login(t, tp.addr, "nope.com", "Steve")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if got := disconnectText(t, f); !strings.Contains(got, "No server is configured") || !strings.Contains(got, "nope.com") {
			t.Fatalf("disconnect %q", got)
		}
	})
	t.Run("drop", func(t *testing.T) {
		tp := startProxy(t, func(c *config.Config) { c.UnknownDomainBehavior = "drop" }, newServer("x", []string{"x.com"}, b.Addr()))
		c, _, _, err := login(t, tp.addr, "nope.com", "Steve")
		defer c.Close()
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isReset(err) {
			t.Fatalf("drop should close without an answer, got %v", err)
		}
	})
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "EOF"))
}

func TestWildcardRoutingAndLogin(t *testing.T) {
	exact := startBackend(t, fakemc.Options{Name: "exact"})
	wild := startBackend(t, fakemc.Options{Name: "wild"})
	tp := startProxy(t, nil,
		newServer("exact", []string{"play.example.com"}, exact.Addr()),
		newServer("wild", []string{"*.example.com"}, wild.Addr()))
	for host, want := range map[string]string{"play.example.com": "exact", "lobby.example.com": "wild", "A.B.example.com.": "wild", "play.example.com\x00FML2\x00": "exact"} {
		c, _, f, err := login(t, tp.addr, host, "Alex")
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if got := disconnectText(t, f); got != "You reached "+want+" (as Alex)" {
			t.Errorf("%q: %q", host, got)
		}
	}
}

func TestDomainRewrite(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "b"})
	explicit := newServer("e", []string{"e.com"}, b.Addr())
	explicit.DomainRewrite = config.DomainRewrite{Mode: config.RewriteExplicit, Value: "internal.mc"}
	fromBackend := newServer("f", []string{"f.com"}, b.Addr())
	fromBackend.DomainRewrite = config.DomainRewrite{Mode: config.RewriteFromBackend}
	plain := newServer("n", []string{"n.com"}, b.Addr())
	tp := startProxy(t, nil, explicit, fromBackend, plain)
	for _, host := range []string{"e.com", "f.com", "n.com"} {
		c, _, _, err := login(t, tp.addr, host, "Alex")
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	hs := b.Handshakes()
	if len(hs) != 3 {
		t.Fatalf("backend saw %d handshakes", len(hs))
	}
	bh, _, _ := net.SplitHostPort(b.Addr())
	want := []string{"internal.mc", bh, "n.com"}
	for i, h := range hs {
		if h.ServerAddress != want[i] {
			t.Errorf("handshake %d address %q, want %q", i, h.ServerAddress, want[i])
		}
	}
}

// TestIPv4PlayerOnDualStackBind: a player who reaches a dual-stack listener (bind
// ":port") over IPv4 is known by the IPv4 address, not its IPv4-mapped IPv6 form.
func TestIPv4PlayerOnDualStackBind(t *testing.T) {
	hold := func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		if _, err := c.Write(loginSuccessFrame()); err == nil {
			_, _ = br.WriteTo(io.Discard) // until the player leaves
		}
	}
	b := startBackend(t, fakemc.Options{Name: "lobby", OnLogin: hold})
	tp := startProxy(t, func(c *config.Config) { c.Bind = ":0" }, newServer("lobby", []string{"lobby.com"}, b.Addr()))
	_, port, _ := net.SplitHostPort(tp.addr)
	c, err := net.Dial("tcp4", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := loginOn(c, "lobby.com", loginStartOf("Alex")); err != nil {
		t.Fatalf("login: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if pl := tp.Players(""); len(pl) == 1 {
			if got := pl[0].Client.Addr(); got != netip.MustParseAddr("127.0.0.1") {
				t.Fatalf("player's client address %v, want 127.0.0.1", pl[0].Client)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("players %v, want Alex online", tp.Players(""))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProxyProtocolOut(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "pp", ProxyProtocol: true})
	s := newServer("pp", []string{"pp.com"}, b.Addr())
	s.SendProxyProtocol = true
	tp := startProxy(t, nil, s)
	c, _, f, err := login(t, tp.addr, "pp.com", "Alex")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := disconnectText(t, f); got != "You reached pp (as Alex)" {
		t.Fatalf("got %q", got)
	}
	src := b.ProxySources()
	if len(src) != 1 || src[0] != c.LocalAddr().String() {
		t.Fatalf("backend saw PROXY sources %v, want [%s]", src, c.LocalAddr())
	}
	// Status relays carry the header too (a PROXY-expecting backend refuses otherwise).
	if got := mc.DescriptionText(pingVia(t, tp.addr, "pp.com").Description); got != "pp" {
		t.Fatalf("status through PROXY backend: %q", got)
	}
}

// echoFirst sends a non-disconnect first login packet so the proxy starts forwarding.
func loginSuccessFrame() []byte { return mc.AppendFrame(nil, 0x02, make([]byte, 17)) }

func TestLargeTransferIsByteExact(t *testing.T) {
	const size = 64 << 20
	type result struct{ sum [32]byte }
	got := make(chan result, 1)
	b := startBackend(t, fakemc.Options{Name: "bulk", OnLogin: func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		if _, err := c.Write(loginSuccessFrame()); err != nil {
			return
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // backend -> client: deterministic stream
			defer wg.Done()
			_, _ = io.Copy(c, io.LimitReader(newStream(2), size))
			c.(*net.TCPConn).CloseWrite()
		}()
		h := sha256.New()
		_, _ = io.Copy(h, br)
		var r result
		copy(r.sum[:], h.Sum(nil))
		got <- r
		wg.Wait()
	}})
	tp := startProxy(t, nil, newServer("bulk", []string{"bulk.com"}, b.Addr()))
	c, br, f, err := login(t, tp.addr, "bulk.com", "Alex")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	if f.ID != 0x02 {
		t.Fatalf("first packet 0x%02x", f.ID)
	}
	go func() {
		_, _ = io.Copy(c, io.LimitReader(newStream(1), size))
		c.(*net.TCPConn).CloseWrite()
	}()
	h := sha256.New()
	n, err := io.Copy(h, br)
	if err != nil || n != size {
		t.Fatalf("client received %d bytes, err %v", n, err)
	}
	want := sha256.New()
	_, _ = io.Copy(want, io.LimitReader(newStream(2), size))
	if !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
		t.Fatal("backend->client stream corrupted")
	}
	up := sha256.New()
	_, _ = io.Copy(up, io.LimitReader(newStream(1), size))
	select {
	case r := <-got:
		if !bytes.Equal(r.sum[:], up.Sum(nil)) {
			t.Fatal("client->backend stream corrupted")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("backend never finished reading")
	}
}

// newStream is a deterministic pseudo-random byte stream.
func newStream(seed uint64) io.Reader { return &prng{r: rand.New(rand.NewPCG(seed, seed))} }

type prng struct{ r *rand.Rand }

func (p *prng) Read(b []byte) (int, error) {
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], p.r.Uint64())
	}
	for i := len(b) &^ 7; i < len(b); i++ {
		b[i] = byte(p.r.Uint64())
	}
	return len(b), nil
}

func TestHalfClose(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "hc", OnLogin: func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		_, _ = c.Write(loginSuccessFrame())
		n, _ := io.Copy(io.Discard, br) // until the client's half-close arrives
		_, _ = c.Write([]byte("got " + strconv.FormatInt(n, 10)))
	}})
	tp := startProxy(t, nil, newServer("hc", []string{"hc.com"}, b.Addr()))
	c, br, _, err := login(t, tp.addr, "hc.com", "Alex")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hello world")); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "got 11" {
		t.Fatalf("after half-close the other direction must keep flowing: %q, %v", rest, err)
	}
}

func TestSilentClientClosedAtBudgetWhileOthersServed(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "s", MOTD: "served"})
	tp := startProxy(t, func(c *config.Config) { c.HandshakeTimeout = config.Duration(400 * time.Millisecond) }, newServer("s", []string{"s.com"}, b.Addr()))
	silent, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if got := mc.DescriptionText(pingVia(t, tp.addr, "s.com").Description); got != "served" {
		t.Fatalf("other client not served: %q", got)
	}
	_ = silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = silent.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("silent client was not closed by the handshake budget")
	}
}

func TestGarbageAndOversizedFrames(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "g", MOTD: "still alive"})
	tp := startProxy(t, nil, newServer("g", []string{"g.com"}, b.Addr()))
	for name, payload := range map[string][]byte{
		"oversized length": mc.AppendVarInt(nil, 3<<20),
		"varint too long":  {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"garbage":          []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"wrong packet id":  mc.AppendFrame(nil, 0x05, []byte{1, 2, 3}),
		"bad next state":   mc.Handshake{ProtocolVersion: 767, ServerAddress: "g.com", ServerPort: 1, NextState: 9}.Encode(),
		"zero length":      {0x00},
	} {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(payload)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 64))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: connection not closed", name)
		}
		c.Close()
	}
	if got := mc.DescriptionText(pingVia(t, tp.addr, "g.com").Description); got != "still alive" {
		t.Fatalf("proxy unhealthy after garbage: %q", got)
	}
}
