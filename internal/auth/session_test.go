package auth_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/auth/authtest"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

// dialFunc is SessionConfig.Dial: nil for net/http's Transport (another
// system, or a proxy from the environment), a dialer for the proxy's own
// transport on Linux.
type dialFunc = func(ctx context.Context, network, address string) (net.Conn, error)

// eachTransport runs a test over both of a session client's transports.
func eachTransport(t *testing.T, test func(t *testing.T, dial dialFunc)) {
	t.Run("net/http", func(t *testing.T) { test(t, nil) })
	t.Run("direct", func(t *testing.T) { test(t, (&net.Dialer{}).DialContext) })
}

func newClient(t *testing.T, dial dialFunc, base string, timeout time.Duration) *auth.SessionClient {
	t.Helper()
	c, err := auth.NewSessionClient(auth.SessionConfig{BaseURL: base, Timeout: timeout, Dial: dial})
	if err != nil {
		t.Fatalf("NewSessionClient: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// A login as the proxy sees it: the client joined with the hash of its
// secret and our key, then the proxy asks hasJoined with its own hash.
func TestHasJoinedAuthenticates(t *testing.T) { eachTransport(t, testHasJoinedAuthenticates) }

func testHasJoinedAuthenticates(t *testing.T, dial dialFunc) {
	srv := authtest.New(t)
	acct := srv.AddAccount("Alice")
	der := []byte("public key DER stands in here")
	secret := []byte("0123456789abcdef")
	hash := auth.ServerIDHash("", secret, der)
	if err := srv.ClientJoin(acct, hash); err != nil {
		t.Fatal(err)
	}

	c := newClient(t, dial, srv.URL, 0)
	// Vanilla sends the name the client typed; the answer's capitalisation wins.
	p, err := c.HasJoined(context.Background(), "alice", hash, netip.Addr{})
	if err != nil {
		t.Fatalf("HasJoined: %v", err)
	}
	want, _ := srv.Profile("Alice")
	if p.ID != acct.ID || p.Name != "Alice" || len(p.Properties) != 1 {
		t.Fatalf("profile = %+v, want id %v name Alice and one property", p, acct.ID)
	}
	if p.Properties[0] != want.Properties[0] {
		t.Fatalf("property changed on the way:\n got %+v\nwant %+v", p.Properties[0], want.Properties[0])
	}
	// The skin signature is still the session server's, byte for byte.
	sig, err := base64.StdEncoding.DecodeString(p.Properties[0].Signature)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte(p.Properties[0].Value))
	if err := rsa.VerifyPKCS1v15(srv.SigningKey(), crypto.SHA1, sum[:], sig); err != nil {
		t.Fatalf("textures signature no longer verifies: %v", err)
	}
	q := srv.HasJoinedQueries()
	if len(q) != 1 || q[0].Get("serverId") != hash || q[0].Has("ip") {
		t.Fatalf("queries = %v, want one with serverId=%s and no ip", q, hash)
	}
}

func TestHasJoinedRefusals(t *testing.T) { eachTransport(t, testHasJoinedRefusals) }

func testHasJoinedRefusals(t *testing.T, dial dialFunc) {
	srv := authtest.New(t)
	acct := srv.AddAccount("Bob")
	der := []byte("key")
	joined := auth.ServerIDHash("", []byte("secret-one-16byt"), der)
	if err := srv.ClientJoin(acct, joined); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, dial, srv.URL, 0)
	for _, tc := range []struct {
		name, user, hash string
		ip               netip.Addr
	}{
		{"wrong shared secret", "Bob", auth.ServerIDHash("", []byte("secret-two-16byt"), der), netip.Addr{}},
		{"never joined", "Carol", joined, netip.Addr{}},
		{"joined from another address", "Bob", joined, netip.MustParseAddr("192.0.2.7")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.HasJoined(context.Background(), tc.user, tc.hash, tc.ip)
			if !errors.Is(err, auth.ErrNotJoined) {
				t.Fatalf("err = %v, want ErrNotJoined", err)
			}
			if got := auth.KickMessage(err); got != "Failed to verify username!" {
				t.Fatalf("kick = %q", got)
			}
		})
	}
	// The same address as the join passes the prevent-proxy-connections check.
	if _, err := c.HasJoined(context.Background(), "Bob", joined, netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Fatalf("join from the same address refused: %v", err)
	}
	q := srv.HasJoinedQueries()
	if last := q[len(q)-1]; last.Get("ip") != "127.0.0.1" {
		t.Fatalf("ip parameter = %q, want 127.0.0.1", last.Get("ip"))
	}
}

