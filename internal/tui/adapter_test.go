package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/admin"
)

func TestAdminEventsAdaptsTheSSEStream(t *testing.T) {
	var gotTypes string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotTypes = r.URL.Query().Get("types")
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": keep-alive\n\n")
		fmt.Fprint(w, "event: backend.health_change\n")
		fmt.Fprint(w, `data: {"type":"backend.health_change","timestamp":"2025-06-01T12:00:00Z","data":{"server":"s","address":"a:1","from":"healthy","to":"unhealthy"}}`+"\n\n")
	}))
	defer srv.Close()

	s, err := AdminEvents{C: admin.NewClient(srv.URL, "k")}.Subscribe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != "backend.health_change" || !ev.Time.Equal(t0) || !strings.Contains(string(ev.Data), `"to":"unhealthy"`) {
		t.Fatalf("event %+v", ev)
	}
	for _, typ := range subscribedTypes() {
		if !strings.Contains(gotTypes, string(typ)) {
			t.Errorf("subscription %q lacks %s", gotTypes, typ)
		}
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the server closed: %v", err)
	}
}

func TestAdminEventsSubscribeFailsCleanly(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	if _, err := (AdminEvents{C: admin.NewClient(url, "k")}).Subscribe(context.Background()); err == nil {
		t.Fatal("subscribe to a closed port succeeded")
	}
}

func TestDescribeErr(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&admin.APIError{Status: 404, Code: "NOT_FOUND", Message: "unknown address"}, "NOT_FOUND: unknown address"},
		{fmt.Errorf("drain: %w", &admin.APIError{Status: 500, Message: "boom"}), "boom"},
		{errors.New("plain"), "plain"},
	} {
		if got := describeErr(tc.err); got != tc.want {
			t.Errorf("describeErr(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
