package e2e

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/app"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// startProxy runs the whole of `infrarust serve` (the composition root, as the
// binary does) on loopback ports with the given servers, and stops it when the
// test ends. It returns the proxy's address. The admin API is off: these tests
// speak Minecraft only.
func startProxy(t *testing.T, servers ...*config.Server) string {
	t.Helper()
	return startProxyWith(t, nil, servers...)
}

// startProxyWith is startProxy with a change to infrarust.toml's settings.
func startProxyWith(t *testing.T, mutate func(*config.Config), servers ...*config.Server) string {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Bind = "127.0.0.1:0"
	cfg.ServersPath = filepath.Join(dir, "servers")
	cfg.Web.Enabled = false
	cfg.Web.DataDir = filepath.Join(dir, "data")
	cfg.ShutdownTimeout = config.Duration(5 * time.Second)
	cfg.Servers = servers
	if mutate != nil {
		mutate(cfg)
	}
	level := slog.LevelError + 100
	if os.Getenv("INFRARUST_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Options{
			Config:  cfg,
			Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
			Version: "e2e",
			Ready:   func(p, _ string) { ready <- p },
		})
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve stopped before it was ready: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return addr
}

// passthrough is a server that routes domain to addr in passthrough mode.
func passthrough(domain, addr string) *config.Server {
	return &config.Server{
		ID: domain, File: "<e2e>", Name: domain,
		Domains:             []string{domain},
		Addresses:           []config.Address{{Address: addr, Weight: 1}},
		Balance:             balance.FirstAvailable,
		SlowStartAggression: 1,
		ProxyMode:           config.ModePassthrough,
		DomainRewrite:       config.DomainRewrite{Mode: config.RewriteNone},
		DisconnectMessage:   "e2e backend unreachable",
		FullKickPatterns:    config.DefaultFullKickPatterns,
	}
}
