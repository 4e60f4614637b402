package auth_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

const notchAnswer = `{"id":"069a79f444e94726a5befca90e38aaf5","name":"Notch","properties":[]}`

// countingDial dials with Go's net and counts the dials.
func countingDial(n *atomic.Int32) dialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		n.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, address)
	}
}

func hasJoinedNotch(t *testing.T, c *auth.SessionClient) {
	t.Helper()
	p, err := c.HasJoined(context.Background(), "Notch", "h", netip.Addr{})
	if err != nil || p.Name != "Notch" {
		t.Fatalf("HasJoined = %+v, %v", p, err)
	}
}

// Mojang's session server is https: the proxy's own transport shakes hands
// over its Dial and keeps the TLS connection between calls.
func TestHasJoinedOverTLSThroughItsOwnDial(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(notchAnswer))
	}))
	defer ts.Close()
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	var dials atomic.Int32
	c, err := auth.NewSessionClient(auth.SessionConfig{BaseURL: ts.URL, Dial: countingDial(&dials), TLSConfig: &tls.Config{RootCAs: roots}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		hasJoinedNotch(t, c)
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d dials for three calls, want one kept connection", n)
	}

	// Without the test's root the certificate is refused: servers down.
	strict, err := auth.NewSessionClient(auth.SessionConfig{BaseURL: ts.URL, Dial: countingDial(&dials)})
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	if _, err := strict.HasJoined(context.Background(), "Notch", "h", netip.Addr{}); !errors.Is(err, auth.ErrUnavailable) {
		t.Fatalf("untrusted certificate: err = %v, want ErrUnavailable", err)
	}
}

// A kept connection the server closed while it sat idle (without saying so:
// no Connection: close) fails on its next use; the call is made again on a
// new connection instead of kicking the player.
func TestHasJoinedRetriesAConnectionClosedWhileIdle(t *testing.T) {
	base := "http://" + testutil.ServeTCP(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(len(notchAnswer)) + "\r\n\r\n" + notchAnswer))
		// and close, as an idle timeout on the server would
	})
	var dials atomic.Int32
	c := newClient(t, countingDial(&dials), base, 5*time.Second)
	hasJoinedNotch(t, c)
	time.Sleep(50 * time.Millisecond) // the close has arrived
	hasJoinedNotch(t, c)
	if n := dials.Load(); n != 2 {
		t.Fatalf("%d dials, want 2 (the second call finds its kept connection closed)", n)
	}
}

// A chunked answer (no Content-Length) is read to its end and its connection
// kept, as a fixed-length one is.
func TestHasJoinedKeepsAChunkedAnswersConnection(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(notchAnswer[:10]))
		w.(http.Flusher).Flush() // headers out without a length: chunked
		_, _ = w.Write([]byte(notchAnswer[10:]))
	}))
	defer ts.Close()
	var dials atomic.Int32
	c := newClient(t, countingDial(&dials), ts.URL, 5*time.Second)
	for range 3 {
		hasJoinedNotch(t, c)
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d dials for three chunked answers, want one kept connection", n)
	}
}

// An answer whose head never ends is cut off at its quota: servers down,
// at once rather than at the timeout, and nothing held past the quota.
func TestHasJoinedCutsOffAnEndlessHead(t *testing.T) {
	base := "http://" + testutil.ServeTCP(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\n"))
		line := []byte("X-Padding: " + strings.Repeat("x", 1000) + "\r\n")
		for {
			if _, err := c.Write(line); err != nil {
				return
			}
		}
	})
	c := newClient(t, (&net.Dialer{}).DialContext, base, 20*time.Second)
	_, err := c.HasJoined(context.Background(), "Notch", "h", netip.Addr{})
	if !errors.Is(err, auth.ErrUnavailable) || !strings.Contains(err.Error(), "quota") {
		t.Fatalf("err = %v, want ErrUnavailable for the answer's quota", err)
	}
}

// Early Hints (103) before the answer are skipped, and the connection is
// kept in step: the next call reads its own answer, not a late one. Endless
// informational answers are an error, not a loop.
func TestHasJoinedSkipsInformationalAnswers(t *testing.T) {
	answer := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(notchAnswer)) + "\r\n\r\n" + notchAnswer
	hints := "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
	base := "http://" + testutil.ServeTCP(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			if _, err := c.Write([]byte(hints + answer)); err != nil {
				return
			}
		}
	})
	var dials atomic.Int32
	c := newClient(t, countingDial(&dials), base, 5*time.Second)
	for range 3 {
		hasJoinedNotch(t, c)
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d dials for three calls, want one kept connection", n)
	}

	endless := "http://" + testutil.ServeTCP(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		for {
			if _, err := c.Write([]byte(hints)); err != nil {
				return
			}
		}
	})
	_, err := newClient(t, (&net.Dialer{}).DialContext, endless, 20*time.Second).HasJoined(context.Background(), "Notch", "h", netip.Addr{})
	if !errors.Is(err, auth.ErrUnavailable) || !strings.Contains(err.Error(), "informational") {
		t.Fatalf("endless 103s: err = %v, want ErrUnavailable naming the informational answers", err)
	}
}
