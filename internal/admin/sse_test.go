package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// startServe runs Server.Serve on a real listener and stops it at test end.
func startServe(t *testing.T, opts ServerOptions) (string, *events.Bus) {
	t.Helper()
	if opts.Bus == nil {
		opts.Bus = events.NewBus()
	}
	if opts.Runtime == nil {
		opts.Runtime = newFakeRuntime()
	}
	opts.APIKey = testKey
	opts.Web = config.Web{Bind: "127.0.0.1:0", RequestsPerMinute: 100000}
	s, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), opts.Bus
}

func TestSSEHealthChangeReachesSubscriber(t *testing.T) {
	url, bus := startServe(t, ServerOptions{StatsInterval: time.Hour})
	c := NewClient(url, testKey)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := c.Events(ctx, events.BackendHealthChange)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	// Events returns once the headers arrived, which the server sends after
	// subscribing; Serve keeps the recent events (subscribed before it serves).
	if bus.Subscribers() != 2 {
		t.Fatalf("%d subscribers, want 2 (the recent events', this stream's)", bus.Subscribers())
	}
	bus.Publish(events.PlayerJoin, events.Player{Server: "lobby"}) // filtered out
	bus.Publish(events.BackendHealthChange, events.HealthChange{Server: "lobby", Address: "10.0.0.2:25565", From: "healthy", To: "unhealthy", Reason: "3 connect failures in 10s"})
	ev, err := stream.Next()
	if err != nil {
		t.Fatal(err)
	}
	var hc events.HealthChange
	if err := json.Unmarshal(ev.Data, &hc); err != nil {
		t.Fatal(err)
	}
	if ev.Type != events.BackendHealthChange || ev.Time.IsZero() || hc.To != "unhealthy" || hc.Address != "10.0.0.2:25565" {
		t.Fatalf("event %+v data %+v", ev, hc)
	}
}

func TestSSEStatsTickAndKeepAlive(t *testing.T) {
	rt := newFakeRuntime()
	url, _ := startServe(t, ServerOptions{Runtime: rt, StatsInterval: 10 * time.Millisecond, KeepAlive: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/api/v1/events?types=stats.tick&token="+testKey, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var sawKeepAlive, sawTick bool
	for sc.Scan() && !(sawKeepAlive && sawTick) {
		line := sc.Text()
		switch {
		case line == ": keep-alive":
			sawKeepAlive = true
		case strings.HasPrefix(line, "data: ") && strings.Contains(line, `"type":"stats.tick"`):
			var ev struct {
				Data Stats `json:"data"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil || ev.Data.PlayersOnline != 7 {
				t.Fatalf("stats.tick %q: %v", line, err)
			}
			sawTick = true
		}
	}
	if !sawKeepAlive || !sawTick {
		t.Fatalf("keep-alive %v, stats.tick %v (%v)", sawKeepAlive, sawTick, sc.Err())
	}
}

func TestSSEUnknownTypeIsBadRequest(t *testing.T) {
	env := newTestEnv(t)
	status, _, body := env.call(t, "GET", "/api/v1/events?types=backend.health_change,player.jion", testKey, "")
	if status != 400 || !strings.Contains(body, `unknown event type \"player.jion\"`) {
		t.Fatalf("%d %s", status, body)
	}
}

// A client that connects and never reads must not slow Publish (which the proxy
// calls on every login); once it reads again it is told how much it missed.
func TestSSESlowSubscriberDoesNotBlockAndGetsLagged(t *testing.T) {
	url, bus := startServe(t, ServerOptions{StatsInterval: time.Hour})
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", testKey)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReaderSize(conn, 64<<10)
	// The handler subscribes before it writes anything, so the first comment means
	// the subscription is live.
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, ": connected") {
			break
		}
	}

	payload := strings.Repeat("x", 4096)
	const n = 20000 // ~80 MB: far beyond the socket buffers and the 256-event queue
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < n; i++ {
			bus.Publish(events.PlayerJoin, events.Player{Server: "lobby", Username: payload})
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked behind a subscriber that does not read")
	}

	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var joins int
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before a lagged event (%d joins read): %v", joins, err)
		}
		if strings.HasPrefix(line, "event: player.join") {
			joins++
		}
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"type":"lagged"`) {
			var ev struct {
				Data events.LaggedInfo `json:"data"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Data.Missed == 0 || int(ev.Data.Missed)+joins > n {
				t.Fatalf("lagged missed=%d after %d joins", ev.Data.Missed, joins)
			}
			return
		}
	}
}
