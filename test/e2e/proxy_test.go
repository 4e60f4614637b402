package e2e

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/proxy"
)

// startProxy runs the proxy on 127.0.0.1:0 in passthrough mode, routing each domain of
// routes to its backend address, and stops it when the test ends. It returns the
// proxy's address. This is the only place the e2e tests touch the proxy's API, so
// it is the one function to change when that API changes.
func startProxy(t *testing.T, routes map[string]string) string {
	t.Helper()
	cfg := config.Default()
	cfg.Bind = "127.0.0.1:0"
	cfg.ServersPath = t.TempDir()
	cfg.Web.DataDir = t.TempDir()
	for domain, addr := range routes {
		cfg.Servers = append(cfg.Servers, &config.Server{
			ID: domain, File: "<e2e>", Name: domain,
			Domains:             []string{domain},
			Addresses:           []config.Address{{Address: addr, Weight: 1}},
			Balance:             "first_available",
			SlowStartAggression: 1,
			ProxyMode:           "passthrough",
			DomainRewrite:       config.DomainRewrite{Mode: "none"},
			DisconnectMessage:   "e2e backend unreachable",
			FullKickPatterns:    config.DefaultFullKickPatterns,
		})
	}
	var logOut io.Writer = io.Discard
	if os.Getenv("INFRARUST_TEST_DEBUG") != "" {
		logOut = os.Stderr
	}
	p, err := proxy.New(proxy.Options{
		Config: cfg,
		Logger: slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Bus:    events.NewBus(),
	})
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	ln, err := net.Listen("tcp", cfg.Bind)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln) }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		if err := p.Shutdown(sctx); err != nil {
			t.Errorf("proxy shutdown: %v", err)
		}
		cancel()
		if err := <-served; err != nil {
			t.Errorf("proxy Serve: %v", err)
		}
	})
	return ln.Addr().String()
}
