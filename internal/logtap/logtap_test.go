package logtap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// What the tap keeps is what is written: the inner handler gets every line,
// the history keeps the last ones in order with their fields (groups and
// WithAttrs included), and filters by level, server and player.
func TestHistoryKeepsWhatIsWritten(t *testing.T) {
	var out bytes.Buffer
	tap := New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}), 4)
	log := slog.New(tap)
	log.Debug("not written, not kept")
	log.Info("player joined", "player", "Steve", "server", "lobby")
	log.With("component", "admin").Warn("admin action failed", "player", "Alex", "err", fmt.Errorf("boom"))
	log.WithGroup("req").Info("grouped", "path", "/x", slog.Group("sub", "n", 3))
	log.Error("backend down", "server", "games", "after", 2*time.Second)
	log.Info("player left", "player", "Steve", "server", "lobby")
	if strings.Contains(out.String(), "not written") || !strings.Contains(out.String(), "backend down") {
		t.Fatalf("the inner handler wrote:\n%s", out.String())
	}
	h := tap.History(0, Filter{})
	if len(h) != 4 || h[0].Message != "admin action failed" || h[3].Message != "player left" || h[3].Seq != 5 {
		t.Fatalf("history (ring of 4): %+v", h)
	}
	if h[0].Fields["component"] != "admin" || h[0].Fields["err"] != "boom" || h[0].Level != "WARN" {
		t.Fatalf("fields of WithAttrs and errors: %+v", h[0])
	}
	if h[1].Fields["req.path"] != "/x" || h[1].Fields["req.sub.n"] != int64(3) {
		t.Fatalf("grouped fields: %+v", h[1].Fields)
	}
	if h[2].Fields["after"] != "2s" {
		t.Fatalf("a duration: %+v", h[2].Fields)
	}
	if got := tap.History(0, Filter{Level: slog.LevelWarn}); len(got) != 2 || got[1].Message != "backend down" {
		t.Fatalf("warn and up: %+v", got)
	}
	if got := tap.History(0, Filter{Player: "steve"}); len(got) != 1 || got[0].Message != "player left" {
		t.Fatalf("one player's lines: %+v", got)
	}
	if got := tap.History(1, Filter{Server: "games"}); len(got) != 1 || got[0].Message != "backend down" {
		t.Fatalf("one server's lines: %+v", got)
	}
	if got := tap.History(2, Filter{}); len(got) != 2 || got[1].Message != "player left" {
		t.Fatalf("the last 2: %+v", got)
	}
}

// A subscriber follows the lines its filter takes; one that falls behind
// misses lines, is told how many, and never slows the log.
func TestSubscribersFollowWithoutSlowingTheLog(t *testing.T) {
	tap := New(slog.NewTextHandler(io.Discard, nil), 0)
	log := slog.New(tap)
	sub := tap.Subscribe(2, Filter{Level: slog.LevelWarn})
	defer sub.Close()
	start := time.Now()
	for i := range 100 {
		log.Warn("busy", "i", i)
		log.Info("ignored")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("logging waited on a subscriber: %s", took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	e, missed, err := sub.Next(ctx)
	if err != nil || e.Message != "busy" || e.Fields["i"] != int64(0) {
		t.Fatalf("first line: %+v %v", e, err)
	}
	if _, missed2, _ := sub.Next(ctx); missed+missed2 != 98 {
		t.Fatalf("missed %d, want the 98 the buffer of 2 could not hold", missed+missed2)
	}
	sub.Close()
	log.Warn("after close") // must not block or panic
}
