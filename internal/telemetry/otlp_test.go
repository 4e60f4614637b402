package telemetry

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

func TestTracesURL(t *testing.T) {
	cases := map[string]string{
		"http://localhost:4318":              "http://localhost:4318/v1/traces",
		"http://localhost:4318/":             "http://localhost:4318/v1/traces",
		"https://otlp.example.com/v1/traces": "https://otlp.example.com/v1/traces",
		"https://gw.example.com/otlp/traces": "https://gw.example.com/otlp/traces",
		"localhost:4318":                     "",
		"grpc://localhost:4317":              "",
	}
	for in, want := range cases {
		got, err := tracesURL(in)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("tracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestDeadCollectorIsLoggedNotFatal: exports to a collector that refuses
// connections are counted and logged once, and never surface as errors (which
// OpenTelemetry would print to stderr outside our logger).
func TestDeadCollectorIsLoggedNotFatal(t *testing.T) {
	var logs testutil.SyncBuffer
	tr, err := New(Options{
		Config: config.Telemetry{Enabled: true, Endpoint: "http://" + testutil.RefusedAddr(t), SampleRatio: 1, Timeout: config.Duration(time.Second)},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, s := tr.StartSession(context.Background(), SessionInfo{Server: "x"})
		s.End("played", nil)
		if err := tr.Flush(context.Background()); err != nil {
			t.Fatalf("flush surfaced the export failure: %v", err)
		}
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "trace export failed"); n != 1 {
		t.Errorf("logged %d failures, want 1 (throttled):\n%s", n, logs.String())
	}
}