// joined registers name with srv and has its client join with some hash,
// which it returns: what a proxy's hasJoined then asks about.
func joined(t *testing.T, srv *authtest.Server, name string) (authtest.Account, string) {
	t.Helper()
	acct := srv.AddAccount(name)
	hash := auth.ServerIDHash("", []byte("0123456789abcdef"), []byte("key"))
	if err := srv.ClientJoin(acct, hash); err != nil {
		t.Fatal(err)
	}
	return acct, hash
}

func TestHasJoinedServerTrouble(t *testing.T) { eachTransport(t, testHasJoinedServerTrouble) }

func testHasJoinedServerTrouble(t *testing.T, dial dialFunc) {
	srv := authtest.New(t)
	_, hash := joined(t, srv, "Dave")
	c := newClient(t, dial, srv.URL, 200*time.Millisecond)
	for _, mode := range []authtest.Mode{authtest.Unavailable, authtest.Garbage, authtest.Hang} {
		srv.SetMode(mode)
		_, err := c.HasJoined(context.Background(), "Dave", hash, netip.Addr{})
		if !errors.Is(err, auth.ErrUnavailable) {
			t.Fatalf("mode %d: err = %v, want ErrUnavailable", mode, err)
		}
		if got := auth.KickMessage(err); got != "Authentication servers are down. Please try again later, sorry!" {
			t.Fatalf("mode %d: kick = %q", mode, got)
		}
	}
	if n := srv.HasJoinedCalls(); n != 3 {
		t.Fatalf("hasJoined calls = %d, want 3", n)
	}
	srv.SetMode(authtest.Normal)
	if _, err := c.HasJoined(context.Background(), "Dave", hash, netip.Addr{}); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

func TestHasJoinedContext(t *testing.T) { eachTransport(t, testHasJoinedContext) }

func testHasJoinedContext(t *testing.T, dial dialFunc) {
	srv := authtest.New(t)
	srv.SetMode(authtest.Hang)
	c := newClient(t, dial, srv.URL, time.Minute)

	t.Run("caller cancels: the player left, no kick text needed", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := c.HasJoined(ctx, "Eve", "h", netip.Addr{})
			done <- err
		}()
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) || errors.Is(err, auth.ErrUnavailable) {
			t.Fatalf("err = %v, want context.Canceled only", err)
		}
	})
	t.Run("caller deadline first: servers down", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := c.HasJoined(ctx, "Eve", "h", netip.Addr{})
		if !errors.Is(err, auth.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrUnavailable wrapping DeadlineExceeded", err)
		}
	})
}

func TestHasJoinedUnreachable(t *testing.T) { eachTransport(t, testHasJoinedUnreachable) }

func testHasJoinedUnreachable(t *testing.T, dial dialFunc) {
	c := newClient(t, dial, "http://"+testutil.RefusedAddr(t), time.Second)
	_, err := c.HasJoined(context.Background(), "Frank", "h", netip.Addr{})
	if !errors.Is(err, auth.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestHasJoinedBoundsTheAnswer(t *testing.T) { eachTransport(t, testHasJoinedBoundsTheAnswer) }

func testHasJoinedBoundsTheAnswer(t *testing.T, dial dialFunc) {
	huge := `{"id":"069a79f444e94726a5befca90e38aaf5","name":"Notch","properties":[{"name":"textures","value":"` +
		strings.Repeat("A", auth.MaxResponseBytes) + `"}]}`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != auth.HasJoinedPath {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(huge))
	}))
	t.Cleanup(ts.Close)
	_, err := newClient(t, dial, ts.URL, time.Second).HasJoined(context.Background(), "Notch", "h", netip.Addr{})
	if !errors.Is(err, auth.ErrUnavailable) || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("err = %v, want ErrUnavailable for the size", err)
	}
}

