package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPremiumLookup(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		// Mojang's lookup ignores case, as names do.
		name := strings.ToLower(strings.TrimPrefix(r.URL.Path, ProfileLookupPath))
		switch name {
		case "notch":
			w.Write([]byte(`{"id":"069a79f444e94726a5befca90e38aaf5","name":"Notch"}`))
		case "broken":
			w.Write([]byte(`{"id":"xyz","name":"broken"}`))
		case "limited":
			w.WriteHeader(http.StatusTooManyRequests)
		case "gone":
			w.WriteHeader(http.StatusNotFound)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	now := time.Unix(1_800_000_000, 0)
	l, err := NewPremiumLookup(srv.URL, time.Hour, time.Second, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		want bool
	}{{"notch", true}, {"Notch", true}, {"Steve123", false}, {"gone", false}} {
		if got, err := l.IsPremium(ctx, c.name); got != c.want || err != nil {
			t.Errorf("IsPremium(%s) = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	for _, name := range []string{"broken", "limited"} {
		if _, err := l.IsPremium(ctx, name); !errors.Is(err, ErrUnavailable) {
			t.Errorf("IsPremium(%s): %v, want ErrUnavailable", name, err)
		}
	}
	before := calls.Load()
	_, _ = l.IsPremium(ctx, "NOTCH")
	if calls.Load() != before {
		t.Error("a cached answer was asked again")
	}
	_, _ = l.IsPremium(ctx, "limited") // failures are not cached
	if calls.Load() != before+1 {
		t.Error("a failed lookup was cached")
	}
	now = now.Add(2 * time.Hour)
	_, _ = l.IsPremium(ctx, "Notch")
	if calls.Load() != before+2 {
		t.Error("an answer outlived its TTL")
	}
	if _, err := NewPremiumLookup("ftp://x", time.Hour, 0, nil); err == nil {
		t.Error("a non-HTTP API was accepted")
	}
}
