package app

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// The readiness probe fails before the listener is up, passes while serving, and
// fails again as soon as shutdown starts, while live sessions are still draining.
func TestReadinessFollowsStartAndShutdown(t *testing.T) {
	backend, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: "held", OnLogin: func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		_, _ = c.Write(mc.AppendFrame(nil, 0x02, make([]byte, 17))) // login success: the session is live
		_, _ = io.Copy(io.Discard, br)                              // until the player leaves
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()

	dir := t.TempDir()
	servers := filepath.Join(dir, "servers")
	if err := os.Mkdir(servers, 0o755); err != nil {
		t.Fatal(err)
	}
	writeServerFile(t, servers, "held.toml", serverFile(backend.Addr(), "held.test"))
	cfg := config.Default()
	cfg.Bind, cfg.Web.Bind = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Web.DataDir = filepath.Join(dir, "data")
	cfg.ServersPath = servers
	cfg.ShutdownTimeout = config.Duration(30 * time.Second)
	cfg.ActiveHealth.Enabled = false
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
	if err := a.ready.check(); err == nil {
		t.Fatal("ready before the listener is up")
	}
	type addrs struct{ proxy, admin string }
	up := make(chan addrs, 1)
	opts.Ready = func(p, ad string) { up <- addrs{p, ad} }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.run(ctx, opts) }()
	var at addrs
	select {
	case at = <-up:
	case err := <-done:
		t.Fatalf("app stopped before it was ready: %v", err)
	}
	client := admin.NewClient(at.admin, "")
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	if err := client.Ready(rctx); err != nil {
		t.Fatalf("ready while serving: %v", err)
	}

	// A live session holds shutdown open for up to shutdown_timeout.
	player, err := net.DialTimeout("tcp", at.proxy, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer player.Close()
	_ = player.SetDeadline(time.Now().Add(10 * time.Second))
	hello := mc.Handshake{ProtocolVersion: 767, ServerAddress: "held.test", ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	hello = append(hello, mc.LoginStart{Name: "Steve", HasUUID: true}.Encode(767)...)
	if _, err := player.Write(hello); err != nil {
		t.Fatal(err)
	}
	if f, err := mc.ReadFrame(bufio.NewReader(player), mc.MaxFrameSize); err != nil || f.ID != 0x02 {
		t.Fatalf("the player's session did not start: frame %+v, %v", f, err)
	}

	cancel()
	for {
		err := client.Ready(rctx)
		var ae *admin.APIError
		if errors.As(err, &ae) && ae.Code == "NOT_READY" {
			break
		}
		if rctx.Err() != nil {
			t.Fatalf("still ready after shutdown started: %v", err)
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned (%v) while a session was live", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	player.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after the last session ended")
	}
}
