package app

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// On shutdown the readiness check fails at once while the proxy keeps
// answering players for shutdown_delay; then the listener closes.
func TestShutdownDelayKeepsAcceptingWithReadinessOff(t *testing.T) {
	be := startBackend(t, "lobby")
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers")
	if err := os.Mkdir(servers, 0o755); err != nil {
		t.Fatal(err)
	}
	writeServerFile(t, servers, "lobby.toml", "domains = [\"lobby.test\"]\naddresses = [\""+be.Addr()+"\"]\n")
	cfg := config.Default()
	cfg.Bind, cfg.Web.Bind = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Web.DataDir = filepath.Join(dir, "data")
	cfg.ServersPath = servers
	cfg.StatusCache.TTL = 0
	cfg.ShutdownDelay = config.Duration(1500 * time.Millisecond)
	loaded, errs := config.LoadServersDir(servers, cfg)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cfg.Servers = loaded
	opts := Options{Config: cfg, Logger: slog.New(slog.DiscardHandler), Version: "test"}
	a, err := build(opts)
	if err != nil {
		t.Fatal(err)
	}
	type addrs struct{ proxy, admin string }
	up := make(chan addrs, 1)
	opts.Ready = func(p, ad string) { up <- addrs{p, ad} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.run(ctx, opts) }()
	var at addrs
	select {
	case at = <-up:
	case err := <-done:
		cancel()
		t.Fatalf("app stopped before it was ready: %v", err)
	}
	ready := func() int {
		resp, err := http.Get("http://" + at.admin + "/api/v1/ready")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ping := func() error {
		c, err := net.DialTimeout("tcp", at.proxy, time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		_, _, err = mc.QueryStatus(c, "lobby.test", 25565, 767)
		return err
	}
	if code := ready(); code != http.StatusOK {
		t.Fatalf("ready before shutdown: %d", code)
	}
	cancel()
	deadline := time.Now().Add(time.Second)
	for ready() == http.StatusOK && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if code := ready(); code != http.StatusServiceUnavailable {
		t.Fatalf("ready during shutdown_delay: %d, want 503", code)
	}
	if err := ping(); err != nil {
		t.Fatalf("a player during shutdown_delay was not served: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after shutdown_delay")
	}
	if err := ping(); err == nil {
		t.Fatal("the proxy still answers after shutting down")
	}
}
