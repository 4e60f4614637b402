package admin

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadyFollowsTheProxyWithoutAKey(t *testing.T) {
	var reason atomic.Value
	reason.Store("starting: the listener is not up yet")
	env := newTestEnv(t, func(o *ServerOptions) {
		o.Ready = func() error {
			if r := reason.Load().(string); r != "" {
				return errors.New(r)
			}
			return nil
		}
	})
	steps := []struct {
		reason     string
		wantStatus int
		wantBody   string
	}{
		{"starting: the listener is not up yet", http.StatusServiceUnavailable, `"NOT_READY"`},
		{"", http.StatusOK, `{"data":{"status":"ready"}}`},
		{"shutting down", http.StatusServiceUnavailable, "shutting down"},
	}
	for _, s := range steps {
		reason.Store(s.reason)
		status, hdr, body := env.call(t, http.MethodGet, "/api/v1/ready", "", "")
		if status != s.wantStatus || !strings.Contains(body, s.wantBody) {
			t.Errorf("reason %q: got %d %s, want %d containing %s", s.reason, status, body, s.wantStatus, s.wantBody)
		}
		if hdr.Get("WWW-Authenticate") != "" {
			t.Errorf("reason %q: the probe asked for a key", s.reason)
		}
	}

	c := NewClient(env.http.URL, "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reason.Store("")
	if err := c.Ready(ctx); err != nil {
		t.Fatalf("client Ready on a ready proxy: %v", err)
	}
	reason.Store("shutting down")
	var ae *APIError
	if err := c.Ready(ctx); !errors.As(err, &ae) || ae.Code != "NOT_READY" || ae.Status != http.StatusServiceUnavailable {
		t.Fatalf("client Ready while shutting down = %v, want a NOT_READY APIError", err)
	}
}

func TestReadyWithoutAReadinessSourceIsReady(t *testing.T) {
	env := newTestEnv(t)
	if status, _, body := env.call(t, http.MethodGet, "/api/v1/ready", "", ""); status != http.StatusOK {
		t.Fatalf("got %d %s, want 200", status, body)
	}
}
