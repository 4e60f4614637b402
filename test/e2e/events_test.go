package e2e

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/app"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/hooks/hookstest"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/telemetry"
	"github.com/infrarust-go/infrarust/internal/telemetry/telemetrytest"
	"github.com/infrarust-go/infrarust/internal/testutil"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// startWithEvents runs serve with webhooks, tracing and compiled-in handlers.
func startWithEvents(t *testing.T, mutate func(*config.Config), ext *hooks.Registry, logs *testutil.SyncBuffer, servers ...*config.Server) string {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Bind = "127.0.0.1:0"
	cfg.ServersPath = filepath.Join(dir, "servers")
	cfg.Web.Enabled = false
	cfg.Web.DataDir = filepath.Join(dir, "data")
	cfg.ShutdownTimeout = config.Duration(5 * time.Second)
	cfg.Servers = servers
	mutate(cfg)
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Options{
			Config: cfg, Version: "e2e", Extensions: ext,
			Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
			Ready:  func(p, _ string) { ready <- p },
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

// A deciding webhook denies one player and redirects another to a second server,
// for real clients; a compiled-in handler that panics is logged and skipped; the
// session spans reach an OTLP collector with their attributes.
func TestEventsDecideEndToEnd(t *testing.T) {
	h := nmp.Setup(t)
	const v = "1.20.4"
	main := h.StartServer(t, nmp.ServerOptions{Version: v, MOTD: "main", KeepAlive: 250 * time.Millisecond})
	other := h.StartServer(t, nmp.ServerOptions{Version: v, MOTD: "other", KeepAlive: 250 * time.Millisecond})
	play := passthrough("play.e2e.test", main.Addr)
	play.ID = "play"
	alt := passthrough("alt.e2e.test", other.Addr)
	alt.ID = "alt"

	hook := hookstest.NewWebhookServer(t, "s3cret")
	hook.Deny("Mallory", "Mallory is not welcome here")
	hook.Redirect("Rita", "alt")
	collector := telemetrytest.NewCollector(t)
	reg := hooks.NewRegistry()
	hooks.On(reg, "panics", func(context.Context, *hooks.PostLogin) { panic("a broken plugin") })
	var logs testutil.SyncBuffer
	addr := startWithEvents(t, func(c *config.Config) {
		c.Webhooks = []config.Webhook{{URL: hook.URL, Events: []string{"pre_login", "choose_initial_server"}, Secret: "s3cret", Timeout: config.Duration(5 * time.Second), Decide: true, OnError: "allow"}}
		c.Telemetry = config.Telemetry{Enabled: true, Endpoint: collector.Endpoint(), ServiceName: "infrarust-e2e", SampleRatio: 1, Timeout: config.Duration(5 * time.Second)}
	}, reg, &logs, play, alt)

	client := h.StartClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	denied, err := client.Login(ctx, nmp.LoginOptions{Addr: addr, ServerHost: "play.e2e.test", Version: v, Username: "Mallory"})
	if err != nil {
		t.Fatal(err)
	}
	if denied.OK || denied.KickReason != "Mallory is not welcome here" {
		t.Fatalf("the webhook's denial must reach the client: %s", denied.Raw)
	}
	redirected, err := client.Login(ctx, nmp.LoginOptions{Addr: addr, ServerHost: "play.e2e.test", Version: v, Username: "Rita", KeepAlives: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !redirected.OK {
		t.Fatalf("the redirected login: %s", redirected.Raw)
	}
	if _, err := other.Wait(ctx, nmp.Match("join", "Rita")); err != nil {
		t.Fatal(err)
	}
	plain, err := client.Login(ctx, nmp.LoginOptions{Addr: addr, ServerHost: "play.e2e.test", Version: v, Username: "Alex", KeepAlives: 1})
	if err != nil || !plain.OK {
		t.Fatalf("an ordinary login next to a panicking handler: %s %v", plain.Raw, err)
	}
	if _, err := main.Wait(ctx, nmp.Match("join", "Alex")); err != nil {
		t.Fatal(err)
	}
	for _, d := range hook.Deliveries() {
		if !d.Signed {
			t.Fatalf("an unsigned delivery: %+v", d)
		}
	}
	if !strings.Contains(logs.String(), "panic") {
		t.Errorf("the panicking handler was not logged:\n%s", logs.String())
	}
	// Spans are exported in batches: wait for Alex's session, which carries the
	// server, the proxy mode, the client IP, the backend and the outcome, with a
	// dial child.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var session *telemetrytest.Span
		for _, s := range collector.Spans() {
			if s.Attributes[telemetry.AttrPlayer] == "Alex" && s.ParentSpanID == "" {
				session = &s
			}
		}
		if session != nil {
			a := session.Attributes
			if a[telemetry.AttrServer] != "play" || a[telemetry.AttrProxyMode] != "passthrough" || a[telemetry.AttrClientIP] != "127.0.0.1" ||
				a[telemetry.AttrBackend] != main.Addr || a[telemetry.AttrOutcome] != hooks.OutcomePlayed {
				t.Fatalf("session span attributes %v", a)
			}
			dial, wake := false, false
			for _, s := range collector.Spans() {
				dial = dial || (s.ParentSpanID == session.SpanID && s.Name == telemetry.SpanDial)
				wake = wake || (s.ParentSpanID == session.SpanID && s.Name == telemetry.SpanWake)
			}
			if !dial {
				t.Fatal("the session span has no dial child")
			}
			if wake {
				t.Fatal("a server without a [server_manager] is never woken: no server.wake span")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span for Alex reached the collector; spans: %+v, errors: %v", collector.Spans(), collector.Errors())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A notifying webhook that hangs does not slow logins: 200 logins through the
// proxy all land while it never answers, and its queue stays bounded.
func TestDeadNotifyingWebhookNeverSlowsLogins(t *testing.T) {
	b, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: "lobby"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	hook := hookstest.NewWebhookServer(t, "")
	hook.Hang()
	var logs testutil.SyncBuffer
	addr := startWithEvents(t, func(c *config.Config) {
		c.Webhooks = []config.Webhook{{URL: hook.URL, Events: []string{"post_login", "server_connected", "disconnect"}, Timeout: config.Duration(time.Second), Attempts: 2, QueueSize: 32}}
	}, nil, &logs, passthrough("lobby.e2e.test", b.Addr()))
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := fakeLogin(addr, "lobby.e2e.test", fmt.Sprintf("Player%d", i))
			if err != nil || !strings.HasPrefix(text, "You reached lobby") {
				errs <- fmt.Errorf("login %d: %q %v", i, text, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := b.Logins.Load(); n != 200 {
		t.Fatalf("backend saw %d logins, want 200", n)
	}
}

// fakeLogin logs in against a fakemc backend through the proxy and returns its
// greeting (a login disconnect).
func fakeLogin(addr, host, name string) (string, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	out := mc.Handshake{ProtocolVersion: 767, ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	out = append(out, mc.LoginStart{Name: name, HasUUID: true}.Encode(767)...)
	if _, err := c.Write(out); err != nil {
		return "", err
	}
	f, err := mc.ReadFrame(bufio.NewReader(c), mc.MaxFrameSize)
	if err != nil {
		return "", err
	}
	text, _ := mc.ParseLoginDisconnect(f)
	return text, nil
}