// A base URL with a path prefix (an authlib-injector style server) keeps it.
func TestHasJoinedBasePath(t *testing.T) { eachTransport(t, testHasJoinedBasePath) }

func testHasJoinedBasePath(t *testing.T, dial dialFunc) {
	var gotPath, gotUA string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotUA = r.URL.Path, r.UserAgent()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ts.Close)
	_, err := newClient(t, dial, ts.URL+"/api/yggdrasil/sessionserver/", time.Second).HasJoined(context.Background(), "a", "h", netip.Addr{})
	if !errors.Is(err, auth.ErrNotJoined) {
		t.Fatalf("err = %v", err)
	}
	if gotPath != "/api/yggdrasil/sessionserver/session/minecraft/hasJoined" || gotUA != "infrarust" {
		t.Fatalf("path %q, user agent %q", gotPath, gotUA)
	}
}

func TestNewSessionClient(t *testing.T) {
	c, err := auth.NewSessionClient(auth.SessionConfig{})
	if err != nil || c.Timeout() != 5*time.Second {
		t.Fatalf("zero config: %v, timeout %v", err, c.Timeout())
	}
	for _, bad := range []auth.SessionConfig{
		{BaseURL: "sessionserver.mojang.com"},
		{BaseURL: "ftp://sessionserver.mojang.com"},
		{BaseURL: "https://"},
		{BaseURL: "https://host/?x=1"},
		{BaseURL: "http://[::1"},
		{Timeout: -time.Second},
	} {
		if _, err := auth.NewSessionClient(bad); err == nil {
			t.Errorf("NewSessionClient(%+v) accepted", bad)
		}
	}
}

