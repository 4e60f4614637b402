package admin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// serveFrom sends one request as if from ip (the limiter keys on the TCP peer).
func (e *testEnv) serveFrom(ip, method, path, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = ip + ":40000"
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

func TestFailedAuthIsLimitedStrictlyAndLearnsNothing(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Web.RequestsPerMinute = 60 })
	const guesser = "198.51.100.9"
	for i := range FailedAuthPerMinute {
		if rec := env.serveFrom(guesser, "GET", "/api/v1/servers", fmt.Sprintf("guess-guess-guess-%04d", i)); rec.Code != 401 {
			t.Fatalf("guess %d: status %d, want 401", i, rec.Code)
		}
	}
	rec := env.serveFrom(guesser, "GET", "/api/v1/servers", "guess-guess-guess-last")
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), `"code":"RATE_LIMITED"`) {
		t.Fatalf("guess past the budget: %d %s, want 429 RATE_LIMITED", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Retry-After"); got != "6" {
		t.Errorf("Retry-After %q, want 6 (one attempt per 6 s at %d/min)", got, FailedAuthPerMinute)
	}
	// While locked out, every wrong or missing key gets 429, with no hint.
	for _, k := range []string{"guess-guess-guess-more", ""} {
		if rec := env.serveFrom(guesser, "GET", "/api/v1/servers", k); rec.Code != 429 {
			t.Fatalf("key %q during lock-out: status %d, want 429", k, rec.Code)
		}
	}
	// The right key is never refused for the failures before it: the operator's
	// CLI and `top` behind the same address (a NAT, a bastion) keep working.
	if rec := env.serveFrom(guesser, "GET", "/api/v1/servers", testKey); rec.Code != 200 {
		t.Fatalf("right key during lock-out: status %d, want 200", rec.Code)
	}
	// An operator on another address is not affected at all.
	if rec := env.serveFrom("192.0.2.1", "GET", "/api/v1/servers", testKey); rec.Code != 200 {
		t.Fatalf("operator on another IP: status %d, want 200", rec.Code)
	}
	env.clock.Advance(5 * time.Second)
	if rec := env.serveFrom(guesser, "GET", "/api/v1/servers", "guess-guess-guess-again"); rec.Code != 429 {
		t.Fatalf("a wrong key after 5 s: status %d, want 429", rec.Code)
	}
	env.clock.Advance(time.Second)
	if rec := env.serveFrom(guesser, "GET", "/api/v1/servers", "guess-guess-guess-again"); rec.Code != 401 {
		t.Fatalf("a wrong key after 6 s: status %d, want 401 (one attempt refilled)", rec.Code)
	}
}

func TestAuthenticatedRequestsSpendTheirOwnBudget(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Web.RequestsPerMinute = 60 })
	const op = "192.0.2.7"
	// A burst of a full minute's quota, far above the failed-attempt budget.
	for i := range 60 {
		if rec := env.serveFrom(op, "GET", "/api/v1/servers", testKey); rec.Code != 200 {
			t.Fatalf("authenticated request %d: status %d, want 200", i, rec.Code)
		}
	}
	rec := env.serveFrom(op, "GET", "/api/v1/stats", testKey)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" ||
		!strings.Contains(rec.Body.String(), "requests_per_minute") {
		t.Fatalf("61st request: %d Retry-After %q %s; want 429, 1 s and the config key to raise", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	// Spending the request budget did not spend the failed-attempt budget: a typo
	// is still told it is a typo (401), not throttled.
	if rec := env.serveFrom(op, "GET", "/api/v1/servers", "typo-typo-typo-typo"); rec.Code != 401 {
		t.Fatalf("wrong key after the burst: status %d, want 401", rec.Code)
	}
	env.clock.Advance(time.Second)
	if rec := env.serveFrom(op, "GET", "/api/v1/servers", testKey); rec.Code != 200 {
		t.Fatalf("one second later: status %d, want 200", rec.Code)
	}
}

func TestHealthSpendsNoQuota(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Web.RequestsPerMinute = 2 })
	const host = "192.0.2.8"
	// An uptime checker on the operator's host polls health far above the limit...
	for i := range 500 {
		if rec := env.serveFrom(host, "GET", "/api/v1/health", ""); rec.Code != 200 {
			t.Fatalf("health %d: status %d, want 200", i, rec.Code)
		}
	}
	// ...and the operator still has the whole quota.
	for i := range 2 {
		if rec := env.serveFrom(host, "GET", "/api/v1/servers", testKey); rec.Code != 200 {
			t.Fatalf("operator request %d after the health polls: status %d, want 200", i, rec.Code)
		}
	}
	if rec := env.serveFrom(host, "GET", "/api/v1/servers", testKey); rec.Code != 429 {
		t.Fatalf("third request at 2/min: status %d, want 429", rec.Code)
	}
	// A throttled client can still be seen alive.
	if rec := env.serveFrom(host, "GET", "/api/v1/health", ""); rec.Code != 200 {
		t.Fatalf("health while throttled: status %d, want 200", rec.Code)
	}
}

