package admin

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const testViewerKey = "0123456789abcdef-viewer"

// req sends one request with optional headers (a cookie, a CSRF token).
func (e *testEnv) req(t *testing.T, method, path, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, err := http.NewRequestWithContext(ctx, method, e.http.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	resp, err := e.http.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// A browser signs in with the key once and is known by an HttpOnly,
// SameSite=Strict cookie (Secure behind TLS); with it he reads, and changes
// only with the session's CSRF token; signing out ends the cookie. A viewer
// key (by header or by session) reads every route and changes nothing.
func TestSessionsCSRFAndViewers(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Web.ViewerKeys = []string{testViewerKey} })

	resp, body := env.req(t, "POST", "/api/v1/session", `{"key":"`+testKey+`"}`, map[string]string{"X-Forwarded-Proto": "https"})
	info := decodeData[SessionInfo](t, body)
	cookies := resp.Cookies()
	if resp.StatusCode != 200 || info.Role != "admin" || info.CSRF == "" || len(cookies) != 1 {
		t.Fatalf("sign in: %d %s %v", resp.StatusCode, body, cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || !c.Secure || c.Name != sessionCookie || strings.Contains(body, c.Value) {
		t.Fatalf("the session cookie: %+v", c)
	}
	jar := map[string]string{"Cookie": sessionCookie + "=" + c.Value}
	if resp, body = env.req(t, "GET", "/api/v1/players", "", jar); resp.StatusCode != 200 {
		t.Fatalf("a read with the cookie: %d %s", resp.StatusCode, body)
	}
	if resp, body = env.req(t, "GET", "/api/v1/session", "", jar); resp.StatusCode != 200 || decodeData[SessionInfo](t, body).CSRF != info.CSRF {
		t.Fatalf("the session: %d %s", resp.StatusCode, body)
	}
	if resp, body = env.req(t, "POST", "/api/v1/players/Notch/kick", "", jar); resp.StatusCode != 403 || !strings.Contains(body, "CSRF") {
		t.Fatalf("a change with the cookie and no CSRF token: %d %s", resp.StatusCode, body)
	}
	bad := map[string]string{"Cookie": jar["Cookie"], csrfHeader: strings.Repeat("0", len(info.CSRF))}
	if resp, body = env.req(t, "POST", "/api/v1/players/Notch/kick", "", bad); resp.StatusCode != 403 {
		t.Fatalf("a change with a wrong CSRF token: %d %s", resp.StatusCode, body)
	}
	good := map[string]string{"Cookie": jar["Cookie"], csrfHeader: info.CSRF}
	if resp, body = env.req(t, "POST", "/api/v1/players/Notch/kick", "", good); resp.StatusCode != 200 {
		t.Fatalf("a change with the cookie and its token: %d %s", resp.StatusCode, body)
	}
	if resp, body = env.req(t, "DELETE", "/api/v1/session", "", good); resp.StatusCode != 200 {
		t.Fatalf("sign out: %d %s", resp.StatusCode, body)
	}
	if resp, body = env.req(t, "GET", "/api/v1/players", "", jar); resp.StatusCode != 401 {
		t.Fatalf("the cookie after sign-out: %d %s", resp.StatusCode, body)
	}

	viewer := map[string]string{"Authorization": "Bearer " + testViewerKey}
	if resp, body = env.req(t, "GET", "/api/v1/bans", "", viewer); resp.StatusCode != 200 {
		t.Fatalf("a viewer's read: %d %s", resp.StatusCode, body)
	}
	for _, change := range [][3]string{
		{"POST", "/api/v1/bans", `{"type":"ip","value":"203.0.113.9"}`},
		{"POST", "/api/v1/players/jeb_/kick", ""},
		{"POST", "/api/v1/servers/lobby/backends/10.0.0.1%3A25565/drain", ""},
		{"DELETE", "/api/v1/bans/ip/203.0.113.9", ""},
	} {
		if resp, body = env.req(t, change[0], change[1], change[2], viewer); resp.StatusCode != 403 || !strings.Contains(body, "viewer") {
			t.Fatalf("a viewer's %s %s: %d %s", change[0], change[1], resp.StatusCode, body)
		}
	}
	resp, body = env.req(t, "POST", "/api/v1/session", `{"key":"`+testViewerKey+`"}`, nil)
	vinfo := decodeData[SessionInfo](t, body)
	if resp.StatusCode != 200 || vinfo.Role != "viewer" || resp.Cookies()[0].Secure {
		t.Fatalf("a viewer's sign-in over plain HTTP: %d %s", resp.StatusCode, body)
	}
	vjar := map[string]string{"Cookie": sessionCookie + "=" + resp.Cookies()[0].Value, csrfHeader: vinfo.CSRF}
	if resp, body = env.req(t, "POST", "/api/v1/players/jeb_/kick", "", vjar); resp.StatusCode != 403 || !strings.Contains(body, "viewer") {
		t.Fatalf("a viewer's change by session, token and all: %d %s", resp.StatusCode, body)
	}
	env.rt.mu.Lock()
	kicks := len(env.rt.kicks)
	env.rt.mu.Unlock()
	if kicks != 1 {
		t.Fatalf("%d kicks went through, want the admin's one", kicks)
	}
}

// Wrong keys at the sign-in spend the same guess budget as wrong bearer keys:
// after it, even the right key waits (429), so the form is no oracle.
func TestSignInGuessBudget(t *testing.T) {
	env := newTestEnv(t)
	var last int
	for i := range 40 {
		resp, _ := env.req(t, "POST", "/api/v1/session", `{"key":"wrong-key-number-`+string(rune('a'+i%26))+`"}`, nil)
		last = resp.StatusCode
		if last == 429 {
			break
		}
		if last != 401 {
			t.Fatalf("a wrong key: %d", last)
		}
	}
	if last != 429 {
		t.Fatal("40 wrong keys were never rate limited")
	}
	if resp, _ := env.req(t, "POST", "/api/v1/session", `{"key":"`+testKey+`"}`, nil); resp.StatusCode != 429 {
		t.Fatalf("the right key during the lockout: %d", resp.StatusCode)
	}
	for _, bad := range []string{``, `{}`, `{"key":1}`, `{"key":"x","more":true}`} {
		env.clock.Advance(time.Hour)
		if resp, body := env.req(t, "POST", "/api/v1/session", bad, nil); resp.StatusCode != 400 && resp.StatusCode != 401 {
			t.Fatalf("sign-in body %q: %d %s", bad, resp.StatusCode, body)
		}
	}
}