func TestParseHasJoined(t *testing.T) {
	const okBody = `{"id":"069a79f444e94726a5befca90e38aaf5","name":"Notch","properties":[{"name":"textures","value":"dmFs","signature":"c2ln"}]}`
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   error // nil: success
	}{
		{"profile", 200, okBody, nil},
		{"dashed id", 200, `{"id":"069a79f4-44e9-4726-a5be-fca90e38aaf5","name":"Notch"}`, nil},
		{"no content", 204, "", auth.ErrNotJoined},
		{"200 empty", 200, "", auth.ErrNotJoined},
		{"200 blank", 200, " \n", auth.ErrNotJoined},
		{"other name", 200, `{"id":"069a79f444e94726a5befca90e38aaf5","name":"jeb_"}`, auth.ErrNotJoined},
		{"503", 503, "", auth.ErrUnavailable},
		{"500 with a profile", 500, okBody, auth.ErrUnavailable},
		{"429", 429, `{"error":"TooManyRequests"}`, auth.ErrUnavailable},
		{"403", 403, "", auth.ErrUnavailable},
		{"html", 200, "<html>", auth.ErrUnavailable},
		{"json null", 200, "null", auth.ErrUnavailable},
		{"no id", 200, `{"name":"Notch"}`, auth.ErrUnavailable},
		{"bad id", 200, `{"id":"zz","name":"Notch"}`, auth.ErrUnavailable},
		{"no name", 200, `{"id":"069a79f444e94726a5befca90e38aaf5"}`, auth.ErrUnavailable},
		{"error object", 200, `{"error":"ForbiddenOperationException"}`, auth.ErrUnavailable},
		{"unnamed property", 200, `{"id":"069a79f444e94726a5befca90e38aaf5","name":"Notch","properties":[{"value":"x"}]}`, auth.ErrUnavailable},
		{"property not an object", 200, `{"id":"069a79f444e94726a5befca90e38aaf5","name":"Notch","properties":[1]}`, auth.ErrUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := auth.ParseHasJoined(tc.status, []byte(tc.body), "notch")
			if tc.want == nil {
				if err != nil || p.Name != "Notch" || p.ID.Undashed() != "069a79f444e94726a5befca90e38aaf5" {
					t.Fatalf("got %+v, %v", p, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	p, _ := auth.ParseHasJoined(200, []byte(okBody), "Notch")
	if len(p.Properties) != 1 || p.Properties[0] != (auth.Property{Name: "textures", Value: "dmFs", Signature: "c2ln"}) {
		t.Fatalf("properties = %+v", p.Properties)
	}
}

func FuzzParseHasJoined(f *testing.F) {
	f.Add(200, []byte(`{"id":"069a79f444e94726a5befca90e38aaf5","name":"Notch","properties":[{"name":"textures","value":"v","signature":"s"}]}`), "Notch")
	f.Add(204, []byte{}, "x")
	f.Add(200, []byte(`{"id":1}`), "x")
	f.Add(503, []byte("down"), "x")
	f.Fuzz(func(t *testing.T, status int, body []byte, user string) {
		p, err := auth.ParseHasJoined(status, body, user)
		if err != nil {
			if !errors.Is(err, auth.ErrNotJoined) && !errors.Is(err, auth.ErrUnavailable) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if status != 200 || !strings.EqualFold(p.Name, user) || p.Name == "" {
			t.Fatalf("accepted status %d, name %q for %q", status, p.Name, user)
		}
	})
}

// A burst of concurrent logins reuses its connections to the session server
// the next time: the client keeps as many idle as logins ran at once, not two
// (each new one would be a TLS handshake with Mojang's).
func TestHasJoinedKeepsABurstsConnections(t *testing.T) {
	eachTransport(t, testHasJoinedKeepsABurstsConnections)
}

func testHasJoinedKeepsABurstsConnections(t *testing.T, dial dialFunc) {
	var opened atomic.Int64
	release := make(chan struct{})
	var inFlight sync.WaitGroup
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Done()
		<-release // every call of a round is open at once
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"069a79f444e94726a5befca90e38aaf5","name":"Notch","properties":[]}`))
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	c := newClient(t, dial, ts.URL, 5*time.Second)
	const burst = 16
	round := func() {
		release = make(chan struct{})
		inFlight.Add(burst)
		var done sync.WaitGroup
		for range burst {
			done.Add(1)
			go func() {
				defer done.Done()
				if _, err := c.HasJoined(context.Background(), "Notch", "hash", netip.Addr{}); err != nil {
					t.Error(err)
				}
			}()
		}
		inFlight.Wait()
		close(release)
		done.Wait()
	}
	round()
	first := opened.Load()
	round()
	if first != burst || opened.Load() != first {
		t.Fatalf("connections opened: %d by the first burst of %d, %d more by the second; want %d and 0", first, burst, opened.Load()-first, burst)
	}
}

// With its own Dial, a client connects through it (the proxy's raw sockets),
// keeps the connection between calls, and Close ends the kept connection.
func TestHasJoinedThroughItsOwnDial(t *testing.T) {
	srv := authtest.New(t)
	acct, hash := joined(t, srv, "Alice")
	var dials atomic.Int32
	closed := make(chan struct{}, 4)
	c, err := auth.NewSessionClient(auth.SessionConfig{BaseURL: srv.URL, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		dials.Add(1)
		conn, err := (&net.Dialer{}).DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return &noticedClose{Conn: conn, closed: closed}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if p, err := c.HasJoined(context.Background(), "Alice", hash, netip.Addr{}); err != nil || p.ID != acct.ID {
			t.Fatalf("HasJoined = %+v, %v", p, err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d dials for three calls, want one kept connection", n)
	}
	c.Close()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close left the kept connection open")
	}
}

type noticedClose struct {
	net.Conn
	closed chan struct{}
}

func (c *noticedClose) Close() error {
	select {
	case c.closed <- struct{}{}:
	default:
	}
	return c.Conn.Close()
}
