package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseVerdict(t *testing.T) {
	cases := []struct {
		body    string
		want    Verdict
		wantErr string
	}{
		{"", Verdict{Action: "continue"}, ""},
		{"  \n", Verdict{Action: "continue"}, ""},
		{`{}`, Verdict{Action: "continue"}, ""},
		{`{"action":"allow"}`, Verdict{Action: "continue"}, ""},
		{`{"action":"deny","reason":"no"}`, Verdict{Action: "deny", Reason: "no"}, ""},
		{`{"action":"disconnect","reason":"bye"}`, Verdict{Action: "deny", Reason: "bye"}, ""},
		{`{"action":"redirect","server":"hub","extra":1}`, Verdict{Action: "redirect", Server: "hub"}, ""},
		{`{"action":"limbo"}`, Verdict{Action: "limbo"}, ""},
		{`{"action":"redirect"}`, Verdict{}, "redirect without a server"},
		{`{"action":"ban"}`, Verdict{}, `unknown action "ban"`},
		{`{"action":"deny"} {}`, Verdict{}, "more than one JSON value"},
		{`[1,2]`, Verdict{}, "not a verdict"},
		{`{"action":"deny","reason":"` + strings.Repeat("x", 2000) + `"}`, Verdict{}, "longer than"},
		{`<html>`, Verdict{}, "not a verdict"},
	}
	for _, c := range cases {
		got, err := ParseVerdict([]byte(c.body))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseVerdict(%.40q) err = %v, want %q", c.body, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseVerdict(%.40q) = %+v, %v; want %+v", c.body, got, err, c.want)
		}
	}
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{"", `{"action":"deny","reason":"x"}`, `{"action":"redirect","server":"a"}`, `{"action":5}`, `{`, `null`, `"deny"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseVerdict(b)
		if err != nil {
			return
		}
		switch v.Action {
		case "continue", "deny", "limbo":
		case "redirect":
			if v.Server == "" {
				t.Fatalf("redirect without server from %q", b)
			}
		default:
			t.Fatalf("action %q accepted from %q", v.Action, b)
		}
	})
}

func TestSignAndVerify(t *testing.T) {
	secret, body := []byte("k"), []byte(`{"event":"login"}`)
	sig := Sign(secret, body)
	// Computed independently: printf '{"event":"login"}' | openssl dgst -sha256 -hmac k
	const want = "sha256=137d64edb59cafc94e32ff9a34063dd4b60b6c5bfa8d2477efb47cd932ddd40b"
	if sig != want {
		t.Fatalf("signature %q, want %q", sig, want)
	}
	if !Verify(secret, body, sig) {
		t.Error("own signature does not verify")
	}
	for _, bad := range []string{"", "sha256=", sig[:len(sig)-1] + "0", strings.TrimPrefix(sig, "sha256="), "sha256=zz"} {
		if bad != sig && Verify(secret, body, bad) {
			t.Errorf("Verify accepted %q", bad)
		}
	}
	if Verify([]byte("other"), body, sig) || Verify(secret, []byte(`{"event":"logout"}`), sig) {
		t.Error("Verify accepted a wrong secret or body")
	}
}

// endpoint answers from a script of statuses, one per request (the last repeats).
func endpoint(t *testing.T, statuses ...int) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		w.WriteHeader(statuses[min(i, len(statuses)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func noSleep(context.Context, time.Duration) error { return nil }

func TestNotifierRetries(t *testing.T) {
	cases := []struct {
		name      string
		statuses  []int
		attempts  int
		requests  int32
		delivered uint64
	}{
		{"ok first time", []int{200}, 3, 1, 1},
		{"500 then 204", []int{500, 204}, 3, 2, 1},
		{"429 twice then ok", []int{429, 429, 200}, 3, 3, 1},
		{"always 503", []int{503}, 3, 3, 0},
		{"400 is not retried", []int{400, 200}, 3, 1, 0},
		{"one attempt", []int{500, 200}, 1, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, n := endpoint(t, c.statuses...)
			var waits []time.Duration
			var mu sync.Mutex
			nt := NewNotifier(Endpoint{URL: srv.URL, Timeout: 5 * time.Second}, NotifierOptions{
				Attempts: c.attempts, Workers: 1,
				Sleep: func(_ context.Context, d time.Duration) error {
					mu.Lock()
					waits = append(waits, d)
					mu.Unlock()
					return nil
				},
			})
			if !nt.Notify(&Envelope{ID: "1", Event: "login"}) {
				t.Fatal("Notify refused on an empty queue")
			}
			if err := nt.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			s := nt.Stats()
			if n.Load() != c.requests || s.Delivered != c.delivered || s.Delivered+s.Failed != 1 {
				t.Errorf("requests %d, stats %+v; want %d requests, %d delivered", n.Load(), s, c.requests, c.delivered)
			}
			for i, w := range waits {
				if want := time.Second << i; w != want {
					t.Errorf("wait %d = %v, want %v (doubling from 1s)", i, w, want)
				}
			}
		})
	}
}

func TestNotifierCloseAbandonsWhatItCannotSend(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	var drops atomic.Int32
	nt := NewNotifier(Endpoint{URL: srv.URL, Timeout: time.Hour}, NotifierOptions{Workers: 1, QueueSize: 4, Sleep: noSleep, OnDrop: func() { drops.Add(1) }})
	for i := range 10 {
		nt.Notify(&Envelope{ID: string(rune('a' + i)), Event: "disconnect"})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no time at all to drain
	if err := nt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s := nt.Stats()
	if s.Delivered != 0 || s.Queued != 0 || s.Dropped+s.Failed != 10 || int(drops.Load()) != int(s.Dropped) {
		t.Errorf("stats %+v, drops told %d; want all 10 dropped or failed, queue empty", s, drops.Load())
	}
	if nt.Notify(&Envelope{ID: "late"}) {
		t.Error("Notify accepted an event after Close")
	}
}

func TestDeciderSendsHeadersAndReadsTheAnswer(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		_, _ = w.Write([]byte(`{"action":"redirect","server":"hub"}`))
	}))
	defer srv.Close()
	d := NewDecider(Endpoint{URL: srv.URL, Secret: []byte("k"), Timeout: 5 * time.Second})
	v, err := d.Decide(context.Background(), &Envelope{ID: "abc-1", Event: "server_pre_connect"})
	if err != nil || v != (Verdict{Action: "redirect", Server: "hub"}) {
		t.Fatalf("Decide = %+v, %v", v, err)
	}
	if got.Get(EventHeader) != "server_pre_connect" || got.Get(DeliveryHeader) != "abc-1" || !strings.HasPrefix(got.Get(SignatureHeader), "sha256=") || got.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", got)
	}
}

func TestDeciderBoundsTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"action":"deny","reason":"` + strings.Repeat("x", MaxAnswer) + `"}`))
	}))
	defer srv.Close()
	_, err := NewDecider(Endpoint{URL: srv.URL, Timeout: 5 * time.Second}).Decide(context.Background(), &Envelope{})
	if err == nil || !strings.Contains(err.Error(), "answer longer than") {
		t.Fatalf("err = %v", err)
	}
}
