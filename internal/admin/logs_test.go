package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/logtap"
)

// The log routes: the history filtered by level, server and player, bad
// filters refused with what to use, and the live stream (the key in ?token=,
// as a browser's EventSource sends it) giving the lines its filter takes.
func TestLogRoutes(t *testing.T) {
	tap := logtap.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}), 0)
	log := slog.New(tap)
	log.Info("player joined", "player", "Steve", "server", "lobby")
	log.Warn("backend state changed", "server", "games")
	log.Debug("routing", "host", "lobby.example.net")
	url, _ := startServe(t, ServerOptions{StatsInterval: time.Hour, Logs: tap})
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", url+path, nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get("/api/v1/logs/history")
	if h := decodeData[[]logtap.Entry](t, body); status != 200 || len(h) != 3 || h[0].Message != "player joined" {
		t.Fatalf("history: %d %s", status, body)
	}
	status, body = get("/api/v1/logs/history?level=warn")
	if h := decodeData[[]logtap.Entry](t, body); status != 200 || len(h) != 1 || h[0].Fields["server"] != "games" {
		t.Fatalf("warn and up: %d %s", status, body)
	}
	status, body = get("/api/v1/logs/history?player=steve&n=5")
	if h := decodeData[[]logtap.Entry](t, body); status != 200 || len(h) != 1 || h[0].Message != "player joined" {
		t.Fatalf("one player's: %d %s", status, body)
	}
	for _, bad := range []string{"?level=loud", "?n=0", "?n=5000", "?target=x"} {
		if status, body = get("/api/v1/logs/history" + bad); status != 400 {
			t.Fatalf("history%s: %d %s", bad, status, body)
		}
	}
	if status, body = get("/api/v1/logs?n=5"); status != 400 {
		t.Fatalf("the live stream takes no n: %d %s", status, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/api/v1/logs?server=lobby&token="+testKey, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); line != ": connected\n" {
		t.Fatalf("first line %q", line)
	}
	log.Info("someone else's line", "server", "games")
	log.Info("player left", "player", "Steve", "server", "lobby")
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		var e logtap.Entry
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
			t.Fatal(err)
		}
		if e.Message != "player left" {
			t.Fatalf("the stream of lobby's lines gave %+v", e)
		}
		return
	}
}

// GET /api/v1/events/recent answers what the bus carried while the API served,
// oldest first, without stats ticks.
func TestRecentEvents(t *testing.T) {
	url, bus := startServe(t, ServerOptions{StatsInterval: 10 * time.Millisecond})
	deadline := time.Now().Add(5 * time.Second)
	for bus.Subscribers() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // Serve subscribes the recent events
	}
	bus.Publish(events.BanCreated, map[string]string{"value": "203.0.113.9"})
	bus.Publish(events.ConfigReload, events.Reload{Reason: "test"})
	for {
		req, _ := http.NewRequest("GET", url+"/api/v1/events/recent", nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		list := decodeData[[]events.Event](t, string(b))
		if len(list) == 2 {
			if list[0].Type != events.BanCreated || list[1].Type != events.ConfigReload {
				t.Fatalf("recent: %+v", list)
			}
			return
		}
		for _, e := range list {
			if e.Type == events.StatsTick {
				t.Fatal("a stats tick among the recent events")
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("recent: %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