func TestRequestsPerMinuteZeroIsOff(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Web.RequestsPerMinute = 0 })
	for i := range 1000 {
		if rec := env.serveFrom("192.0.2.9", "GET", "/api/v1/servers", testKey); rec.Code != 200 {
			t.Fatalf("request %d with requests_per_minute = 0: status %d, want 200 (0 means off)", i, rec.Code)
		}
	}
	// Off means the authenticated limit; wrong keys are still limited.
	for range FailedAuthPerMinute {
		env.serveFrom("192.0.2.9", "GET", "/api/v1/servers", "guess-guess-guess-guess")
	}
	if rec := env.serveFrom("192.0.2.9", "GET", "/api/v1/servers", "guess-guess-guess-guess"); rec.Code != 429 {
		t.Fatalf("guessing with requests_per_minute = 0: status %d, want 429", rec.Code)
	}
}

func TestLimiterMemoryIsBoundedAndForgetsGuessersLast(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newClientLimits(60)
	l.max = 100
	const guesser = "198.51.100.1"
	for range FailedAuthPerMinute {
		l.failed(guesser, now)
	}
	if locked, _ := l.lockedOut(guesser, now); !locked {
		t.Fatal("guesser not locked out after its budget")
	}
	// A spray of distinct authenticated clients, none back at full burst.
	for i := range 5000 {
		ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		if ok, _ := l.allow(ip, now); !ok {
			t.Fatalf("first request of %s refused", ip)
		}
		if n := l.tracked(); n > l.max {
			t.Fatalf("tracking %d clients, cap %d", n, l.max)
		}
	}
	if locked, _ := l.lockedOut(guesser, now); !locked {
		t.Fatal("the spray made the limiter forget the guesser")
	}
	// A spray of guessers is bounded too.
	for i := range 5000 {
		l.failed(fmt.Sprintf("172.16.%d.%d", i>>8&255, i&255), now)
	}
	if n := l.tracked(); n > l.max {
		t.Fatalf("tracking %d clients after a guesser spray, cap %d", n, l.max)
	}
}

// An IPv6 guesser cannot buy a fresh budget by moving to another address of its
// /64: the limiter counts the /64, as the players' rate limit does; a client on
// another /64 is not affected.
func TestFailedAuthBudgetIsPerIPv6Slash64(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Web.RequestsPerMinute = 60 })
	for i := range FailedAuthPerMinute {
		ip := fmt.Sprintf("[2001:db8:1:2::%x]", i+1) // a new address each time
		if rec := env.serveFrom(ip, "GET", "/api/v1/servers", "guess-guess-guess-guess"); rec.Code != 401 {
			t.Fatalf("guess %d from %s: status %d, want 401", i, ip, rec.Code)
		}
	}
	if rec := env.serveFrom("[2001:db8:1:2:ffff::1]", "GET", "/api/v1/servers", "guess-guess-guess-next"); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("another address of the same /64: status %d, want 429", rec.Code)
	}
	if rec := env.serveFrom("[2001:db8:1:3::1]", "GET", "/api/v1/servers", testKey); rec.Code != 200 {
		t.Fatalf("a client on another /64: status %d, want 200", rec.Code)
	}
}

func TestLimiterKey(t *testing.T) {
	for in, want := range map[string]string{
		"198.51.100.9":         "198.51.100.9",
		"::ffff:198.51.100.9":  "::ffff:198.51.100.9", // an IPv4 client on a dual-stack socket stays itself
		"2001:db8:1:2::7":      "2001:db8:1:2::/64",
		"2001:db8:1:2:a:b:c:d": "2001:db8:1:2::/64",
		"not an address":       "not an address",
	} {
		if got := limiterKey(in); got != want {
			t.Errorf("limiterKey(%q) = %q, want %q", in, got, want)
		}
	}
}
